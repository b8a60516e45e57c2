"""The probes page: recent isolation, ladder and prefix-cache probe runs from the audit events,
each failure with the exposure assessment it may require one click away.

A failed probe says an upstream answered some requests wrongly; whether *our* past traffic was
exposed is the exposure assessment's question. Each failure carries a disclosure draft (our
upstream name, the window since that upstream last passed the same probe, and for a ladder the
prompt length from the last good rung up) that the form posts to the Exposure page, which
validates, stores and assesses it as if pasted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import yaml
from litestar import Request, Response, get
from sqlalchemy import select

from audit.models import AuditEvent
from audit.timeutil import from_us
from gateway.dashboard.context import Dash, gateway_state
from gateway.probe import EVENT_KIND as ISOLATION
from gateway.probes.ladder import EVENT_KIND as LADDER
from gateway.probes.prefix_cache import EVENT_KIND as PREFIX_CACHE

__all__ = ["PROBE_ROUTES", "ProbeRun", "last_ladders", "recent_runs"]

E = AuditEvent.__table__
KINDS = (ISOLATION, LADDER, PREFIX_CACHE)
_LABELS = {ISOLATION: "isolation", LADDER: "ladder", PREFIX_CACHE: "prefix cache"}
# With no earlier passing run of the same probe, the window reaches this far back.
_DEFAULT_LOOKBACK = timedelta(days=30)


@dataclass(frozen=True, slots=True)
class ProbeRun:
    seq: int
    kind: str
    at: datetime
    detail: dict[str, Any]
    draft: str | None = None  # a disclosure draft for a failed run
    since: datetime | None = None  # the window's start (the last passing run, or the default)
    rungs: list[dict[str, Any]] = field(default_factory=list)

    @property
    def label(self) -> str:
        return _LABELS.get(self.kind, self.kind)

    @property
    def upstream(self) -> str:
        return str(self.detail.get("upstream", "?"))

    @property
    def passed(self) -> bool:
        return self.detail.get("passed") is True


def _draft(run_kind: str, seq: int, detail: dict[str, Any], provider: str | None, since: datetime,
           at: datetime) -> str:  # fmt: skip
    upstream = str(detail.get("upstream"))
    spec: dict[str, Any] = {
        "title": f"{_LABELS.get(run_kind, run_kind)} probe failure on {upstream}",
        "reference": f"probe-{seq}",
        "upstreams": [upstream],
        "window": {"start": since.isoformat(), "end": at.isoformat()},
    }
    if provider:
        spec["providers"] = [provider]
    notes = f"Drafted from probe event #{seq} ({', '.join(detail.get('reasons') or [])})."
    if run_kind == LADDER and detail.get("first_failed_tokens"):
        # Prompts no longer than the last good rung were shown to be read whole.
        spec["conditions"] = {"min_prompt_tokens": int(detail.get("last_good_tokens") or 0) + 1}
        notes += f" First failed rung: {detail['first_failed_tokens']} tokens."
    spec["notes"] = notes + " Window: since the last passing run of this probe (or 30 days)."
    return yaml.safe_dump(spec, sort_keys=False)


async def _events(engine: Any, limit: int) -> list[Any]:
    stmt = (
        select(E.c.seq, E.c.created_us, E.c.kind, E.c.detail)
        .where(E.c.kind.in_(KINDS))
        .order_by(E.c.seq.desc())
        .limit(limit)
    )
    async with engine.connect() as conn:
        return list((await conn.execute(stmt)).all())


async def recent_runs(engine: Any, providers: dict[str, str | None], *, limit: int = 200) -> list[ProbeRun]:
    """Newest first; each failed run with its disclosure draft."""
    rows = await _events(engine, limit)
    parsed = []
    for r in rows:
        try:
            detail = json.loads(r.detail)
        except ValueError:
            continue
        if isinstance(detail, dict):
            parsed.append((int(r.seq), r.kind, from_us(r.created_us), detail))
    runs = []
    for i, (seq, kind, at, detail) in enumerate(parsed):
        draft = since = None
        if detail.get("passed") is not True:
            earlier = next((a for _s, k, a, d in parsed[i + 1:] if k == kind and d.get("upstream") == detail.get("upstream")
                            and d.get("passed") is True), None)  # fmt: skip
            since = earlier or at - _DEFAULT_LOOKBACK
            draft = _draft(kind, seq, detail, providers.get(str(detail.get("upstream"))), since, at)
        listed = detail.get("rungs") if kind == LADDER else None
        rungs = [r for r in listed if isinstance(r, dict)] if isinstance(listed, list) else []
        runs.append(ProbeRun(seq, kind, at, detail, draft, since, rungs))
    return runs


async def last_ladders(engine: Any) -> dict[str, ProbeRun]:
    """Per upstream, its newest ladder run (for the upstreams page)."""
    out: dict[str, ProbeRun] = {}
    for run in await recent_runs(engine, {}, limit=200):
        if run.kind == LADDER and run.upstream not in out:
            out[run.upstream] = run
    return out


@get("/probes", name="admin-probes", include_in_schema=False)
async def probes_page(request: Request[Any, Any, Any], dash: Dash) -> Response[Any]:
    """Recent probe runs; a ladder per rung; each failure with its exposure assessment."""
    state = gateway_state(request)
    providers = {u.name: u.provider for u in state.settings.upstreams}
    runs = await recent_runs(state.store.engine, providers)
    return dash.templates.page(request, "probes.html", active="probes", runs=runs)


PROBE_ROUTES = [probes_page]
