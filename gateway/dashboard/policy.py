"""The active policy, and a "try it" box: a sample is classified by the gateway's own classifier
and shown with its findings highlighted. The sample is never stored, logged or sent anywhere."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from litestar import Request, Response, get, post

from gateway.dashboard.context import (
    Dash,
    gateway_state,
    tenant_scope,
)
from gateway.dashboard.errors import BadInput
from gateway.dashboard.forms import opt_text
from tiers import Classifier
from tiers.types import Content, Decision, Segment, Tier

__all__ = ["POLICY_ROUTES", "Part", "highlight"]


@dataclass(frozen=True, slots=True)
class Part:
    text: str
    entity: str | None = None  # None: plain text between findings


def highlight(text: str, decision: Decision) -> list[Part]:
    """Split ``text`` into plain and found parts; overlapping findings merge into the first."""
    spans = sorted((f.start, f.end, f.entity_type) for f in decision.findings if f.segment == 0)
    parts: list[Part] = []
    pos = 0
    for start, end, entity in spans:
        if end <= pos:
            continue
        start = max(start, pos)
        if start > pos:
            parts.append(Part(text[pos:start]))
        parts.append(Part(text[start:end], entity))
        pos = end
    if pos < len(text):
        parts.append(Part(text[pos:]))
    return parts


def _classifier(request: Request[Any, Any, Any]) -> Classifier:
    return gateway_state(request).pipeline.classify.classifier


def _policy_view(clf: Classifier, tenant: str | None) -> dict[str, Any]:
    policy = clf.policy_for(tenant)
    by_tier: dict[int, list[str]] = {1: [], 2: [], 3: []}
    for entity, floor in sorted(policy.floors.items()):
        by_tier.setdefault(int(floor), []).append(entity)
    rules = [{"tier": int(t), "allow": sorted(k.value for k in policy.rule(t).allow),
              "strip": sorted(k.value for k in policy.rule(t).strip)} for t in Tier]  # fmt: skip
    return {"name": policy.name, "default_floor": int(policy.default_floor), "by_tier": by_tier,
            "rules": rules}  # fmt: skip


def _tenant(request: Request[Any, Any, Any], params: Any) -> str | None:
    scope = tenant_scope(request)
    return scope.tenant if scope.tenant is not None else opt_text(params, "tenant")


async def _page(request: Request[Any, Any, Any], dash: Dash, tenant: str | None,
                **extra: Any) -> Response[Any]:  # fmt: skip
    clf = _classifier(request)
    extra.setdefault("sample", "")
    extra.setdefault("result", None)
    return dash.templates.page(
        request, "policy.html", active="policy", policy=_policy_view(clf, tenant), tenant=tenant or "",
        tenant_policies=sorted(clf.config.tenant_policies), max_chars=dash.config.try_it_max_chars,
        **extra,
    )  # fmt: skip


@get("/policy", name="admin-policy", include_in_schema=False)
async def policy_page(request: Request[Any, Any, Any], dash: Dash) -> Response[Any]:
    """The policy in force for the admin's tenant (a platform admin may pick a tenant)."""
    return await _page(request, dash, _tenant(request, request.query_params))


@post("/policy/try", status_code=200, include_in_schema=False)
async def try_policy(request: Request[Any, Any, Any], dash: Dash) -> Response[Any]:
    """Classify a sample exactly as a request from this tenant would be; store nothing."""
    form = await request.form()
    tenant = _tenant(request, form)
    sample = str(form.get("sample") or "")
    if len(sample) > dash.config.try_it_max_chars:
        raise BadInput(f"sample: at most {dash.config.try_it_max_chars} characters")
    content = Content((Segment(("sample",), sample),))
    # Off the event loop: a long sample can take a noticeable share of a second to scan.
    decision = await asyncio.to_thread(_classifier(request).classify, content, tenant)
    result = {"tier": int(decision.tier), "reasons": decision.reasons,
              "failed_closed": decision.failed_closed, "parts": highlight(sample, decision),
              "counts": sorted(decision.entity_counts().items())}  # fmt: skip
    return await _page(request, dash, tenant, sample=sample, result=result)


POLICY_ROUTES = [policy_page, try_policy]
