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
from audit.incident import load_and_assess
from audit.playbook import PlaybookError, Timeline, disclosure_tenant, read_timeline
from audit.models import Disclosure
from audit.queries import ExposureFilter
from audit.report import render_assessment_json, render_assessment_markdown, vendor_notes
from audit.vendors import VendorReview
from gateway.dashboard.context import (
    Dash,
    gateway_state,
    tenant_scope,
)
from gateway.dashboard.errors import BadInput, NotFound
from gateway.dashboard.forms import opt_text
from gateway.dashboard.render import SECURITY_HEADERS, redirect
from gateway.dashboard.security import TenantScope, current_session
from gateway.dashboard.vendors import quoted_vendors

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
    digest = hashlib.sha256(raw).hexdigest()
    if (await request.form()).get("record"):  # a real incident: its playbook's clock starts now
        state = gateway_state(request)
        result, timeline = await load_and_assess(
            state.store, spec, digest, tenant=scope.tenant, actor=_actor(request),
            playbook=state.settings.playbooks.for_tenant(scope.tenant), extra=_extra(scope))  # fmt: skip
        return _result(request, dash, result, timeline)
    disclosure_id = await save_disclosure(engine, spec, digest, tenant=scope.tenant)
    result = await assess(engine, spec, disclosure_id=disclosure_id, extra=_extra(scope))
    return _result(request, dash, result)


def _actor(request: Request[Any, Any, Any]) -> str:
    return f"dashboard:{current_session(request).admin.username}"


def _result(request: Request[Any, Any, Any], dash: Dash, result: Assessment,
            timeline: Timeline | None = None, *, error: str = "", status_code: int = 200) -> Response[Any]:  # fmt: skip
    from audit.timeline_report import clock_line, playbook_roles, step_summary

    # The vendor's own answers beside the verdict, as the CLI's report quotes them.
    vendors = quoted_vendors(gateway_state(request).settings, result)
    return dash.templates.page(request, "assessment.html", active="exposure", a=result, t=timeline,
                               clock=clock_line(timeline) if timeline else "",
                               roles=playbook_roles(timeline.playbook) if timeline else [],
                               summary=step_summary, step_error=error, status_code=status_code,
                               vendors=vendors, vendor_notes=vendor_notes(result, vendors),
                               markdown=render_assessment_markdown(result, vendors, timeline))  # fmt: skip


async def _timeline(request: Request[Any, Any, Any], disclosure_id: int) -> Timeline | None:
    """The disclosure's playbook timeline (None: no clock was ever started for it)."""
    state = gateway_state(request)
    tenant = await disclosure_tenant(state.store.engine, disclosure_id)
    t = await read_timeline(state.store.engine, disclosure_id, state.settings.playbooks.for_tenant(tenant))
    return t if t.steps else None


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
    """A stored disclosure, assessed again against the log as it is now, with its timeline."""
    result = await _stored(request, disclosure_id)
    return _result(request, dash, result, await _timeline(request, disclosure_id))


@post("/exposure/drill", status_code=200, include_in_schema=False)
async def exposure_drill(request: Request[Any, Any, Any]) -> Response[Any]:
    """Start a drill (a synthetic disclosure over the last 24 hours, marked DRILL) for the admin's
    scope; the page it leads to records the playbook's steps like a real incident's."""
    from audit.drill import run_drill

    state = gateway_state(request)
    result, _ = await run_drill(state.store, state.settings.playbooks, actor=_actor(request),
                                tenant=tenant_scope(request).tenant)  # fmt: skip
    return redirect(f"/admin/exposure/{result.disclosure_id}", query={"drill": "started"})


@post("/exposure/{disclosure_id:int}/step", status_code=200, include_in_schema=False)
async def exposure_step(request: Request[Any, Any, Any], dash: Dash, disclosure_id: FromPath[int]) -> Response[Any]:
    """Record a playbook step (decided / notified / closed) as the signed-in admin. A tenant
    admin records steps on their own tenant's disclosures only."""
    from audit.incident import incident_step

    result = await _stored(request, disclosure_id)  # 404 for a disclosure this admin cannot see
    state = gateway_state(request)
    scope = tenant_scope(request)
    if scope.tenant is not None and await disclosure_tenant(state.store.engine, disclosure_id) != scope.tenant:
        raise NotFound("no such disclosure")  # platform-wide incidents are run by platform admins
    form = await request.form()
    step = opt_text(form, "step", 20) or ""
    if step not in ("decided", "notified", "closed"):
        raise BadInput("step: decided, notified or closed")
    answer = opt_text(form, "reportable", 3)
    try:
        await incident_step(state.store, state.settings.playbooks, disclosure_id, step, actor=_actor(request),
                            reportable=None if answer is None else answer == "yes",
                            reason=opt_text(form, "reason", 2000), party=opt_text(form, "party", 20),
                            to=opt_text(form, "to", 2000))  # fmt: skip
    except PlaybookError as exc:
        return _result(request, dash, result, await _timeline(request, disclosure_id), error=str(exc),
                       status_code=400)  # fmt: skip
    return redirect(f"/admin/exposure/{disclosure_id}", query={"recorded": step})


@get("/exposure/{disclosure_id:int}/report/{fmt:str}", name="admin-assessment-report",
     include_in_schema=False)  # fmt: skip
async def exposure_report(request: Request[Any, Any, Any], disclosure_id: FromPath[int],
                          fmt: FromPath[str]) -> Response[Any]:  # fmt: skip
    """The assessment as a Markdown, JSON or PDF download, or printable HTML (the CLI's exact
    renderers). The HTML page is served with its own CSP: no script, only its own stylesheet."""
    if fmt not in ("md", "json", "html", "pdf"):
        raise NotFound("no such report format")
    result = await _stored(request, disclosure_id)
    timeline = await _timeline(request, disclosure_id)
    vendors = quoted_vendors(gateway_state(request).settings, result)
    if fmt in ("html", "pdf"):
        return _printable(result, vendors, timeline, fmt, disclosure_id)
    if fmt == "json":
        body, media = render_assessment_json(result, vendors, timeline), "application/json"
    else:
        body, media = render_assessment_markdown(result, vendors, timeline), "text/markdown; charset=utf-8"
    name = f"exposure-{disclosure_id}.{fmt}"
    headers = {**SECURITY_HEADERS, "content-disposition": f'attachment; filename="{name}"'}
    return Response(body, media_type=media, headers=headers)


def _printable(result: Assessment, vendors: tuple[VendorReview, ...], timeline: Timeline | None, fmt: str,
               disclosure_id: int) -> Response[Any]:  # fmt: skip
    from audit.html_report import CSP, render_assessment_html
    from audit.pdf_report import render_assessment_pdf

    if fmt == "html":
        return Response(render_assessment_html(result, vendors, timeline), media_type="text/html; charset=utf-8",
                        headers={**SECURITY_HEADERS, "content-security-policy": CSP})  # fmt: skip
    name = f"exposure-{disclosure_id}{'-drill' if timeline and timeline.drill else ''}.pdf"
    return Response(render_assessment_pdf(result, vendors, timeline), media_type="application/pdf",
                    headers={**SECURITY_HEADERS, "content-disposition": f'attachment; filename="{name}"'})  # fmt: skip


EXPOSURE_ROUTES = [exposure_form, exposure_assess, exposure_drill, exposure_result, exposure_step, exposure_report]
