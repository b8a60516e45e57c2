"""Alerts on the gateway's alarms (``alerts`` settings): rules in ``rules.py``, webhook bodies in
``formats.py``, dedup and delivery in ``manager.py``; ``tiergate alerts test`` sends a test one."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry

from gateway.alerts.rules import RULES, Alert

__all__ = ["RULES", "Alert", "run_alerts"]


def _log_lock(state_dir: Path) -> int | None:
    """The right to follow the audit log for alerts: one process of those sharing ``state_dir``
    (uvicorn workers), or each recorded alarm would alert once per worker. Counters are each
    process's own, so every process watches its own."""
    state_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(state_dir / "alerts.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


@contextlib.asynccontextmanager
async def run_alerts(settings: Any, store: Any, registry: CollectorRegistry) -> AsyncIterator[Any]:
    from gateway.alerts.manager import AlertManager

    lock = _log_lock(Path(settings.state_dir))
    manager = AlertManager(settings.alerts, store.engine, registry, env=os.environ.get, follow_log=lock is not None)
    manager.start()
    try:
        yield manager
    finally:
        await manager.aclose()
        if lock is not None:
            os.close(lock)
