"""Server-rendered pages: one Jinja2 environment (autoescaping on), strict security headers.

No inline script or style is ever emitted, so the Content-Security-Policy can forbid both: chart
data travels in ``<script type="application/json">`` blocks, which browsers never execute.
"""

from __future__ import annotations

import functools
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from litestar import Request, Response
from litestar.datastructures import Cookie
from litestar.response import Redirect

from gateway.dashboard.errors import DashboardError, SignInRequired, TooManyAttempts

if TYPE_CHECKING:
    from jinja2 import Environment

__all__ = ["SECURITY_HEADERS", "Templates", "redirect"]

SECURITY_HEADERS = {
    "content-security-policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
        "frame-ancestors 'none'"
    ),
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "same-origin",
    "cache-control": "no-store",
}

_TEMPLATES = Path(__file__).parent / "templates"


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S UTC") if value is not None else ""


def _printable(value: Any) -> str:
    # Tenants and model names come from clients: control characters become visible.
    text = "" if value is None else str(value)
    return "".join(ch if ch.isprintable() else "\N{REPLACEMENT CHARACTER}" for ch in text)


class Templates:
    def __init__(self, directory: Path = _TEMPLATES) -> None:
        self._directory = directory

    @functools.cached_property
    def env(self) -> Environment:
        """Made at the first page: Jinja2's import is ≈ 30 ms of a start that may serve none."""
        from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

        env = Environment(
            loader=FileSystemLoader(str(self._directory)),
            autoescape=select_autoescape(["html"]),
            undefined=StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        env.filters["when"] = _when
        env.filters["p"] = _printable
        return env

    def render(self, name: str, **context: Any) -> str:
        return self.env.get_template(name).render(**context)

    def page(self, request: Request[Any, Any, Any], name: str, *, status_code: int = 200,
             cookies: list[Cookie] | None = None, headers: dict[str, str] | None = None,
             **context: Any) -> Response[str]:  # fmt: skip
        from gateway.dashboard.security import current_session

        session = None
        if request.scope.get("tiergate_admin_session") is not None:
            session = current_session(request)
        context.setdefault("active", "")
        html = self.render(name, session=session, admin=session.admin if session else None,
                           csrf_token=session.csrf_token if session else "", **context)  # fmt: skip
        return Response(html, media_type="text/html; charset=utf-8", status_code=status_code,
                        headers={**SECURITY_HEADERS, **(headers or {})}, cookies=cookies)  # fmt: skip

    def error(self, request: Request[Any, Any, Any], exc: DashboardError) -> Response[Any]:
        if isinstance(exc, SignInRequired):
            target = request.url.path if request.method == "GET" else "/admin/"
            return redirect("/admin/sign-in", query={"next": target})
        headers = {}
        if isinstance(exc, TooManyAttempts):
            headers["retry-after"] = str(exc.retry_after_s)
        return self.page(request, "error.html", status_code=exc.status_code, headers=headers,
                         title=exc.title, message=exc.message)  # fmt: skip


def redirect(path: str, *, query: dict[str, str] | None = None,
             cookies: list[Cookie] | None = None) -> Response[Any]:  # fmt: skip
    """303 See Other: after a POST the browser follows with a GET."""
    return Redirect(path, status_code=303, query_params=query, cookies=cookies,
                    headers=dict(SECURITY_HEADERS))  # fmt: skip
