"""The audit log, filtered and paged, and one request's detail. There is no prompt text to show:
the log holds lengths, tiers, entity counts and keyed fingerprints only.

Paging is by keyset on (created_us, seq), newest first, so page 1,000 costs what page 1 does and
rows arriving meanwhile never shift a page.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get
from litestar.params import FromPath
from sqlalchemy import and_, or_

from audit.models import AuditRequest
from audit.queries import ExposureFilter, count_rows, stream_rows
from audit.timeutil import to_us
from gateway.dashboard.context import (
    Dash,
    gateway_state,
    tenant_scope,
)
from gateway.dashboard.errors import BadInput, NotFound
from gateway.dashboard.forms import opt_int, opt_text, opt_time, time_input

__all__ = ["REQUEST_ROUTES"]

R = AuditRequest.__table__
STATUSES = ("ok", "refused", "upstream_error", "integrity_error", "timeout", "client_closed",
            "pending")  # fmt: skip


def _cursor(value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    try:
        created, seq = value.split(".", 1)
        return int(created), int(seq)
    except ValueError:
        raise BadInput("after: not a page cursor") from None


@get("/requests", name="admin-requests", include_in_schema=False)
async def requests_page(request: Request[Any, Any, Any], dash: Dash) -> Response[Any]:
    """Filter by time, tenant, key, model, upstream, tier, length and status; newest first."""
    q = request.query_params
    scope = tenant_scope(request)
    status = opt_text(q, "status", 30)
    if status is not None and status not in STATUSES:
        raise BadInput("status: unknown value")
    tier = opt_int(q, "tier", 1, 3)
    start, end = opt_time(q, "from"), opt_time(q, "to")
    tenant = opt_text(q, "tenant") if scope.tenant is None else scope.tenant
    key, model, upstream = opt_text(q, "key", 64), opt_text(q, "model"), opt_text(q, "upstream")
    min_tokens, max_tokens = opt_int(q, "min_tokens", 0), opt_int(q, "max_tokens", 0)
    refused = q.get("refused", "1") != "0"
    filters = {
        "from": start, "to": end, "tenant": tenant, "key": key, "model": model, "upstream": upstream,
        "tier": tier, "min_tokens": min_tokens, "max_tokens": max_tokens, "status": status, "refused": refused,
    }  # fmt: skip
    base = ExposureFilter(
        start=start, end=end,
        tenants=scope.tenants(tenant),
        key_ids=(key,) if key else (),
        client_models=(model,) if model else (),
        upstreams=(upstream,) if upstream else (),
        tiers=(tier,) if tier else (),
        min_prompt_tokens=min_tokens, max_prompt_tokens=max_tokens,
        statuses=(status,) if status else (),
        forwarded_only=not refused,
    )  # fmt: skip
    after = _cursor(opt_text(q, "after", 60))
    page = base
    if after is not None:
        created, seq = after
        older = or_(R.c.created_us < created, and_(R.c.created_us == created, R.c.seq < seq))
        page = ExposureFilter(**{**_fields(base), "extra": (older,)})
    engine = gateway_state(request).store.engine
    size = dash.config.page_size
    rows = [r async for r in stream_rows(engine, page, limit=size + 1, newest_first=True)]
    more = len(rows) > size
    rows = rows[:size]
    next_cursor = f"{to_us(rows[-1].created_at)}.{rows[-1].seq}" if more and rows else None
    total = await count_rows(engine, base)
    query = {k: v for k, v in q.items() if k != "after"}
    return dash.templates.page(
        request, "requests.html", active="requests", rows=rows, total=total, f=filters,
        statuses=STATUSES, next_cursor=next_cursor, query=query, first_page=after is None,
        from_value=time_input(start), to_value=time_input(end),
    )  # fmt: skip


def _fields(flt: ExposureFilter) -> dict[str, Any]:
    return {name: getattr(flt, name) for name in flt.__dataclass_fields__}


@get("/requests/{request_id:str}", name="admin-request", include_in_schema=False)
async def request_detail(request: Request[Any, Any, Any], dash: Dash,
                         request_id: FromPath[str]) -> Response[Any]:  # fmt: skip
    """One request's row and outcome; another tenant's request is a 404, as if it did not exist."""
    scope = tenant_scope(request)
    if len(request_id) > 128:
        raise NotFound("no such request")
    flt = ExposureFilter(forwarded_only=False, tenants=scope.tenants(),
                         extra=(R.c.request_id == request_id,))  # fmt: skip
    rows = [r async for r in stream_rows(gateway_state(request).store.engine, flt, limit=1)]
    if not rows:
        raise NotFound("no such request")
    scope.check(rows[0].tenant)
    return dash.templates.page(request, "request.html", active="requests", row=rows[0])


REQUEST_ROUTES = [requests_page, request_detail]
