"""``DashboardConfig``: the dashboard's few knobs, fixed when the router is built."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DashboardConfig"]


@dataclass(frozen=True, slots=True)
class DashboardConfig:
    session_lifetime_s: int = 8 * 3600
    """A session ends this long after sign-in, however active."""
    session_idle_s: int = 3600
    """A session unused for this long ends."""
    ip_failures: int = 20
    """Failed sign-ins one client address may make per ``ip_window_s`` (any usernames)."""
    ip_window_s: float = 15 * 60
    """The window of ``ip_failures``."""
    page_size: int = 50
    """Rows per page on the requests page."""
    try_it_max_chars: int = 20_000
    """Longest sample the policy page classifies."""
    manifest_timeout_s: float = 2.0
    """How long the upstreams page waits for an engine's manifest."""
