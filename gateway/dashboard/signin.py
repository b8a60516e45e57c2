"""Sign-in and sign-out. Failed attempts are throttled per address here (any usernames) and per
(username, address) pair in the database (``audit.lockout``).

Every refused sign-in (unknown or disabled user, wrong password, locked pair) gets one and the same
answer, byte for byte: the form again, with one message, the username not echoed and the
pre-sign token the browser already holds, so the answer tells no one which admins exist.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get, post

from audit.admins import check_sign_in, create_session, end_session
from gateway.dashboard.context import Dash, gateway_state
from gateway.dashboard.errors import TooManyAttempts
from gateway.dashboard.render import redirect
from gateway.dashboard.security import (
    SESSION_COOKIE,
    new_presign_token,
    presign_cookie,
    session_cookie,
)

__all__ = ["SIGNIN_ROUTES"]

_PUBLIC = {"public": True}
_REFUSED = "Wrong username or password (or too many failed sign-ins from this address: wait a few minutes)."


def _safe_next(value: str | None) -> str:
    """Only a dashboard path: an attacker's ``next=//evil.example`` must not redirect away."""
    if value and value.startswith("/admin") and not value.startswith("//") and "\\" not in value:
        return value
    return "/admin/"


def _client(request: Request[Any, Any, Any]) -> str:
    return request.client.host if request.client else "unknown"


def _form_page(request: Request[Any, Any, Any], dash: Dash, *, error: str = "",
               next_path: str | None = None, status_code: int = 200,
               presign: str | None = None) -> Response[Any]:  # fmt: skip
    token = presign or new_presign_token()
    return dash.templates.page(
        request, "signin.html", status_code=status_code,
        cookies=[presign_cookie(request, token)], presign=token, error=error,
        next=_safe_next(next_path if next_path is not None else request.query_params.get("next")),
    )  # fmt: skip


@get("/sign-in", opt=_PUBLIC, name="admin-sign-in", include_in_schema=False)
async def sign_in_form(request: Request[Any, Any, Any], dash: Dash) -> Response[Any]:
    """The sign-in form, with a fresh double-submit CSRF token."""
    return _form_page(request, dash)


@post("/sign-in", opt=_PUBLIC, status_code=200, include_in_schema=False)
async def sign_in(request: Request[Any, Any, Any], dash: Dash) -> Response[Any]:
    """Check the password; on success start a session and go where the admin was heading."""
    form = await request.form()
    username = str(form.get("username") or "")[:200]
    password = str(form.get("password") or "")[:1024]
    address = _client(request)
    wait = dash.failures.retry_after(address)
    if wait:
        raise TooManyAttempts(f"Too many failed sign-ins from your address; try again in {wait} s.",
                              wait)  # fmt: skip
    engine = gateway_state(request).store.engine
    result = await check_sign_in(engine, username, password, client=address)
    if result.admin is None:
        dash.failures.fail(address)
        # The token the guard just matched against the browser's cookie: a fresh one would make
        # each refusal differ from the next (see the module docstring).
        return _form_page(request, dash, error=_REFUSED, next_path=str(form.get("next") or ""),
                          status_code=401, presign=str(form.get("csrf_token") or ""))  # fmt: skip
    previous = request.cookies.get(SESSION_COOKIE)
    if previous:  # a fresh token at every sign-in; the browser's old session ends here
        await end_session(engine, previous)
    token, _session = await create_session(engine, result.admin.username,
                                           lifetime_s=dash.config.session_lifetime_s)  # fmt: skip
    cookies = [session_cookie(request, token, dash.config.session_lifetime_s),
               presign_cookie(request, None)]  # fmt: skip
    return redirect(_safe_next(str(form.get("next") or "")), cookies=cookies)


@post("/sign-out", status_code=200, include_in_schema=False)
async def sign_out(request: Request[Any, Any, Any]) -> Response[Any]:
    """End the session on the server (the cookie alone is worth nothing afterwards)."""
    token = request.cookies.get(SESSION_COOKIE, "")
    if token:
        await end_session(gateway_state(request).store.engine, token)
    return redirect("/admin/sign-in", cookies=[session_cookie(request, None)])


SIGNIN_ROUTES = [sign_in_form, sign_in, sign_out]
