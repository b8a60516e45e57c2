"""Per-key rate limits: requests and prompt tokens per minute, in fixed one-minute windows.

Two backends share one contract (``tests/gateway/test_ratelimit.py`` runs against both):
:class:`MemoryLimiter` for one process, :class:`RedisLimiter` for replicas sharing a Redis.
Rate limiting is the one step allowed to fail open: when Redis fails the request passes and
``on_backend_error`` is called (the app counts it in a metric) — a documented, counted choice.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

__all__ = ["Limiter", "MemoryLimiter", "RedisLimiter", "Verdict"]

WINDOW_S = 60


@dataclass(frozen=True, slots=True)
class Verdict:
    allowed: bool
    retry_after_s: int = 0
    failed_open: bool = False


ALLOW = Verdict(True)


class Limiter(Protocol):
    async def hit(self, subject: str, *, kind: str, amount: int, limit: int | None) -> Verdict:
        """Add ``amount`` to ``subject``'s ``kind`` ("requests" / "tokens") in this minute.

        Refused when the window's total would exceed ``limit``; ``limit=None`` always allows.
        """
        ...

    async def close(self) -> None: ...


def _window(now: float) -> tuple[int, int]:
    start = int(now // WINDOW_S) * WINDOW_S
    return start, max(1, int(start + WINDOW_S - now))


class MemoryLimiter:
    """In-process counters; fine for one replica, lost on restart."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._counts: dict[tuple[str, str], tuple[int, int]] = {}

    async def hit(self, subject: str, *, kind: str, amount: int, limit: int | None) -> Verdict:
        if limit is None:
            return ALLOW
        start, retry = _window(self._clock())
        window, used = self._counts.get((subject, kind), (start, 0))
        if window != start:
            used = 0
        if used + amount > limit:
            self._counts[(subject, kind)] = (start, used)
            return Verdict(False, retry)
        self._counts[(subject, kind)] = (start, used + amount)
        if len(self._counts) > 100_000:  # drop stale windows so memory stays bounded
            self._counts = {k: v for k, v in self._counts.items() if v[0] == start}
        return ALLOW

    async def close(self) -> None:
        return None


# Add only when the total stays within the limit, atomically, so refused requests don't eat budget.
_LUA = """
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local amount = tonumber(ARGV[1])
if used + amount > tonumber(ARGV[2]) then return -1 end
redis.call('INCRBY', KEYS[1], amount)
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[3]))
return used + amount
"""


class RedisLimiter:
    """Counters in Redis, shared by every replica. Fails open on any Redis error."""

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "tiergate:rl:",
        on_backend_error: Callable[[], None] = lambda: None,
        clock: Callable[[], float] = time.time,
        timeout_s: float = 0.25,
    ) -> None:
        import redis.asyncio as aioredis

        self._redis = aioredis.Redis.from_url(
            url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s, retry_on_timeout=False
        )
        self._script = self._redis.register_script(_LUA)
        self._prefix = prefix
        self._on_error = on_backend_error
        self._clock = clock

    async def hit(self, subject: str, *, kind: str, amount: int, limit: int | None) -> Verdict:
        if limit is None:
            return ALLOW
        start, retry = _window(self._clock())
        key = f"{self._prefix}{subject}:{kind}:{start}"
        try:
            result = await self._script(keys=[key], args=[amount, limit, WINDOW_S * 2])
        except Exception:  # noqa: BLE001 -- any Redis failure: documented fail-open, counted by the caller's metric
            self._on_error()
            return Verdict(True, failed_open=True)
        if int(result) < 0:
            return Verdict(False, retry)
        return ALLOW

    async def close(self) -> None:
        await self._redis.aclose()
