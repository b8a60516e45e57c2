"""The key cache in front of the key store: a revocation in this process is never undone by a
lookup that was already in flight. The store is a fake at its true seam (``authenticate``)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from gateway.auth import Authenticator
from gateway.errors import Unauthorized


class _SlowStore:
    """Answers with the key as it was when the lookup started, after ``release`` is set."""

    def __init__(self) -> None:
        self.revoked = False
        self.calls = 0
        self.release = asyncio.Event()

    async def authenticate(self, raw_key: str) -> Any:
        self.calls += 1
        seen_revoked = self.revoked  # the row as read before the revocation committed
        await self.release.wait()
        return SimpleNamespace(key_id="k1", tenant="acme", max_tier=2, models=None,
                               revoked_at="now" if seen_revoked else None)  # fmt: skip


def test_a_lookup_in_flight_during_forget_is_not_cached() -> None:
    async def main() -> None:
        store = _SlowStore()
        auth = Authenticator(store, ttl_s=600)
        in_flight = asyncio.ensure_future(auth.authenticate("tg_key"))
        while store.calls == 0:  # noqa: ASYNC110 -- the store is the test's seam; it signals by counting
            await asyncio.sleep(0)
        store.revoked = True
        auth.forget("k1")  # revoked in this process while that lookup is still out
        store.release.set()
        assert (await in_flight).key_id == "k1"  # answered once, as read
        with pytest.raises(Unauthorized):  # asked again, not served from the cache
            await auth.authenticate("tg_key")
        assert store.calls == 2

    asyncio.run(main())


def test_forget_drops_a_cached_key_and_others_stay_cached() -> None:
    async def main() -> None:
        store = _SlowStore()
        store.release.set()
        auth = Authenticator(store, ttl_s=600)
        await auth.authenticate("tg_key")
        await auth.authenticate("tg_key")
        assert store.calls == 1  # cached
        auth.forget("some-other-key")
        await auth.authenticate("tg_key")
        assert store.calls == 1  # forgetting another key leaves this one cached
        store.revoked = True
        auth.forget("k1")
        with pytest.raises(Unauthorized):
            await auth.authenticate("tg_key")
        assert store.calls == 2

    asyncio.run(main())
