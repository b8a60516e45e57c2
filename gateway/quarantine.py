"""Quarantine as each replica sees it: a snapshot of the shared state, refreshed within a bound.

The state lives in the audit database (``audit.quarantine``), written by ``tiergate upstream
quarantine`` or the dashboard on any machine. Every replica polls it every ``poll_s`` seconds; with
``redis_url`` set, a change is also announced on Redis (``channel``) and every replica re-reads at
once. The bound on how long a replica routes by an outdated state is therefore ``poll_s`` plus one
read (Redis only makes it shorter, and losing Redis never makes it longer).

Failure, decided here once:

* until its **first** read succeeds, a replica does not know what is quarantined and refuses
  every request with 503 ``quarantine_state_unknown`` (fail closed: routing to a quarantined
  vendor is exactly what a quarantine exists to stop);
* a **later** read that fails keeps the last state read (a database blip must not take every
  upstream out of routing, and the write-ahead row would fail anyway while the database is down),
  counts ``tiergate_quarantine_read_failures`` and exposes the state's age in
  ``tiergate_quarantine_state_age_seconds``: alert on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge
from pydantic import BaseModel, ConfigDict, Field

from audit.quarantine import QuarantineEntry

__all__ = ["QuarantineBoard", "QuarantineMonitor", "QuarantineSettings", "announce_change", "target_problem"]

log = logging.getLogger("tiergate.quarantine")


class QuarantineSettings(BaseModel):
    """The ``quarantine:`` block: how fast a quarantine reaches every replica."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    poll_s: float = Field(2.0, gt=0, le=60)
    """Seconds between two reads of the shared quarantine state: the bound on how long a replica
    keeps routing to an upstream quarantined elsewhere (plus one read)."""
    read_timeout_s: float = Field(5.0, gt=0)
    """A read slower than this counts as failed (the last state read is kept)."""
    channel: str = Field("tiergate:quarantine", min_length=1, max_length=200)
    """Redis channel on which changes are announced when ``redis_url`` is set (replicas then
    re-read at once instead of at their next poll)."""


class QuarantineBoard:
    """The quarantines this replica routes by; replaced whole by each successful read."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._entries: tuple[QuarantineEntry, ...] = ()
        self._read_at: float | None = None
        self._clock = clock

    @property
    def known(self) -> bool:
        """False until the first successful read: routing then refuses everything."""
        return self._read_at is not None

    @property
    def entries(self) -> tuple[QuarantineEntry, ...]:
        return self._entries

    def age_s(self) -> float | None:
        return None if self._read_at is None else self._clock() - self._read_at

    def replace(self, entries: tuple[QuarantineEntry, ...]) -> None:
        self._entries = entries
        self._read_at = self._clock()

    def covering(self, upstream: str, provider: str | None, provider_model: str) -> tuple[QuarantineEntry, ...]:
        return tuple(e for e in self._entries if e.covers(upstream, provider, provider_model))


class QuarantineMetrics:
    def __init__(self, registry: CollectorRegistry, board: QuarantineBoard) -> None:
        self.read_failures = Counter("tiergate_quarantine_read_failures",
                                     "Reads of the shared quarantine state that failed (last state kept)",
                                     registry=registry)  # fmt: skip
        self.active = Gauge("tiergate_quarantines_active", "Quarantines in force, as last read",
                            registry=registry)  # fmt: skip
        self.age = Gauge("tiergate_quarantine_state_age_seconds",
                         "Seconds since the quarantine state was last read successfully (-1: never)",
                         registry=registry)  # fmt: skip
        self.age.set_function(lambda: -1.0 if (a := board.age_s()) is None else a)
        # Counted after the board is replaced: a request routed after the count moved routes by that read.
        self.reads = Counter("tiergate_quarantine_reads", "Successful reads of the shared quarantine state",
                             registry=registry)  # fmt: skip


Loader = Callable[[], Awaitable[tuple[QuarantineEntry, ...]]]


class QuarantineMonitor:
    """Polls the shared state into a :class:`QuarantineBoard`; optionally woken through Redis."""

    def __init__(self, store: Any, board: QuarantineBoard, settings: QuarantineSettings, *,
                 registry: CollectorRegistry, redis_url: str | None = None,
                 loader: Loader | None = None) -> None:  # fmt: skip
        self._board = board
        self._settings = settings
        self._redis_url = redis_url
        self._load: Loader = loader or store.active_quarantines
        self._metrics = QuarantineMetrics(registry, board)
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._lock = asyncio.Lock()

    async def refresh(self) -> bool:
        """Read the state now; False (state kept, failure counted) when the read fails."""
        async with self._lock:  # one read at a time: a late slow read must not undo a newer one
            try:
                async with asyncio.timeout(self._settings.read_timeout_s):
                    entries = await self._load()
            except Exception as exc:  # noqa: BLE001 -- any read failure keeps the last state read (counted, logged)
                self._metrics.read_failures.inc()
                log.warning("quarantine state unreadable (%s); routing by the last state read",
                            type(exc).__name__)  # fmt: skip
                return False
            self._board.replace(entries)
            self._metrics.active.set(len(entries))
            self._metrics.reads.inc()
            return True

    def poke(self) -> None:
        """Re-read at once (a change made in this process, or announced on Redis)."""
        self._wake.set()

    async def start(self) -> None:
        await self.refresh()  # a failure leaves the board unknown: requests are refused until a read works
        self._tasks.append(asyncio.create_task(self._poll()))
        if self._redis_url:
            self._tasks.append(asyncio.create_task(self._listen(self._redis_url)))

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()

    async def _poll(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._settings.poll_s):
                    await self._wake.wait()
            self._wake.clear()
            await self.refresh()

    async def _listen(self, url: str) -> None:
        """Wake the poller on every announcement; reconnects after a failure (polling goes on)."""
        import redis.asyncio as aioredis

        while True:
            client = aioredis.Redis.from_url(url, socket_connect_timeout=2)
            try:
                async with client.pubsub() as pubsub:
                    await pubsub.subscribe(self._settings.channel)
                    # A change announced while we were not subscribed would be missed: re-read.
                    self.poke()
                    async for message in pubsub.listen():
                        if message.get("type") == "message":
                            self.poke()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 -- announcements are an optimisation; polling covers any failure
                log.warning("quarantine announcements unavailable (%s); polling every %.1fs",
                            type(exc).__name__, self._settings.poll_s)  # fmt: skip
            finally:
                with contextlib.suppress(Exception):
                    await client.aclose()
            await asyncio.sleep(max(self._settings.poll_s, 1.0))


async def announce_change(redis_url: str | None, channel: str) -> bool:
    """Tell every replica to re-read now; best effort (False when Redis is absent or failed:
    replicas then see the change at their next poll)."""
    if not redis_url:
        return False
    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url(redis_url, socket_connect_timeout=2, socket_timeout=2)
    try:
        await client.publish(channel, "changed")
        return True
    except Exception:  # noqa: BLE001 -- a failed announcement only means replicas learn by polling
        return False
    finally:
        with contextlib.suppress(Exception):
            await client.aclose()


def target_problem(upstreams: Iterable[Any], upstream: str | None, provider: str | None,
                   model: str | None) -> str | None:  # fmt: skip
    """Why the target would quarantine nothing configured (a misspelt provider, a model id of
    another vendor), or None when some configured upstream is covered."""
    if (upstream is None) == (provider is None):
        return "name exactly one of an upstream or a provider"
    ups = list(upstreams)
    if upstream is not None:
        ups = [u for u in ups if u.name == upstream]
        if not ups:
            return f"no upstream named {upstream!r} in the config"
    else:
        assert provider is not None
        ups = [u for u in ups if u.provider == provider.lower()]
        if not ups:
            return f"no upstream in the config declares provider {provider.lower()!r}"
    if model is not None and not any(model in u.models.values() for u in ups):
        return (
            f"{model!r} is not a vendor model id of that target (an upstream's `models` "
            "values, as recorded in provider_model)"
        )
    return None
