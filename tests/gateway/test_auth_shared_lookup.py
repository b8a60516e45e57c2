"""Concurrent requests that miss the key cache share one lookup of the key database.

Before, every request in flight when a cached key expired started its own lookup: at concurrency
64 that was up to 64 queries through the engine's pool every ``auth_cache_s``, and those requests
were the slowest few percent (bench/RESULTS.md, issue 15). Sharing must not weaken anything the
cache promised: a lookup started before a revocation in this process is never joined, a paused
database still refuses every waiter within the timeout, and ``auth_cache_s: 0`` still asks the
store for every request.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from audit.store import AuditStore
from gateway.auth import Authenticator
from tests.gateway.test_auth_cache import _SlowStore
from gateway.errors import Unauthorized, Unavailable
from tests.gateway.conftest import base_config
from tests.support.harness import FakeUpstreams, GatewayHarness
from tests.support.stores import WrappedStore

CONCURRENT = 24


class SlowKeyLookups(WrappedStore):
    """The real store, with each key lookup counted and taking a second (a busy key database)."""

    def __init__(self, inner: AuditStore) -> None:
        super().__init__(inner)
        self.lookups = 0

    async def authenticate(self, key: str) -> Any:
        self.lookups += 1
        await asyncio.sleep(1.0)
        return await self.inner.authenticate(key)


def test_concurrent_requests_on_a_cold_cache_share_one_lookup(fakes: FakeUpstreams, db_url: str, tmp_path: Path,
                                                              classifier: Any) -> None:  # fmt: skip
    wrapped: list[SlowKeyLookups] = []

    def wrap(store: AuditStore) -> SlowKeyLookups:
        wrapped.append(SlowKeyLookups(store))
        return wrapped[0]

    cfg = base_config(fakes, limits={"auth_cache_s": 600})
    with GatewayHarness(db_url, tmp_path, cfg, classifier=classifier, store_wrapper=wrap) as gw:
        key = gw.create_key("acme")
        body = {"model": "chat", "messages": [{"role": "user", "content": "Summarise the plan for next week."}]}

        def one(_: int) -> int:
            r = httpx.post(gw.url + "/v1/chat/completions", json=body, timeout=60,
                           headers={"authorization": f"Bearer {key}"})  # fmt: skip
            return r.status_code

        with ThreadPoolExecutor(CONCURRENT) as pool:
            statuses = list(pool.map(one, range(CONCURRENT)))
        assert statuses == [200] * CONCURRENT
        # Every request arrived while the first lookup was out (it takes a second) or after it
        # was cached: one lookup in all.
        assert wrapped[0].lookups == 1
        assert len(fakes["vendor"].ledger) + len(fakes["local"].ledger) == CONCURRENT


async def _until(predicate: Any) -> None:
    while not predicate():  # noqa: ASYNC110 -- the store is the test's seam; it signals by counting
        await asyncio.sleep(0)


def test_a_lookup_started_before_forget_is_not_joined() -> None:
    async def main() -> None:
        store = _SlowStore()
        auth = Authenticator(store, ttl_s=600)
        before = [asyncio.ensure_future(auth.authenticate("tg_key")) for _ in range(3)]
        await _until(lambda: store.calls == 1)
        await asyncio.sleep(0)  # the other two joined it
        assert store.calls == 1
        store.revoked = True
        auth.forget("k1")
        after = asyncio.ensure_future(auth.authenticate("tg_key"))
        await _until(lambda: store.calls == 2)  # its own lookup, which reads the revocation
        store.release.set()
        assert [(await t).key_id for t in before] == ["k1"] * 3  # answered as read, once
        with pytest.raises(Unauthorized):
            await after
        with pytest.raises(Unauthorized):  # and nothing of the old lookup was cached
            await auth.authenticate("tg_key")

    asyncio.run(main())


def test_a_lookup_older_than_the_cache_is_not_joined() -> None:
    """Revoked in another process (no ``forget`` here), a key stops working within
    ``auth_cache_s``: a request after that does not take the answer of a lookup that started
    before the revocation, and what a joiner caches expires as the lookup's answer would."""

    async def main() -> None:
        now = [0.0]
        store = _SlowStore()
        auth = Authenticator(store, ttl_s=2, clock=lambda: now[0], timeout_s=600)
        first = asyncio.ensure_future(auth.authenticate("tg_key"))
        await _until(lambda: store.calls == 1)
        now[0] = 1.0
        joined = asyncio.ensure_future(auth.authenticate("tg_key"))  # within the cache's life
        await asyncio.sleep(0)
        assert store.calls == 1
        store.revoked = True  # committed elsewhere
        now[0] = 2.5
        late = asyncio.ensure_future(auth.authenticate("tg_key"))
        # its own lookup, which reads the revocation (bounded: a join would wait for it forever)
        await asyncio.wait_for(_until(lambda: store.calls == 2), 60)
        store.release.set()
        assert (await first).key_id == (await joined).key_id == "k1"
        with pytest.raises(Unauthorized):
            await late

    asyncio.run(main())


def test_a_paused_store_refuses_every_waiter_and_the_next_request_asks_again() -> None:
    async def main() -> None:
        store = _SlowStore()
        auth = Authenticator(store, ttl_s=600, timeout_s=0.3)
        waiters = [asyncio.ensure_future(auth.authenticate("tg_key")) for _ in range(3)]
        results = await asyncio.gather(*waiters, return_exceptions=True)
        assert all(isinstance(r, Unavailable) for r in results), results
        assert store.calls == 1
        store.release.set()  # the database is back: a new request does not join the cancelled lookup
        assert (await auth.authenticate("tg_key")).tenant == "acme"
        assert store.calls == 2
        await auth.aclose()

    asyncio.run(main())


def test_without_the_cache_every_request_asks_the_store() -> None:
    async def main() -> None:
        store = _SlowStore()
        auth = Authenticator(store, ttl_s=0)
        waiters = [asyncio.ensure_future(auth.authenticate("tg_key")) for _ in range(3)]
        await _until(lambda: store.calls == 3)
        store.release.set()
        assert [(await t).key_id for t in waiters] == ["k1"] * 3

    asyncio.run(main())
