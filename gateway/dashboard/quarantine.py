"""Quarantine from the dashboard: the same ``audit.quarantine`` calls as ``tiergate upstream``.

Every admin sees what is quarantined (on the upstreams page); only a platform admin may change
it, since a quarantine takes a vendor away from every tenant. The change is recorded with the
admin's name as actor; this process re-reads at once, other replicas on the Redis announcement
or at their next poll.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, post
from litestar.params import FromPath

from audit.quarantine import QuarantineEntry, QuarantineError, list_quarantines, quarantine, release
from gateway.dashboard.context import gateway_state
from gateway.dashboard.errors import BadInput, DashboardError
from gateway.dashboard.forms import opt_text
from gateway.dashboard.render import redirect
from gateway.dashboard.security import current_session
from gateway.quarantine import announce_change, target_problem

__all__ = ["QUARANTINE_ROUTES", "quarantine_view"]


class PlatformOnly(DashboardError):
    status_code = 403
    title = "Platform admins only"


def _actor(request: Request[Any, Any, Any]) -> str:
    admin = current_session(request).admin
    if admin.tenant is not None:
        raise PlatformOnly("A quarantine applies to every tenant: only a platform admin may change it.")
    return f"dashboard:{admin.username}"


async def _changed(request: Request[Any, Any, Any]) -> None:
    state = gateway_state(request)
    if state.quarantine is not None:
        state.quarantine.poke()
    await announce_change(state.settings.redis_url, state.settings.quarantine.channel)


async def quarantine_view(state: Any) -> dict[str, Any]:
    """For the upstreams page: quarantines in force and, per upstream, the ids covering it."""
    active = await list_quarantines(state.store.engine)
    covering: dict[str, list[QuarantineEntry]] = {}
    for up in state.settings.upstreams:
        for model in up.models.values():
            for q in active:
                if q.covers(up.name, up.provider, model) and q not in covering.get(up.name, []):
                    covering.setdefault(up.name, []).append(q)
    providers = sorted({u.provider for u in state.settings.upstreams if u.provider})
    return {"quarantines": active, "covering": covering, "providers": providers,
            "poll_s": state.settings.quarantine.poll_s}  # fmt: skip


@post("/upstreams/quarantine", status_code=200, include_in_schema=False)
async def quarantine_target(request: Request[Any, Any, Any]) -> Response[Any]:
    """Quarantine an upstream (``target=upstream:NAME``) or a vendor (``target=provider:P``),
    optionally one vendor model (``model``), for the ``reason`` given."""
    actor = _actor(request)
    form = await request.form()
    kind, _, name = (opt_text(form, "target") or "").partition(":")
    if kind not in ("upstream", "provider") or not name:
        raise BadInput("target: choose an upstream or a provider")
    upstream, provider = (name, None) if kind == "upstream" else (None, name)
    model = opt_text(form, "model")
    problem = target_problem(gateway_state(request).settings.upstreams, upstream, provider, model)
    if problem is not None:
        raise BadInput(problem)
    try:
        entry = await quarantine(gateway_state(request).store, upstream=upstream, provider=provider,
                                 model=model, reason=opt_text(form, "reason", 2000) or "", actor=actor)  # fmt: skip
    except QuarantineError as exc:
        raise BadInput(str(exc)) from None
    await _changed(request)
    return redirect("/admin/upstreams", query={"quarantined": str(entry.id)})


@post("/upstreams/quarantine/{quarantine_id:int}/release", status_code=200, include_in_schema=False)
async def release_quarantine(request: Request[Any, Any, Any], quarantine_id: FromPath[int]) -> Response[Any]:
    """Release quarantine ``quarantine_id`` for the ``reason`` given."""
    actor = _actor(request)
    form = await request.form()
    try:
        await release(gateway_state(request).store, quarantine_id, reason=opt_text(form, "reason", 2000) or "",
                      actor=actor)  # fmt: skip
    except QuarantineError as exc:
        raise BadInput(str(exc)) from None
    await _changed(request)
    return redirect("/admin/upstreams", query={"released": str(quarantine_id)})


QUARANTINE_ROUTES = [quarantine_target, release_quarantine]
