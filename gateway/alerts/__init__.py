"""Alerts on the gateway's alarms (``alerts`` settings): rules in ``rules.py``, webhook bodies in
``formats.py``, dedup and delivery in ``manager.py``; ``tiergate alerts test`` sends a test one."""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from typing import Any

from prometheus_client import CollectorRegistry

from gateway.alerts.rules import RULES, Alert

__all__ = ["RULES", "Alert", "run_alerts"]


@contextlib.asynccontextmanager
async def run_alerts(settings: Any, store: Any, registry: CollectorRegistry) -> AsyncIterator[Any]:
    from gateway.alerts.manager import AlertManager

    manager = AlertManager(settings.alerts, store.engine, registry, env=os.environ.get)
    manager.start()
    try:
        yield manager
    finally:
        await manager.aclose()
