"""The incident playbook: who does what once a vendor's disclosure is loaded, against a clock.

Configured per tenant (``playbooks:`` in the config; ``default`` for platform-wide disclosures
and tenants without their own)::

    playbooks:
      default:
        deadline_hours: 24
        check_logs: {owner: "ops on call", contact: "ops@example.com"}
        decide: {owner: "DPO", contact: "dpo@example.com"}
        notify_customers: {owner: "customer success"}
        notify_body: {owner: "DPO"}
        notified_body: "the supervisory authority (BSI)"

Loading a disclosure for real (``tiergate exposure assess --record``, the dashboard's form)
starts its clock: a ``loaded`` step. Each later step (``assessed``, ``decided`` reportable or not
with a reason, ``notified`` whom, ``closed``) is appended as a ``disclosure_step`` audit event
with its time and actor, in the hash chain; the timeline is read back from those events. A drill
(``audit.drill``) writes the same steps as ``disclosure_drill_step`` events with ``drill: true``,
so no count of real incidents ever includes one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncEngine

from audit.errors import AuditError
from audit.models import AuditEvent
from audit.timeutil import from_us

__all__ = ["DRILL_KIND", "STEP_KIND", "STEPS", "Playbook", "PlaybookError", "PlaybookRegister", "PlaybookRole", "Step",
           "Timeline", "disclosure_tenant", "format_span", "read_timeline", "record_step"]  # fmt: skip

STEP_KIND = "disclosure_step"
DRILL_KIND = "disclosure_drill_step"  # a drill's steps: never counted as a real incident's
StepName = Literal["loaded", "assessed", "decided", "notified", "closed"]
STEPS: tuple[str, ...] = ("loaded", "assessed", "decided", "notified", "closed")
# Which playbook role owns each step (``notified`` depends on the party told).
_ROLE = {"loaded": "check_logs", "assessed": "check_logs", "decided": "decide", "closed": "decide"}
_E = AuditEvent.__table__
_STRICT = ConfigDict(extra="forbid", frozen=True)


class PlaybookError(AuditError):
    """A step that cannot be recorded as asked (the message says why)."""


class PlaybookRole(BaseModel):
    model_config = _STRICT

    owner: str = Field(min_length=1, max_length=200)
    """Who does it: a person or a role people can find at 3 a.m. (``DPO``, ``ops on call``)."""
    backup: str | None = Field(None, min_length=1, max_length=200)
    """Who does it when the owner cannot."""
    contact: str | None = Field(None, max_length=500)
    """How to reach them (e-mail, phone, pager)."""


class Playbook(BaseModel):
    model_config = _STRICT

    deadline_hours: float = Field(24, gt=0, le=24 * 30)
    """Hours from loading the disclosure to the reportability decision and its notifications."""
    check_logs: PlaybookRole
    """Checks the logs: loads the disclosure and runs the assessment."""
    decide: PlaybookRole
    """Decides whether the incident is reportable, and closes it."""
    notify_customers: PlaybookRole
    """Contacts the affected customers (the tenants the assessment lists)."""
    notify_body: PlaybookRole | None = None
    """Contacts the notified body / supervisory authority (None: the decider does)."""
    notified_body: str | None = Field(None, max_length=500)
    """Which body is notified of a reportable incident (name, case portal)."""

    def role_for(self, step: str, party: str | None = None) -> PlaybookRole:
        if step == "notified":
            return self.notify_customers if party == "customers" else (self.notify_body or self.decide)
        role: PlaybookRole = getattr(self, _ROLE[step])
        return role


class PlaybookRegister(BaseModel):
    model_config = _STRICT

    default: Playbook | None = None
    """The playbook for platform-wide disclosures and for tenants without their own."""
    tenants: dict[str, Playbook] = Field(default_factory=dict)
    """Tenant -> that tenant's own playbook."""

    def for_tenant(self, tenant: str | None) -> Playbook | None:
        return self.tenants.get(tenant, self.default) if tenant is not None else self.default


@dataclass(frozen=True, slots=True)
class Step:
    step: str
    at: datetime
    actor: str
    drill: bool
    detail: dict[str, Any]  # reportable, reason, party, to, verdict, took_ms ...

    @property
    def reportable(self) -> bool | None:
        value = self.detail.get("reportable")
        return value if isinstance(value, bool) else None


@dataclass(frozen=True, slots=True)
class Timeline:
    disclosure_id: int
    steps: tuple[Step, ...]
    playbook: Playbook | None
    now: datetime

    @property
    def started(self) -> datetime | None:
        return self.steps[0].at if self.steps and self.steps[0].step == "loaded" else None

    @property
    def drill(self) -> bool:
        return any(s.drill for s in self.steps)

    @property
    def deadline(self) -> datetime | None:
        hours = self.playbook.deadline_hours if self.playbook else 24
        return self.started + timedelta(hours=hours) if self.started else None

    def last(self, step: str) -> Step | None:
        return next((s for s in reversed(self.steps) if s.step == step), None)

    @property
    def done(self) -> bool:
        """The clock stops once it is decided and, if reportable, someone was notified (or closed)."""
        decided = self.last("decided")
        if self.last("closed") is not None:
            return True
        if decided is None:
            return False
        return decided.reportable is False or self.last("notified") is not None

    @property
    def stopped_at(self) -> datetime | None:
        if not self.done:
            return None
        ends = [s.at for s in self.steps if s.step in ("decided", "notified", "closed")]
        return max(ends) if ends else None

    def time_left(self) -> timedelta | None:
        """Until the deadline (negative: overdue), from now or from when the clock stopped."""
        if self.deadline is None:
            return None
        return self.deadline - (self.stopped_at or self.now)

    def rows(self) -> list[dict[str, Any]]:
        """Each step with how long it took since the one before and since the clock started."""
        out = []
        prev = self.started
        for s in self.steps:
            role = self.playbook.role_for(s.step, s.detail.get("party")) if self.playbook else None
            out.append({"step": s.step, "at": s.at, "actor": s.actor, "drill": s.drill,
                        "took_s": (s.at - prev).total_seconds() if prev else 0.0,
                        "since_start_s": (s.at - self.started).total_seconds() if self.started else 0.0,
                        "owner": role.owner if role else None, "detail": s.detail})  # fmt: skip
            prev = s.at
        return out

    def as_dict(self) -> dict[str, Any]:
        left = self.time_left()
        return {
            "disclosure_id": self.disclosure_id, "drill": self.drill,
            "started": self.started.isoformat() if self.started else None,
            "deadline": self.deadline.isoformat() if self.deadline else None,
            "done": self.done, "seconds_left": left.total_seconds() if left is not None else None,
            "steps": [{**r, "at": r["at"].isoformat()} for r in self.rows()],
        }  # fmt: skip


def _pattern(disclosure_id: int) -> list[str]:
    # Details are canonical JSON (sorted keys, no spaces): the id is followed by "," or "}".
    return [f'%"disclosure_id":{disclosure_id},%', f'%"disclosure_id":{disclosure_id}}}']


async def read_timeline(engine: AsyncEngine, disclosure_id: int, playbook: Playbook | None,
                        now: datetime | None = None) -> Timeline:  # fmt: skip
    stmt = (select(_E.c.created_us, _E.c.detail).where(_E.c.kind.in_((STEP_KIND, DRILL_KIND)))
            .where(or_(*(_E.c.detail.like(p) for p in _pattern(disclosure_id)))).order_by(_E.c.seq))  # fmt: skip
    async with engine.connect() as conn:
        rows = (await conn.execute(stmt)).all()
    steps = []
    for r in rows:
        d = json.loads(r.detail)
        if d.get("disclosure_id") != disclosure_id:
            continue
        at = datetime.fromisoformat(d["at"]) if isinstance(d.get("at"), str) else from_us(r.created_us)
        rest = {k: v for k, v in d.items() if k not in ("disclosure_id", "step", "at", "actor", "drill")}
        steps.append(Step(str(d["step"]), at, str(d.get("actor", "")), d.get("drill") is True, rest))
    return Timeline(disclosure_id, tuple(steps), playbook, now or datetime.now(UTC))


def _text(value: str | None, field: str, limit: int = 2000) -> str:
    if value is None or not value.strip() or len(value) > limit or not value.isprintable():
        raise PlaybookError(f"{field}: 1 to {limit} printable characters required")
    return value.strip()


async def record_step(store: Any, disclosure_id: int, step: str, *, actor: str,
                      playbook: Playbook | None, reportable: bool | None = None,
                      reason: str | None = None, party: str | None = None, to: str | None = None,
                      drill: bool = False, extra: dict[str, Any] | None = None,
                      now: datetime | None = None) -> Step:  # fmt: skip
    """Append one step as an audit event, after checking it follows the playbook's order."""
    if step not in STEPS:
        raise PlaybookError(f"unknown step {step!r}; expected one of {', '.join(STEPS)}")
    actor = _text(actor, "actor", 200)
    at = now or datetime.now(UTC)
    timeline = await read_timeline(store.engine, disclosure_id, playbook, at)
    detail: dict[str, Any] = {"disclosure_id": disclosure_id, "step": step, "actor": actor,
                              "at": at.isoformat(), "drill": drill or timeline.drill}  # fmt: skip
    if step == "loaded":
        if timeline.steps:
            raise PlaybookError(f"disclosure {disclosure_id}: its clock was started already")
        detail["deadline_hours"] = playbook.deadline_hours if playbook else 24
    else:
        if timeline.started is None:
            raise PlaybookError(f"disclosure {disclosure_id}: no clock was started for it (load it "
                                "with `tiergate exposure assess --record`, or from the dashboard)")  # fmt: skip
        if timeline.last("closed") is not None:
            raise PlaybookError(f"disclosure {disclosure_id} is closed")
        if timeline.drill and not drill:
            drill = True  # a step on a drill is part of the drill, whoever records it
    if step == "decided":
        if timeline.last("assessed") is None:
            raise PlaybookError("decide after the assessment: record `assessed` first")
        if reportable is None:
            raise PlaybookError("decided: say whether it is reportable (yes or no)")
        detail |= {"reportable": reportable, "reason": _text(reason, "reason")}
    elif step == "notified":
        if timeline.last("decided") is None:
            raise PlaybookError("notify after the decision: record `decided` first")
        if party not in ("customers", "body"):
            raise PlaybookError("notified: party must be customers or body")
        detail |= {"party": party, "to": _text(to, "to")}
    elif reason is not None:
        detail["reason"] = _text(reason, "reason")
    if playbook is not None:
        role = playbook.role_for(step, party)
        named = {role.owner.casefold(), (role.backup or "").casefold()}
        # Anyone may act in an incident; the timeline shows who the playbook expected.
        detail["by_owner"] = any(n and n in actor.casefold() for n in named)
    detail |= extra or {}
    detail["drill"] = drill or timeline.drill
    await store.record_event(DRILL_KIND if detail["drill"] else STEP_KIND, detail)
    rest = {k: v for k, v in detail.items() if k not in ("disclosure_id", "step", "at", "actor", "drill")}
    return Step(step, at, actor, detail["drill"], rest)


async def disclosure_tenant(engine: AsyncEngine, disclosure_id: int) -> str | None:
    """The tenant a stored disclosure was loaded for (None: platform-wide); PlaybookError if absent."""
    from audit.models import Disclosure

    d = Disclosure.__table__
    async with engine.connect() as conn:
        row = (await conn.execute(select(d.c.tenant).where(d.c.id == disclosure_id))).first()
    if row is None:
        raise PlaybookError(f"no disclosure with id {disclosure_id}")
    tenant: str | None = row.tenant
    return tenant


def format_span(seconds: float) -> str:
    """``3 h 05 min``, ``42 s``: what a person reads on a clock."""
    s = int(abs(seconds))
    if s < 60:
        return f"{s} s"
    h, m = divmod(s // 60, 60)
    return f"{h} h {m:02d} min" if h else f"{m} min {s % 60:02d} s"
