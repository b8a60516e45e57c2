"""The admin dashboard: server-rendered pages under ``/admin``, with their own sign-in and CSRF.

``create_app`` mounts :func:`dashboard_router`. Every route sits behind one guard
(``security.make_admin_guard``): signed-out visitors are sent to the sign-in page, and every
unsafe request needs the session's CSRF token. Static assets (the stylesheet, the chart script and
the vendored Chart.js) are public.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from litestar import Request, Response, Router
from litestar.di import Provide
from litestar.exceptions import HTTPException
from litestar.static_files import create_static_files_router

from gateway.dashboard.context import DashboardContext
from gateway.dashboard.errors import DashboardError
from gateway.dashboard.exposure import EXPOSURE_ROUTES
from gateway.dashboard.keys import KEY_ROUTES
from gateway.dashboard.overview import OVERVIEW_ROUTES
from gateway.dashboard.policy import POLICY_ROUTES
from gateway.dashboard.probes import PROBE_ROUTES
from gateway.dashboard.quarantine import QUARANTINE_ROUTES
from gateway.dashboard.requests import REQUEST_ROUTES
from gateway.dashboard.safe_length import SAFE_LENGTH_ROUTES
from gateway.dashboard.security import make_admin_guard
from gateway.dashboard.signin import SIGNIN_ROUTES
from gateway.dashboard.telemetry import TELEMETRY_ROUTES
from gateway.dashboard.upstreams import UPSTREAM_ROUTES
from gateway.dashboard.vendors import VENDOR_ROUTES
from gateway.settings import DashboardSettings

__all__ = ["dashboard_router"]

_STATIC = Path(__file__).parent / "static"


def dashboard_router(config: DashboardSettings | None = None) -> Router:
    """A fresh router (with its own sign-in throttle) for one app; ``config`` is the settings'
    ``dashboard`` block."""
    ctx = DashboardContext.build(config or DashboardSettings())

    def on_dashboard_error(request: Request[Any, Any, Any], exc: DashboardError) -> Response[Any]:
        return ctx.templates.error(request, exc)

    def on_http_error(request: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
        # Litestar's own errors (a malformed path parameter, a body too large): an HTML page
        # with the status and no internal detail.
        err = DashboardError("The request could not be handled.")
        err.status_code = exc.status_code  # type: ignore[misc]  # litestar declares it per class; set per error
        err.title = "Request refused" if exc.status_code < 500 else "Server error"  # type: ignore[misc]  # as above
        return ctx.templates.error(request, err)

    static = create_static_files_router(path="/static", directories=[_STATIC], opt={"public": True},
                                        include_in_schema=False, name="admin-static")  # fmt: skip
    return Router(
        path="/admin",
        route_handlers=[
            static,
            *SIGNIN_ROUTES,
            *OVERVIEW_ROUTES,
            *REQUEST_ROUTES,
            *EXPOSURE_ROUTES,
            *UPSTREAM_ROUTES,
            *VENDOR_ROUTES,
            *PROBE_ROUTES,
            *SAFE_LENGTH_ROUTES,
            *QUARANTINE_ROUTES,
            *KEY_ROUTES,
            *POLICY_ROUTES,
            *TELEMETRY_ROUTES,
        ],  # fmt: skip
        guards=[make_admin_guard(ctx.config)],
        dependencies={"dash": Provide(lambda: ctx, sync_to_thread=False)},
        exception_handlers={DashboardError: on_dashboard_error, HTTPException: on_http_error},
        include_in_schema=False,
    )
