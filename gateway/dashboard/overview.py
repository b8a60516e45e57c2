"""The overview page: requests per tier over time, per upstream and model, refusals, stripped
identifiers, integrity and probe alarms, for a picked time range."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get

from gateway.dashboard.context import (
    Dash,
    gateway_state,
    tenant_scope,
)
from gateway.dashboard.errors import BadInput
from gateway.dashboard.forms import opt_text, opt_time, time_input
from gateway.dashboard.stats import RANGES, overview, pick_range, utcnow

__all__ = ["OVERVIEW_ROUTES"]


@get(["/", "/overview"], name="admin-overview", include_in_schema=False)
async def overview_page(request: Request[Any, Any, Any], dash: Dash) -> Response[Any]:
    """Charts for the chosen range (default: the last 24 hours)."""
    q = request.query_params
    scope = tenant_scope(request)
    try:
        rng = pick_range(opt_text(q, "range", 10), opt_time(q, "from"), opt_time(q, "to"), utcnow())
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    tenant = opt_text(q, "tenant") if scope.tenant is None else None
    data = await overview(gateway_state(request).store.engine, rng, scope.tenants(tenant))
    return dash.templates.page(
        request, "overview.html", active="overview", ov=data, ranges=list(RANGES),
        from_value=time_input(rng.start) if rng.name == "custom" else "",
        to_value=time_input(rng.end) if rng.name == "custom" else "",
        tenant=tenant or "", charts=data.chart_data(),
    )  # fmt: skip


OVERVIEW_ROUTES = [overview_page]
