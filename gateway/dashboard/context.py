"""What every dashboard handler is given: the config, the templates, the sign-in throttle."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from litestar import Request
from litestar.di import NamedDependency

from gateway.dashboard.render import Templates
from gateway.dashboard.security import FailureWindow, TenantScope, current_session
from gateway.settings import DashboardSettings

if TYPE_CHECKING:
    from gateway.app import GatewayState

__all__ = ["Dash", "DashboardContext", "gateway_state", "tenant_scope"]


@dataclass(frozen=True)
class DashboardContext:
    config: DashboardSettings
    templates: Templates
    failures: FailureWindow

    @classmethod
    def build(cls, config: DashboardSettings) -> DashboardContext:
        return cls(config, Templates(), FailureWindow(config.ip_failures, config.ip_window_s))


# How handlers declare that they want the context (Litestar's explicit named dependency).
Dash = NamedDependency[DashboardContext]


def gateway_state(request: Request[Any, Any, Any]) -> GatewayState:
    return request.app.state.gateway  # type: ignore[no-any-return]  # litestar's State holds Any; set by create_app


def tenant_scope(request: Request[Any, Any, Any]) -> TenantScope:
    return TenantScope(current_session(request).admin.tenant)
