"""The playbook drill: a synthetic disclosure against the live log, run through the playbook.

``tiergate exposure drill`` (and the dashboard's button) stores a disclosure that names every
upstream (``*``) over the last ``hours`` of the log, so the assessment runs on real traffic at
real volume, then records ``loaded`` and ``assessed`` with the time the assessment took. The people
in the playbook then record their steps on it as on a real incident (``exposure step``), and the
timeline shows how long each took; ``simulate`` records them at once instead, which rehearses the
machinery, not the people. Everything is marked: the title and reference start with ``DRILL``,
every step is a ``disclosure_drill_step`` event with ``drill: true``, and reports say it at the top.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from typing import Any

from audit.assessment import Assessment
from audit.disclosures import DisclosureSpec
from audit.incident import load_and_assess
from audit.playbook import PlaybookRegister, Timeline, read_timeline, record_step

__all__ = ["drill_spec", "run_drill"]


def drill_spec(now: datetime, hours: float) -> DisclosureSpec:
    stamp = now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    return DisclosureSpec.model_validate({
        "title": "DRILL: rehearsal of the incident playbook (not a vendor incident)",
        "reference": f"DRILL-{stamp}",
        "upstreams": ["*"],
        "window": {"start": (now - timedelta(hours=hours)).isoformat(), "end": now.isoformat()},
        "notes": "Synthetic disclosure made by `tiergate exposure drill`: no vendor reported anything.",
    })  # fmt: skip


async def run_drill(store: Any, register: PlaybookRegister, *, actor: str, tenant: str | None = None,
                    hours: float = 24, simulate: bool = False,
                    now: datetime | None = None) -> tuple[Assessment, Timeline]:  # fmt: skip
    at = now or datetime.now(UTC)
    spec = drill_spec(at, hours)
    playbook = register.for_tenant(tenant)
    result, _ = await load_and_assess(store, spec, hashlib.sha256(spec.canonical_json().encode()).hexdigest(),
                                      tenant=tenant, playbook=playbook, actor=actor, drill=True)  # fmt: skip
    did = result.disclosure_id
    assert did is not None
    if simulate:
        # Each as the playbook's owner would record it: the drill rehearses the order and the
        # records, and says in each step that it was simulated.
        def owner(step: str, party: str | None = None) -> str:
            return playbook.role_for(step, party).owner if playbook else actor

        marks = {"simulated": True}
        await record_step(store, did, "decided", actor=owner("decided"), playbook=playbook, drill=True,
                          reportable=False, reason="drill: rehearsal, nothing to report", extra=marks)  # fmt: skip
        for party in ("customers", "body"):
            await record_step(store, did, "notified", actor=owner("notified", party), playbook=playbook,
                              drill=True, party=party, to="drill: nobody was contacted", extra=marks)  # fmt: skip
        await record_step(store, did, "closed", actor=owner("closed"), playbook=playbook, drill=True,
                          reason="drill complete", extra=marks)  # fmt: skip
    return result, await read_timeline(store.engine, did, playbook)
