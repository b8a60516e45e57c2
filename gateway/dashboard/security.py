"""Who is signed in, and is this form really theirs: the guard every dashboard route passes.

* **Sessions** are server-side rows (``audit.admins``); the browser holds only a random token in
  an HttpOnly, SameSite=Strict cookie scoped to ``/admin`` (Secure when served over HTTPS).
* **CSRF**: every unsafe request must carry a ``csrf_token`` form field equal to the session's
  token (synchronizer pattern); the sign-in form, which has no session yet, uses a double-submit
  cookie. A foreign ``Origin`` is refused before the form is even read.
* **Fail closed**: the guard sits on the whole dashboard router; a route is reachable signed-out
  only when it says so with ``opt={"public": True}``.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from litestar import Request
from litestar.connection import ASGIConnection
from litestar.datastructures import Cookie
from litestar.handlers.base import BaseRouteHandler

from audit.admins import AdminInfo, AdminSession, load_session
from gateway.dashboard.errors import BadInput, CsrfRejected, NotFound, SignInRequired
from gateway.settings import DashboardSettings

__all__ = [
    "PRESIGN_COOKIE",
    "SESSION_COOKIE",
    "FailureWindow",
    "make_admin_guard",
    "new_presign_token",
    "current_session",
    "presign_cookie",
    "scope_tenant",
    "session_cookie",
    "TenantScope",
]

SESSION_COOKIE = "tg_admin_session"
PRESIGN_COOKIE = "tg_admin_presign"
_SCOPE_KEY = "tiergate_admin_session"
_SAFE = {"GET", "HEAD", "OPTIONS"}


def _secure(connection: ASGIConnection[Any, Any, Any, Any]) -> bool:
    return connection.url.scheme == "https"


def session_cookie(connection: ASGIConnection[Any, Any, Any, Any], token: str | None,
                   max_age: int = 0) -> Cookie:  # fmt: skip
    """The session cookie; ``token`` None expires it."""
    return Cookie(key=SESSION_COOKIE, value=token or "", path="/admin", httponly=True,
                  samesite="strict", secure=_secure(connection),
                  max_age=max_age if token else 0)  # fmt: skip


def presign_cookie(connection: ASGIConnection[Any, Any, Any, Any], value: str | None) -> Cookie:
    return Cookie(key=PRESIGN_COOKIE, value=value or "", path="/admin", httponly=True,
                  samesite="strict", secure=_secure(connection),
                  max_age=600 if value else 0)  # fmt: skip


def new_presign_token() -> str:
    return secrets.token_urlsafe(32)


class FailureWindow:
    """Failed sign-ins per client address in a sliding window, in this process.

    The per-account lockout lives in the database (it holds across replicas); this bounds one
    address guessing across many usernames, which a per-account counter cannot see.
    """

    def __init__(self, limit: int, window_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._limit = limit
        self._window = window_s
        self._clock = clock
        self._hits: dict[str, deque[float]] = {}

    def _trim(self, key: str) -> deque[float]:
        q = self._hits.setdefault(key, deque())
        cutoff = self._clock() - self._window
        while q and q[0] <= cutoff:
            q.popleft()
        return q

    def retry_after(self, key: str) -> int:
        """Seconds until ``key`` may try again; 0 when it may now."""
        q = self._trim(key)
        if len(q) < self._limit:
            return 0
        return max(1, int(q[0] + self._window - self._clock()) + 1)

    def fail(self, key: str) -> None:
        if len(self._hits) > 100_000:  # bounded memory under a spray of addresses
            self._hits.clear()
        self._trim(key).append(self._clock())


def _same_origin(connection: ASGIConnection[Any, Any, Any, Any]) -> bool:
    """False when the browser says the form came from another site (Origin, else Referer)."""
    source = connection.headers.get("origin") or connection.headers.get("referer")
    if not source or source == "null":
        return source is None  # "null" is an opaque origin: never ours
    parts = urlsplit(source)
    return f"{parts.scheme}://{parts.netloc}" == f"{connection.url.scheme}://{connection.url.netloc}"


async def _form_token(connection: ASGIConnection[Any, Any, Any, Any]) -> str:
    # The form is parsed once and cached in the connection state, so the handler reads it again
    # for free.
    request: Request[Any, Any, Any] = Request(connection.scope, connection.receive)
    try:
        form = await request.form()
    except Exception:  # noqa: BLE001 -- any unreadable form is a 400, never a 500
        raise BadInput("the form could not be read") from None
    value = form.get("csrf_token")
    return value if isinstance(value, str) else ""


def _engine(connection: ASGIConnection[Any, Any, Any, Any]) -> Any:
    return connection.app.state.gateway.store.engine


Guard = Callable[[ASGIConnection[Any, Any, Any, Any], BaseRouteHandler], Awaitable[None]]


def make_admin_guard(config: DashboardSettings) -> Guard:
    """The guard for the whole dashboard router."""

    async def admin_guard(connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler) -> None:
        await _check(connection, handler, config)

    return admin_guard


async def _check(connection: ASGIConnection[Any, Any, Any, Any], handler: BaseRouteHandler,
                 config: DashboardSettings) -> None:  # fmt: skip
    """Require a live session (unless the route is public) and a valid CSRF token on writes."""
    unsafe = connection.scope.get("method", "GET") not in _SAFE
    if unsafe and not _same_origin(connection):
        raise CsrfRejected("this form was sent from another site")
    if handler.opt.get("public"):
        if unsafe:
            expected = connection.cookies.get(PRESIGN_COOKIE, "")
            given = await _form_token(connection)
            if not expected or not hmac.compare_digest(given.encode(), expected.encode()):
                raise CsrfRejected("the sign-in form expired; please try again")
        return
    token = connection.cookies.get(SESSION_COOKIE, "")
    session = await load_session(_engine(connection), token,
                                 idle_s=config.session_idle_s) if token else None  # fmt: skip
    if session is None:
        raise SignInRequired()
    connection.scope[_SCOPE_KEY] = session  # type: ignore[literal-required]  # our key in the ASGI scope
    if unsafe:
        given = await _form_token(connection)
        if not given or not hmac.compare_digest(given.encode(), session.csrf_token.encode()):
            raise CsrfRejected("the form is missing its security token or it does not match")


def current_session(connection: ASGIConnection[Any, Any, Any, Any]) -> AdminSession:
    session = connection.scope.get(_SCOPE_KEY)
    if not isinstance(session, AdminSession):  # a route reached without the guard: refuse rather than guess
        raise SignInRequired()
    return session


@dataclass(frozen=True, slots=True)
class TenantScope:
    """Which tenants an admin may see: ``None`` all (platform admin), else exactly one."""

    tenant: str | None

    def allows(self, tenant: str | None) -> bool:
        return self.tenant is None or tenant == self.tenant

    def check(self, tenant: str | None) -> None:
        """404 for another tenant's row: the answer must not reveal that it exists."""
        if not self.allows(tenant):
            raise NotFound("no such item")

    def tenants(self, requested: str | None = None) -> tuple[str, ...]:
        """The tenant filter for a query: the admin's own, or what a platform admin asked for."""
        if self.tenant is not None:
            return (self.tenant,)
        return (requested,) if requested else ()


def scope_tenant(admin: AdminInfo) -> TenantScope:
    return TenantScope(admin.tenant)
