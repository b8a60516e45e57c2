"""The upstream registry: kind, highest tier, safe prompt length, health, the on-prem engine's
manifest (read live) and the last isolation probe (from the audit log)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from litestar import Request, Response, get
from sqlalchemy import and_, func, select

from audit.length_caps import active_caps
from audit.models import AuditEvent, AuditOutcome, AuditRequest
from audit.timeutil import from_us, to_us
from engine import fetch_manifest
from gateway.dashboard.context import (
    Dash,
    gateway_state,
    tenant_scope,
)
from gateway.dashboard.quarantine import quarantine_view
from gateway.dashboard.probes import last_ladders
from gateway.dashboard.stats import PROBE_KINDS, utcnow
from gateway.settings import UpstreamSettings
from tiers.types import UpstreamKind

__all__ = ["UPSTREAM_ROUTES"]

R = AuditRequest.__table__
O = AuditOutcome.__table__  # noqa: E741 -- O is the outcomes table, as in the SQL
E = AuditEvent.__table__


@dataclass(frozen=True, slots=True)
class Health:
    ok: int
    failed: int
    last_ok: Any

    @property
    def label(self) -> str:
        if self.ok == 0 and self.failed == 0:
            return "no traffic"
        return "healthy" if self.failed * 10 <= self.ok + self.failed else "failing"


async def _health(engine: Any, tenants: tuple[str, ...]) -> dict[str, Health]:
    since = to_us(utcnow() - timedelta(hours=1))
    where = [R.c.created_us >= since, R.c.forwarded.is_(True)]
    if tenants:
        where.append(R.c.tenant.in_(tenants))
    ok = O.c.status == "ok"
    stmt = (select(R.c.upstream, ok.label("ok"), func.count().label("n"),
                   func.max(R.c.created_us).label("last"))
            .select_from(R.join(O, O.c.request_id == R.c.request_id))
            .where(and_(*where)).group_by(R.c.upstream, ok))  # fmt: skip
    out: dict[str, list[Any]] = {}
    async with engine.connect() as conn:
        for r in (await conn.execute(stmt)).all():
            h = out.setdefault(r.upstream, [0, 0, None])
            if r.ok:
                h[0] += int(r.n)
                h[2] = from_us(r.last)
            else:
                h[1] += int(r.n)
    return {name: Health(*v) for name, v in out.items()}


async def _last_probes(engine: Any) -> dict[str, dict[str, Any]]:
    stmt = select(E.c.created_us, E.c.detail).where(E.c.kind.in_(PROBE_KINDS)).order_by(E.c.seq.desc()).limit(500)
    found: dict[str, dict[str, Any]] = {}
    async with engine.connect() as conn:
        for r in (await conn.execute(stmt)).all():
            detail = json.loads(r.detail) if r.detail else {}
            name = detail.get("upstream") if isinstance(detail, dict) else None
            if isinstance(name, str) and name not in found:
                found[name] = {"at": from_us(r.created_us), "passed": detail.get("passed") is True,
                               "reasons": detail.get("reasons") or [],
                               "sent": detail.get("sent"), "crossed": detail.get("crossed")}  # fmt: skip
    return found


async def _manifest(state: Any, up: UpstreamSettings, timeout_s: float) -> dict[str, Any]:
    if up.kind != UpstreamKind.ONPREM:
        return {}
    client = state.clients.get(up.name)
    if client is None:
        return {"error": "no client for this upstream"}
    try:
        async with asyncio.timeout(timeout_s):
            m = await fetch_manifest(client.client, up.base_url)
        return {"fields": m.to_json()}
    except Exception as exc:  # noqa: BLE001 -- shown to the admin; the message names URLs and statuses only
        return {"error": str(exc) if hasattr(exc, "status_code") else type(exc).__name__}


@get("/upstreams", name="admin-upstreams", include_in_schema=False)
async def upstreams_page(request: Request[Any, Any, Any], dash: Dash) -> Response[Any]:
    """Every configured upstream with its trust, limits and live state."""
    state = gateway_state(request)
    engine = state.store.engine
    ups = list(state.settings.upstreams)
    health = await _health(engine, tenant_scope(request).tenants())
    probes = await _last_probes(engine)
    ladders = await last_ladders(engine)
    lowered: dict[str, Any] = {}  # the shared state every replica obeys within quarantine.poll_s
    for cap in await active_caps(engine):
        if cap.upstream not in lowered or cap.max_prompt_tokens < lowered[cap.upstream].max_prompt_tokens:
            lowered[cap.upstream] = cap
    manifests = await asyncio.gather(*(_manifest(state, u, dash.config.manifest_timeout_s) for u in ups))
    rows = []
    for up, manifest in zip(ups, manifests, strict=True):
        onprem = up.kind == UpstreamKind.ONPREM
        rows.append({
            "u": up, "models": sorted(up.models.items()), "safe_tokens": up.safe_tokens,
            "health": health.get(up.name, Health(0, 0, None)),
            "hardened": state.hardening.is_hardened(up) if onprem else None,
            "problems": state.hardening.problems(up.name) if onprem else [],
            "manifest": manifest, "probe": probes.get(up.name), "ladder": ladders.get(up.name),
            "lowered": lowered.get(up.name),
        })  # fmt: skip
    return dash.templates.page(request, "upstreams.html", active="upstreams", rows=rows,
                               quarantined=request.query_params.get("quarantined", ""),
                               released=request.query_params.get("released", ""),
                               restored=request.query_params.get("restored", ""),
                               **await quarantine_view(state))  # fmt: skip


UPSTREAM_ROUTES = [upstreams_page]
