"""The drop-in OpenAI-compatible gateway: settings, the app factory, the pipeline and the CLI.

Imported lazily so that ``tiergate`` commands that never serve do not load the web stack.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Settings", "create_app", "load_settings"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from gateway.app import create_app

        return create_app
    if name in ("Settings", "load_settings"):
        from gateway import settings

        return getattr(settings, name)
    raise AttributeError(name)
