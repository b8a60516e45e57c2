"""Restoring a ladder-lowered safe length from the dashboard: the same ``audit.length_caps`` call
as ``tiergate probe --restore-safe-length``. Platform admins only (the length applies to every
tenant); recorded with the admin's name as actor; this process re-reads at once, other replicas on
the quarantine channel's announcement or at their next poll."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, post
from litestar.params import FromPath

from audit.length_caps import LengthCapError, restore_safe_length
from gateway.dashboard.context import gateway_state
from gateway.dashboard.errors import BadInput, NotFound
from gateway.dashboard.forms import opt_text
from gateway.dashboard.quarantine import PlatformOnly
from gateway.dashboard.render import redirect
from gateway.dashboard.security import current_session
from gateway.quarantine import announce_change

__all__ = ["SAFE_LENGTH_ROUTES"]


@post("/upstreams/{name:str}/safe-length/restore", status_code=200, include_in_schema=False)
async def restore_length(request: Request[Any, Any, Any], name: FromPath[str]) -> Response[Any]:
    """End the lowering of upstream ``name``'s safe length, for the ``reason`` given."""
    admin = current_session(request).admin
    if admin.tenant is not None:
        raise PlatformOnly("A safe length applies to every tenant: only a platform admin may restore it.")
    state = gateway_state(request)
    if name not in {u.name for u in state.settings.upstreams}:
        raise NotFound("No such upstream.")
    form = await request.form()
    try:
        await restore_safe_length(state.store, upstream=name, reason=opt_text(form, "reason", 2000) or "",
                                  actor=f"dashboard:{admin.username}")  # fmt: skip
    except LengthCapError as exc:
        raise BadInput(str(exc)) from None
    monitor = getattr(state, "safe_length_monitor", None)
    if monitor is not None:
        monitor.poke()
    await announce_change(state.settings.redis_url, state.settings.quarantine.channel)
    return redirect("/admin/upstreams", query={"restored": name})


SAFE_LENGTH_ROUTES = [restore_length]
