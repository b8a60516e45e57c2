"""The vendor register in the browser: per provider, the answers the vendor gave in writing, the day
each was given, which are due for review (``audit.vendors``, the same review the exposure reports
quote), and the upstreams that declare that provider.

The register is configuration, so the page only reads. Every admin sees it, as every admin sees
the upstreams page: what a vendor promised about the path a tenant's prompts take is that tenant's
business too. The one thing that depends on the admin is the traffic column, which counts a tenant
admin's own tenant's requests only.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from litestar import Request, Response, get
from sqlalchemy import and_, case, func, select

from audit.assessment import Assessment
from audit.models import AuditRequest
from audit.timeutil import to_us
from audit.vendors import VendorRegister, VendorReview, review_profile, review_vendors, scope_doubt
from gateway.dashboard.context import Dash, gateway_state, tenant_scope
from gateway.dashboard.stats import utcnow
from gateway.settings import Settings, UpstreamSettings

__all__ = ["VENDOR_ROUTES", "quoted_vendors"]

R = AuditRequest.__table__
TRAFFIC_DAYS = 30


def quoted_vendors(settings: Settings, result: Assessment) -> tuple[VendorReview, ...]:
    """The register's answers an assessment quotes: the providers of its matching requests and
    those the disclosure names (the same choice as ``tiergate exposure assess``)."""
    return review_vendors(settings.vendors, result.providers, utcnow().date(), named=result.disclosure.providers)


@dataclass(frozen=True, slots=True)
class Traffic:
    requests: int
    sensitive: int  # Tier 2 and 3


async def _traffic(engine: Any, tenants: tuple[str, ...]) -> dict[str, Traffic]:
    """Forwarded requests per provider over the last ``TRAFFIC_DAYS`` days, in the admin's scope."""
    where = [R.c.created_us >= to_us(utcnow() - timedelta(days=TRAFFIC_DAYS)), R.c.forwarded.is_(True),
             R.c.provider.is_not(None)]  # fmt: skip
    if tenants:
        where.append(R.c.tenant.in_(tenants))
    stmt = (select(R.c.provider, func.count().label("n"), func.sum(case((R.c.tier >= 2, 1), else_=0)).label("s"))
            .where(and_(*where)).group_by(R.c.provider))  # fmt: skip
    async with engine.connect() as conn:
        return {r.provider: Traffic(int(r.n), int(r.s or 0)) for r in (await conn.execute(stmt)).all()}


def _providers(register: VendorRegister, upstreams: list[UpstreamSettings]) -> list[str]:
    return sorted(set(register.providers) | {u.provider for u in upstreams if u.provider})


@get("/vendors", name="admin-vendors", include_in_schema=False)
async def vendors_page(request: Request[Any, Any, Any], dash: Dash) -> Response[Any]:
    """Every provider in the register or declared by an upstream, with its reviewed answers."""
    state = gateway_state(request)
    register = state.settings.vendors
    ups = list(state.settings.upstreams)
    today = utcnow().date()
    traffic = await _traffic(state.store.engine, tenant_scope(request).tenants())
    vendors = []
    for name in _providers(register, ups):
        review = review_profile(name, register.providers.get(name), register, today)
        vendors.append({
            "r": review, "doubt": scope_doubt(review), "price": getattr(register.providers.get(name), "price", None),
            "upstreams": [u for u in ups if u.provider == name],
            "traffic": traffic.get(name, Traffic(0, 0)),
        })  # fmt: skip
    undeclared = [u for u in ups if u.provider is None and u.kind.value != "onprem"]
    return dash.templates.page(request, "vendors.html", active="vendors", vendors=vendors, today=today,
                               review_after_days=register.review_after_days, undeclared=undeclared,
                               traffic_days=TRAFFIC_DAYS)  # fmt: skip


VENDOR_ROUTES = [vendors_page]
