"""The server's loops running the ladder and prefix-cache probes every interval.

Each round plans, checks the budget, runs and records one probe per configured upstream. A round
that fails (budget, upstream down, audit error) is logged by exception class and the loop goes on:
a probe must never take the server down. An over-budget plan is logged every round, never sent.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry

from gateway.probes.plan import OverBudget
from gateway.probes.record import LadderMetrics, PrefixCacheMetrics, record_ladder, record_prefix_cache
from gateway.probes.runner import ladder_for, prefix_cache_for, run_ladder, run_prefix_cache
from tiers.types import UpstreamKind

if TYPE_CHECKING:
    from gateway.probes.safe_length import SafeLengthBoard
    from gateway.settings import Settings
    from gateway.upstream import UpstreamClient

__all__ = ["scheduled_probe_tasks"]

log = logging.getLogger("tiergate.probe")
Sleep = Callable[[float], Awaitable[None]]


async def _ladders(clients: Mapping[str, UpstreamClient], settings: Settings, store: Any,
                   metrics: LadderMetrics, salt_key: bytes | None, board: SafeLengthBoard | None,
                   on_lowered: Callable[[], None] | None, sleep: Sleep) -> None:  # fmt: skip
    cfg = settings.probes
    assert cfg.ladder.interval_s is not None
    names = cfg.ladder.upstreams or list(clients)
    while True:
        await sleep(cfg.ladder.interval_s)
        for name in names:
            try:
                client = clients[name]
                plan = ladder_for(settings, client.settings)
                report = await run_ladder(client, plan, cfg, salt_key=salt_key)
                safe = board.safe_tokens(client.settings) if board is not None and board.known else None
                lowered = await record_ladder(report, record_event=store.record_event, metrics=metrics, store=store,
                                              lower_safe_length=cfg.ladder.lower_safe_length,
                                              safe_tokens=safe)  # fmt: skip
                if lowered is not None and on_lowered is not None:
                    on_lowered()
            except asyncio.CancelledError:
                raise
            except OverBudget as exc:
                log.error("scheduled ladder probe of %s not started: %s", name, exc)
            except Exception as exc:  # noqa: BLE001 -- a probe must never stop the server
                log.error("scheduled ladder probe of %s failed: %s", name, type(exc).__name__)


async def _prefix_caches(clients: Mapping[str, UpstreamClient], settings: Settings, store: Any,
                         metrics: PrefixCacheMetrics, salt_key: bytes | None, sleep: Sleep) -> None:  # fmt: skip
    cfg = settings.probes
    assert cfg.prefix_cache.interval_s is not None
    names = cfg.prefix_cache.upstreams or [n for n, c in clients.items() if c.settings.kind == UpstreamKind.ONPREM]
    while True:
        await sleep(cfg.prefix_cache.interval_s)
        for name in names:
            try:
                client = clients[name]
                report = await run_prefix_cache(client, prefix_cache_for(settings, client.settings), cfg,
                                                salt_key=salt_key)  # fmt: skip
                await record_prefix_cache(report, record_event=store.record_event, metrics=metrics)
            except asyncio.CancelledError:
                raise
            except OverBudget as exc:
                log.error("scheduled prefix-cache probe of %s not started: %s", name, exc)
            except Exception as exc:  # noqa: BLE001 -- a probe must never stop the server
                log.error("scheduled prefix-cache probe of %s failed: %s", name, type(exc).__name__)


def scheduled_probe_tasks(clients: Mapping[str, UpstreamClient], settings: Settings, store: Any, *,
                          registry: CollectorRegistry, salt_key: bytes | None,
                          board: SafeLengthBoard | None = None, on_lowered: Callable[[], None] | None = None,
                          sleep: Sleep = asyncio.sleep) -> list[asyncio.Task[None]]:  # fmt: skip
    """Start the loops ``probes.ladder.interval_s`` / ``probes.prefix_cache.interval_s`` ask for;
    cancel the tasks at shutdown. ``on_lowered``: called after a ladder lowered a safe length (the
    app re-reads the shared state at once instead of at its next poll)."""
    for block in ("ladder", "prefix_cache"):
        unknown = [n for n in getattr(settings.probes, block).upstreams if n not in clients]
        if unknown:
            raise ValueError(f"probes.{block}.upstreams: unknown upstream(s) {', '.join(unknown)}")
    tasks = []
    if settings.probes.ladder.interval_s is not None:
        tasks.append(asyncio.create_task(_ladders(clients, settings, store, LadderMetrics(registry), salt_key, board,
                                                  on_lowered, sleep)))  # fmt: skip
    if settings.probes.prefix_cache.interval_s is not None:
        tasks.append(asyncio.create_task(_prefix_caches(clients, settings, store, PrefixCacheMetrics(registry),
                                                        salt_key, sleep)))  # fmt: skip
    return tasks
