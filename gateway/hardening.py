"""Is each on-prem engine hardened? Read its manifest at start and periodically; fail closed.

An on-prem upstream counts as hardened only while its last manifest fetch succeeded and
``engine.manifest_problems`` found nothing. Until the first fetch, after any fetch error, and
whenever problems are listed, Tier 3 is not routed to it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

import httpx

from engine import ManifestError, fetch_manifest, manifest_problems
from gateway.metrics import Metrics
from gateway.settings import UpstreamSettings
from tiers.types import UpstreamKind

__all__ = ["HardeningMonitor"]

log = logging.getLogger("tiergate.hardening")


class HardeningMonitor:
    def __init__(
        self,
        upstreams: list[UpstreamSettings],
        clients: dict[str, httpx.AsyncClient],
        metrics: Metrics,
        *,
        on_change: Callable[[str, dict[str, object]], Awaitable[object]] | None = None,
    ) -> None:
        self._upstreams = [u for u in upstreams if u.kind == UpstreamKind.ONPREM]
        self._clients = clients
        self._metrics = metrics
        self._on_change = on_change
        self._hardened: dict[str, bool] = {u.name: False for u in self._upstreams}
        self._problems: dict[str, list[str]] = {u.name: ["manifest not read yet"] for u in self._upstreams}
        self._task: asyncio.Task[None] | None = None

    def is_hardened(self, upstream: UpstreamSettings) -> bool:
        return self._hardened.get(upstream.name, False)

    def problems(self, name: str) -> list[str]:
        return list(self._problems.get(name, []))

    async def refresh(self, upstream: UpstreamSettings) -> bool:
        try:
            manifest = await fetch_manifest(self._clients[upstream.name], upstream.base_url)
            problems = manifest_problems(manifest, upstream.context_window)
        except ManifestError as exc:
            problems = [str(exc)]
        except Exception as exc:  # noqa: BLE001 -- anything unexpected: not hardened
            problems = [f"manifest check failed: {type(exc).__name__}"]
        ok = not problems
        changed = ok != self._hardened.get(upstream.name)
        self._hardened[upstream.name] = ok
        self._problems[upstream.name] = problems
        self._metrics.onprem_hardened.labels(upstream.name).set(1 if ok else 0)
        if changed:
            level = logging.INFO if ok else logging.WARNING
            log.log(level, "onprem upstream %s hardened=%s problems=%d", upstream.name, ok, len(problems))
            if self._on_change is not None:
                with contextlib.suppress(Exception):
                    await self._on_change(
                        "onprem_hardening", {"upstream": upstream.name, "hardened": ok, "problems": problems}
                    )
        return ok

    async def refresh_all(self) -> None:
        await asyncio.gather(*(self.refresh(u) for u in self._upstreams))

    async def _loop(self) -> None:
        interval = min((u.manifest_interval_s for u in self._upstreams), default=60.0)
        while True:
            await asyncio.sleep(interval)
            await self.refresh_all()

    async def start(self) -> None:
        if not self._upstreams:
            return
        await self.refresh_all()
        self._task = asyncio.create_task(self._loop())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
