"""A disclosure handled as an incident: load it, assess it, record the playbook's steps.

The CLI (``tiergate exposure assess --record``, ``exposure step``, ``exposure timeline``) and the
dashboard's disclosure page call these, so both write the same events in the same order.
"""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import select

from audit.assessment import Assessment, assess
from audit.disclosures import DisclosureSpec, save_disclosure
from audit.models import Disclosure
from audit.playbook import (
    Playbook,
    PlaybookError,
    PlaybookRegister,
    Timeline,
    disclosure_tenant,
    read_timeline,
    record_step,
)
from audit.queries import ExposureFilter

__all__ = ["assess_recorded", "incident_step", "load_and_assess", "stored_incident"]

_D = Disclosure.__table__


def _scope(tenant: str | None) -> ExposureFilter | None:
    return ExposureFilter(tenants=(tenant,)) if tenant is not None else None


async def assess_recorded(store: Any, spec: DisclosureSpec, disclosure_id: int, *, tenant: str | None,
                          playbook: Playbook | None, actor: str | None, drill: bool = False,
                          extra: ExposureFilter | None = None) -> Assessment:  # fmt: skip
    """Assess; with ``actor``, record the ``assessed`` step with its verdict and duration."""
    started = time.monotonic()
    result = await assess(store.engine, spec, disclosure_id=disclosure_id, extra=extra or _scope(tenant))
    if actor is not None:
        took_ms = (time.monotonic() - started) * 1000
        await record_step(store, disclosure_id, "assessed", actor=actor, playbook=playbook, drill=drill,
                          extra={"verdict": result.verdict.value, "total": result.total,
                                 "tenants_to_contact": list(result.tenants_to_contact),
                                 "took_ms": round(took_ms, 1)})  # fmt: skip
    return result


async def load_and_assess(store: Any, spec: DisclosureSpec, digest: str, *, tenant: str | None,
                          playbook: Playbook | None, actor: str | None, drill: bool = False,
                          extra: ExposureFilter | None = None) -> tuple[Assessment, Timeline | None]:  # fmt: skip
    """Store the disclosure and assess it. ``actor`` given: a real (or drilled) incident whose
    clock starts now (``loaded``), then ``assessed``; None: an ad-hoc assessment, no clock."""
    disclosure_id = await save_disclosure(store.engine, spec, digest, tenant=tenant)
    if actor is not None:
        await record_step(store, disclosure_id, "loaded", actor=actor, playbook=playbook, drill=drill)
    result = await assess_recorded(store, spec, disclosure_id, tenant=tenant, playbook=playbook,
                                   actor=actor, drill=drill, extra=extra)  # fmt: skip
    timeline = await read_timeline(store.engine, disclosure_id, playbook) if actor is not None else None
    return result, timeline


async def incident_step(store: Any, register: PlaybookRegister, disclosure_id: int, step: str, *,
                        actor: str, reportable: bool | None = None, reason: str | None = None,
                        party: str | None = None, to: str | None = None) -> Timeline:  # fmt: skip
    """Record one step (``assessed`` runs the assessment again); returns the timeline after it."""
    tenant = await disclosure_tenant(store.engine, disclosure_id)
    playbook = register.for_tenant(tenant)
    if step == "assessed":
        spec = await _spec(store, disclosure_id)
        await assess_recorded(store, spec, disclosure_id, tenant=tenant, playbook=playbook, actor=actor)
    else:
        await record_step(store, disclosure_id, step, actor=actor, playbook=playbook, reportable=reportable,
                          reason=reason, party=party, to=to)  # fmt: skip
    return await read_timeline(store.engine, disclosure_id, playbook)


async def _spec(store: Any, disclosure_id: int) -> DisclosureSpec:
    async with store.engine.connect() as conn:
        body = (await conn.execute(select(_D.c.body).where(_D.c.id == disclosure_id))).scalar()
    if body is None:
        raise PlaybookError(f"no disclosure with id {disclosure_id}")
    return DisclosureSpec.model_validate_json(body)


async def stored_incident(store: Any, register: PlaybookRegister, disclosure_id: int, *,
                          extra: ExposureFilter | None = None) -> tuple[Assessment, Timeline | None]:  # fmt: skip
    """A stored disclosure assessed again against the log as it is now, with its timeline
    (None when no clock was ever started for it)."""
    tenant = await disclosure_tenant(store.engine, disclosure_id)
    spec = await _spec(store, disclosure_id)
    result = await assess(store.engine, spec, disclosure_id=disclosure_id, extra=extra or _scope(tenant))
    timeline = await read_timeline(store.engine, disclosure_id, register.for_tenant(tenant))
    return result, (timeline if timeline.steps else None)
