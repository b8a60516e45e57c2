"""Exposure assessment in the browser: paste or upload a vendor disclosure, see the verdict and the
matching requests, download the report. The same ``audit`` functions as ``tiergate exposure
assess``: parse, store, assess, render; a tenant admin's assessment is confined to their tenant.
"""

from __future__ import annotations

import hashlib
from typing import Any

from litestar import Request, Response, get, post
from litestar.params import FromPath
from sqlalchemy import or_, select

from audit.assessment import Assessment, assess
from audit.disclosures import DisclosureSpec, list_disclosures, parse_disclosure, save_disclosure
from audit.errors import DisclosureError
from audit.models import Disclosure
from audit.queries import ExposureFilter
from audit.report import render_assessment_json, render_assessment_markdown
from gateway.dashboard.context import (
    Dash,
    gateway_state,
    tenant_scope,
)
from gateway.dashboard.errors import NotFound
from gateway.dashboard.render import SECURITY_HEADERS
from gateway.dashboard.security import TenantScope

__all__ = ["EXPOSURE_ROUTES"]

D = Disclosure.__table__
_MAX_BYTES = 256 * 1024
_EXAMPLE = """title: KV-cache cross-talk on long prompts
reference: VENDOR-2026-0042
providers: [examplecloud]
models: [big-model-1]
window:
  start: 2026-08-27T00:00:00Z
  end: 2026-09-09T23:59:59Z
conditions:
  min_prompt_tokens: 4096
"""


def _extra(scope: TenantScope) -> ExposureFilter | None:
    return ExposureFilter(tenants=scope.tenants()) if scope.tenant is not None else None


async def _recent(engine: Any, scope: TenantScope) -> list[dict[str, Any]]:
    """The newest disclosures this admin may see: a tenant admin, its own and platform-wide ones."""
    items = await list_disclosures(engine, visible_to=scope.tenant, limit=20)
    return [{"id": d.id, "reference": d.reference, "title": d.title, "tenant": d.tenant,
             "loaded_at": d.loaded_at} for d in items]  # fmt: skip


def _form(request: Request[Any, Any, Any], dash: Dash, recent: list[dict[str, Any]],
          *, source: str = "", error: str = "", status_code: int = 200) -> Response[Any]:  # fmt: skip
    return dash.templates.page(request, "exposure.html", active="exposure", recent=recent,
                               source=source or _EXAMPLE, error=error, status_code=status_code)  # fmt: skip


@get("/exposure", name="admin-exposure", include_in_schema=False)
async def exposure_form(request: Request[Any, Any, Any], dash: Dash) -> Response[Any]:
    """The disclosure form and the disclosures assessed so far."""
    engine = gateway_state(request).store.engine
    return _form(request, dash, await _recent(engine, tenant_scope(request)))


async def _source(request: Request[Any, Any, Any]) -> tuple[str, bytes]:
    form = await request.form()
    upload = form.get("file")
    raw: bytes = b""
    if upload is not None and not isinstance(upload, str):
        raw = await upload.read(_MAX_BYTES + 1)
    if not raw:
        raw = str(form.get("disclosure") or "").replace("\r\n", "\n").encode("utf-8")
    if len(raw) > _MAX_BYTES:
        raise DisclosureError(f"the disclosure is larger than {_MAX_BYTES // 1024} KiB")
    try:
        return raw.decode("utf-8"), raw
    except UnicodeDecodeError:
        raise DisclosureError("the file is not UTF-8 text") from None


@post("/exposure", status_code=200, include_in_schema=False)
async def exposure_assess(request: Request[Any, Any, Any], dash: Dash) -> Response[Any]:
    """Validate, store and assess the disclosure; show the verdict and the matching requests."""
    engine = gateway_state(request).store.engine
    scope = tenant_scope(request)
    text = ""
    try:
        text, raw = await _source(request)
        spec = parse_disclosure(text)
    except DisclosureError as exc:
        return _form(request, dash, await _recent(engine, scope), source=text, error=str(exc),
                     status_code=400)  # fmt: skip
    disclosure_id = await save_disclosure(engine, spec, hashlib.sha256(raw).hexdigest(),
                                          tenant=scope.tenant)  # fmt: skip
    result = await assess(engine, spec, disclosure_id=disclosure_id, extra=_extra(scope))
    return _result(request, dash, result)


def _result(request: Request[Any, Any, Any], dash: Dash, result: Assessment) -> Response[Any]:
    return dash.templates.page(request, "assessment.html", active="exposure", a=result,
                               markdown=render_assessment_markdown(result))  # fmt: skip


async def _stored(request: Request[Any, Any, Any], disclosure_id: int) -> Assessment:
    engine = gateway_state(request).store.engine
    scope = tenant_scope(request)
    stmt = select(D.c.body).where(D.c.id == disclosure_id)
    if scope.tenant is not None:  # another tenant's disclosure does not exist for this admin
        stmt = stmt.where(or_(D.c.tenant == scope.tenant, D.c.tenant.is_(None)))
    async with engine.connect() as conn:
        body = (await conn.execute(stmt)).scalar()
    if body is None:
        raise NotFound("no such disclosure")
    spec = DisclosureSpec.model_validate_json(body)
    return await assess(engine, spec, disclosure_id=disclosure_id, extra=_extra(scope))


@get("/exposure/{disclosure_id:int}", name="admin-assessment", include_in_schema=False)
async def exposure_result(request: Request[Any, Any, Any], dash: Dash,
                          disclosure_id: FromPath[int]) -> Response[Any]:  # fmt: skip
    """A stored disclosure, assessed again against the log as it is now."""
    return _result(request, dash, await _stored(request, disclosure_id))


@get("/exposure/{disclosure_id:int}/report/{fmt:str}", name="admin-assessment-report",
     include_in_schema=False)  # fmt: skip
async def exposure_report(request: Request[Any, Any, Any], disclosure_id: FromPath[int],
                          fmt: FromPath[str]) -> Response[Any]:  # fmt: skip
    """The assessment as a Markdown or JSON download (the CLI's exact renderers)."""
    if fmt not in ("md", "json"):
        raise NotFound("no such report format")
    result = await _stored(request, disclosure_id)
    if fmt == "json":
        body, media = render_assessment_json(result), "application/json"
    else:
        body, media = render_assessment_markdown(result), "text/markdown; charset=utf-8"
    name = f"exposure-{disclosure_id}.{fmt}"
    headers = {**SECURITY_HEADERS, "content-disposition": f'attachment; filename="{name}"'}
    return Response(body, media_type=media, headers=headers)


EXPOSURE_ROUTES = [exposure_form, exposure_assess, exposure_result, exposure_report]
