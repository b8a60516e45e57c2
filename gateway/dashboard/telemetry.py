"""The dashboard's machine-readable views, scoped like every other page: ``/admin/metrics``
(Prometheus text) and ``/admin/events.jsonl`` (the audit log as the SIEM stream's records).

The gateway's own registry (``/metrics``) counts every tenant's traffic together, so only a
platform admin sees it here. A tenant admin gets the same kinds of figures computed from the audit
log for their tenant alone (requests by tier, upstream and status, identifiers stripped, integrity
failures, refusals, over ``window_s``) and only their tenant's records in the event view: their
requests, the outcomes of those, and events naming them. Paging of the event view is by audit
seq; ``x-tiergate-next-after`` says where the next page starts (records out of scope are skipped,
so it can be past the last line shown).
"""

from __future__ import annotations

import json
import time
from typing import Any

from litestar import Request, Response, get
from sqlalchemy import and_, func, select

from audit.models import AuditOutcome, AuditRequest
from audit.tail import read_after
from gateway.dashboard.context import gateway_state, tenant_scope
from gateway.dashboard.errors import BadInput
from gateway.dashboard.forms import opt_int, opt_text
from gateway.metrics import CONTENT_TYPE_LATEST

__all__ = ["TELEMETRY_ROUTES", "tenant_metrics"]

R, O = AuditRequest.__table__, AuditOutcome.__table__  # noqa: E741 -- O is the outcomes table, as in the SQL
_DEFAULT_WINDOW_S = 3600


def _escape(value: object) -> str:
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _sample(name: str, labels: dict[str, object], value: float) -> str:
    inner = ",".join(f'{k}="{_escape(v)}"' for k, v in labels.items())
    return f"{name}{{{inner}}} {value}"


async def tenant_metrics(engine: Any, tenant: str, window_s: int, now_us: int) -> str:
    """Prometheus text for one tenant over the last ``window_s`` seconds of the audit log."""
    since = now_us - window_s * 1_000_000
    scope = and_(R.c.tenant == tenant, R.c.created_us >= since)
    joined = R.outerjoin(O, O.c.request_id == R.c.request_id)
    by_status = (select(R.c.endpoint, R.c.tier, R.c.upstream, O.c.http_status, O.c.integrity_flag,
                        O.c.error_class, R.c.forwarded, func.count())
                 .select_from(joined).where(scope)
                 .group_by(R.c.endpoint, R.c.tier, R.c.upstream, O.c.http_status, O.c.integrity_flag,
                           O.c.error_class, R.c.forwarded))  # fmt: skip
    stripped = select(R.c.findings).where(scope, R.c.stripped.is_(True))
    requests: dict[tuple[Any, ...], int] = {}
    integrity: dict[str, int] = {}
    refusals: dict[str, int] = {}
    entities: dict[str, int] = {}
    async with engine.connect() as conn:
        for endpoint, tier, upstream, status, flag, error, forwarded, n in (await conn.execute(by_status)).all():
            key = (endpoint, tier, upstream or "none", "pending" if status is None else status)
            requests[key] = requests.get(key, 0) + n
            if flag:
                integrity[upstream or "none"] = integrity.get(upstream or "none", 0) + n
            if not forwarded and error:
                refusals[error] = refusals.get(error, 0) + n
        for (findings,) in (await conn.execute(stripped)).all():
            for entity, count in json.loads(findings).items():
                entities[entity] = entities.get(entity, 0) + int(count)
    window = f"{window_s}s"
    lines = [f"# tenant {_escape(tenant)}: figures from the audit log over the last {window}",
             "# HELP tiergate_tenant_requests Requests by tier, upstream and HTTP status",
             "# TYPE tiergate_tenant_requests gauge"]  # fmt: skip
    for (endpoint, tier, upstream, status), n in sorted(requests.items(), key=str):
        lines.append(
            _sample(
                "tiergate_tenant_requests",
                {
                    "tenant": tenant,
                    "window": window,
                    "endpoint": endpoint,
                    "tier": tier,
                    "upstream": upstream,
                    "status": status,
                },
                n,
            )
        )
    lines += ["# HELP tiergate_tenant_identifiers_stripped Identifiers replaced by placeholders, by entity type",
              "# TYPE tiergate_tenant_identifiers_stripped gauge"]  # fmt: skip
    lines += [_sample("tiergate_tenant_identifiers_stripped", {"tenant": tenant, "window": window, "entity": e}, n)
              for e, n in sorted(entities.items())]  # fmt: skip
    lines += ["# HELP tiergate_tenant_integrity_failures Upstream answers withheld by the integrity check",
              "# TYPE tiergate_tenant_integrity_failures gauge"]  # fmt: skip
    lines += [_sample("tiergate_tenant_integrity_failures", {"tenant": tenant, "window": window, "upstream": u}, n)
              for u, n in sorted(integrity.items())]  # fmt: skip
    lines += ["# HELP tiergate_tenant_refusals Requests refused by the gateway, by reason",
              "# TYPE tiergate_tenant_refusals gauge"]  # fmt: skip
    lines += [_sample("tiergate_tenant_refusals", {"tenant": tenant, "window": window, "reason": r}, n)
              for r, n in sorted(refusals.items())]  # fmt: skip
    return "\n".join(lines) + "\n"


@get("/metrics", name="admin-metrics", include_in_schema=False)
async def metrics_view(request: Request[Any, Any, Any]) -> Response[Any]:
    """Platform admin: the gateway's registry, or ``?tenant=`` for one tenant's view; a tenant
    admin: their own tenant's figures, whatever they ask for."""
    scope = tenant_scope(request)
    state = gateway_state(request)
    asked = opt_text(request.query_params, "tenant")
    window_s = opt_int(request.query_params, "window_s", 60, 90 * 86_400) or _DEFAULT_WINDOW_S
    tenant = scope.tenant if scope.tenant is not None else asked
    if tenant is None:
        return Response(state.metrics.render(), media_type=CONTENT_TYPE_LATEST)
    body = await tenant_metrics(state.store.engine, tenant, window_s, time.time_ns() // 1000)
    return Response(body.encode(), media_type=CONTENT_TYPE_LATEST)


@get("/events.jsonl", name="admin-events", include_in_schema=False)
async def events_view(request: Request[Any, Any, Any]) -> Response[Any]:
    """The audit records after ``after`` (a seq), ``limit`` at most, as JSON lines."""
    scope = tenant_scope(request)
    q = request.query_params
    after = opt_int(q, "after", 0) or 0
    limit = opt_int(q, "limit", 1, 5000) or 500
    asked = opt_text(q, "tenant")
    if scope.tenant is not None and asked is not None and asked != scope.tenant:
        raise BadInput("tenant: outside this admin's scope")
    tenant = scope.tenant if scope.tenant is not None else asked
    records = await read_after(gateway_state(request).store.engine, after, limit)
    shown = [r for r in records if tenant is None or r.tenant == tenant]
    body = "".join(json.dumps(r.as_dict(), sort_keys=True, separators=(",", ":")) + "\n" for r in shown)
    next_after = records[-1].seq if records else after
    return Response(body.encode(), media_type="application/x-ndjson",
                    headers={"x-tiergate-next-after": str(next_after)})  # fmt: skip


TELEMETRY_ROUTES = [metrics_view, events_view]
