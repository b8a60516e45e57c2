"""Client API keys: create (the secret is shown once, on the response to the POST, and never
stored), list, revoke. A tenant admin creates and sees only their tenant's keys."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get, post
from litestar.params import FromPath

from gateway.dashboard.context import (
    Dash,
    gateway_state,
    tenant_scope,
)
from gateway.dashboard.errors import BadInput, NotFound
from gateway.dashboard.forms import opt_int, opt_text
from gateway.dashboard.render import redirect

__all__ = ["KEY_ROUTES"]


def _printable(value: str | None, field: str) -> str:
    if not value or not value.isprintable():
        raise BadInput(f"{field}: 1-200 printable characters")
    return value


async def _page(request: Request[Any, Any, Any], dash: Dash, *,
                created: tuple[str, Any] | None = None, status_code: int = 200) -> Response[Any]:  # fmt: skip
    scope = tenant_scope(request)
    keys = await gateway_state(request).store.list_keys(scope.tenant)
    keys = sorted(keys, key=lambda k: (k.revoked_at is not None, -k.created_at.timestamp()))
    return dash.templates.page(request, "keys.html", active="keys", keys=keys, created=created,
                               revoked=request.query_params.get("revoked", ""),
                               status_code=status_code)  # fmt: skip


@get("/keys", name="admin-keys", include_in_schema=False)
async def keys_page(request: Request[Any, Any, Any], dash: Dash) -> Response[Any]:
    """The key list and the creation form."""
    return await _page(request, dash)


@post("/keys", status_code=200, include_in_schema=False)
async def create_key(request: Request[Any, Any, Any], dash: Dash) -> Response[Any]:
    """Create a key; the page that answers this POST is the only place its secret ever appears."""
    form = await request.form()
    scope = tenant_scope(request)
    tenant = scope.tenant or _printable(opt_text(form, "tenant"), "tenant")
    name = _printable(opt_text(form, "name"), "name")
    max_tier = opt_int(form, "max_tier", 1, 3) or 3
    models_text = opt_text(form, "models", 2000) or ""
    models = [m.strip() for m in models_text.split(",") if m.strip()] or None
    plaintext, info = await gateway_state(request).store.create_key(tenant, name, max_tier, models)
    return await _page(request, dash, created=(plaintext, info), status_code=201)


@post("/keys/{key_id:str}/revoke", status_code=200, include_in_schema=False)
async def revoke_key(request: Request[Any, Any, Any], key_id: FromPath[str]) -> Response[Any]:
    """Revoke a key of the admin's scope; another tenant's key is a 404, as if it did not exist."""
    scope = tenant_scope(request)
    state = gateway_state(request)
    mine = {k.key_id for k in await state.store.list_keys(scope.tenant)}
    if key_id not in mine:
        raise NotFound("no such key")
    try:
        await state.store.revoke_key(key_id)
    finally:  # the revocation may have committed even if recording its event failed
        state.auth.forget(key_id)  # this process refuses it from the next request on
    return redirect("/admin/keys", query={"revoked": key_id})


KEY_ROUTES = [keys_page, create_key, revoke_key]
