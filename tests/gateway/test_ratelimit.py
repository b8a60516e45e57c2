"""One contract for both rate-limit backends (in-process and real Redis), plus Redis fail-open."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from gateway.ratelimit import MemoryLimiter, RedisLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_020.0  # 20 s into a minute window

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["memory", "redis"])
def make_limiter(request: pytest.FixtureRequest) -> Callable[[Clock], object]:
    if request.param == "memory":
        return lambda clock: MemoryLimiter(clock=clock)
    url = request.getfixturevalue("redis_url")
    prefix = request.getfixturevalue("unique_prefix")
    return lambda clock: RedisLimiter(url, prefix=prefix, clock=clock)


def run(coro):
    return asyncio.run(coro)


def test_requests_per_minute(make_limiter) -> None:
    """The limit-th request passes, the next is refused with a retry hint, a new minute resets."""
    clock = Clock()

    async def scenario() -> None:
        lim = make_limiter(clock)
        try:
            for _ in range(3):
                assert (await lim.hit("k1", kind="requests", amount=1, limit=3)).allowed
            refused = await lim.hit("k1", kind="requests", amount=1, limit=3)
            assert not refused.allowed and 1 <= refused.retry_after_s <= 60
            assert (await lim.hit("k2", kind="requests", amount=1, limit=3)).allowed  # per key
            clock.now += 60
            assert (await lim.hit("k1", kind="requests", amount=1, limit=3)).allowed
        finally:
            await lim.close()

    run(scenario())


def test_tokens_refusal_does_not_consume(make_limiter) -> None:
    """A token charge that would exceed the budget is refused and not counted; a smaller one fits."""
    clock = Clock()

    async def scenario() -> None:
        lim = make_limiter(clock)
        try:
            assert (await lim.hit("k", kind="tokens", amount=700, limit=1000)).allowed
            assert not (await lim.hit("k", kind="tokens", amount=400, limit=1000)).allowed
            assert (await lim.hit("k", kind="tokens", amount=300, limit=1000)).allowed
            assert not (await lim.hit("k", kind="tokens", amount=1, limit=1000)).allowed
            assert (await lim.hit("k", kind="requests", amount=1, limit=1)).allowed  # kinds apart
            assert (await lim.hit("k", kind="tokens", amount=10**9, limit=None)).allowed
        finally:
            await lim.close()

    run(scenario())


def test_redis_down_fails_open_and_counts() -> None:
    """With Redis unreachable, requests pass (documented fail-open) and each failure is counted."""
    errors: list[int] = []

    async def scenario() -> None:
        lim = RedisLimiter("redis://127.0.0.1:1/0", on_backend_error=lambda: errors.append(1))
        try:
            for _ in range(3):
                verdict = await lim.hit("k", kind="requests", amount=1, limit=1)
                assert verdict.allowed and verdict.failed_open
        finally:
            await lim.close()

    run(scenario())
    assert len(errors) == 3
