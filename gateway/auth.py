"""Client API keys -> the :class:`Principal` a request acts for.

Keys are stored hashed and compared in constant time by the audit store; this module adds a short
in-memory cache (``limits.auth_cache_s``, keyed by a SHA-256 of the key, never the key itself) so a
slow password hash is not paid on every request. A key revoked in the dashboard stops working in
that gateway process at once (``forget``); revoked anywhere else (the CLI, another worker or
replica), within that many seconds; 0 disables the cache. A lookup slower than
``limits.auth_timeout_s`` (a paused or unreachable key database) is refused with 503, so a client
gets an explicit error, not a hang.

With the cache on, concurrent requests that miss it for the same key share one lookup: when a
cached key expired under load, every request in flight used to start its own (at concurrency 64,
up to 64 queries through the engine's pool at once, every ``auth_cache_s``), and those requests
were the slowest 2-5 % (bench/RESULTS.md, issue 15). A lookup started before a ``forget`` is never
joined: a request after a revocation always asks the store again.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from gateway.errors import Unauthorized, Unavailable
from gateway.seams import KeyStore
from tiers.types import Tier

__all__ = ["Authenticator", "Principal", "bearer_token"]


@dataclass(frozen=True, slots=True)
class Principal:
    key_id: str
    tenant: str
    max_tier: Tier
    models: frozenset[str] | None  # None: every model

    def may_use(self, model: str) -> bool:
        return self.models is None or model in self.models

    @classmethod
    def from_key_info(cls, info: Any) -> Principal:
        models = getattr(info, "models", None)
        return cls(
            key_id=info.key_id,
            tenant=info.tenant,
            max_tier=Tier(info.max_tier),
            models=frozenset(models) if models else None,
        )


def bearer_token(headers: Any) -> str | None:
    """The key from ``Authorization: Bearer …`` (what the openai SDK sends), ``x-api-key`` (the
    anthropic SDK) or ``api-key``."""
    value: str | None = headers.get("authorization")
    if value:
        scheme, _, token = value.partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            return token.strip()
        return None
    alt = headers.get("x-api-key") or headers.get("api-key")
    return alt.strip() if alt else None


@dataclass(slots=True)
class _Shared:
    generation: int
    started: float  # on the authenticator's clock: what it answers is as old as this
    task: asyncio.Task[Any]
    waiting: int = 0


class Authenticator:
    def __init__(
        self,
        store: KeyStore,
        *,
        ttl_s: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
        timeout_s: float = 5.0,
    ) -> None:
        self._store = store
        self._ttl = ttl_s
        # limits.auth_timeout_s: a paused key database must give a fast 503, not a hang
        self._timeout = timeout_s
        self._clock = clock
        self._cache: dict[bytes, tuple[float, Principal]] = {}
        self._generation = 0  # bumped by ``forget``
        self._abandoned: set[asyncio.Task[Any]] = set()
        # digest -> (generation it started in, the lookup, how many requests wait on it)
        self._inflight: dict[bytes, _Shared] = {}

    async def authenticate(self, raw_key: str | None) -> Principal:
        """Raise :class:`Unauthorized` for a missing, unknown or revoked key."""
        if not raw_key or len(raw_key) > 512:
            raise Unauthorized()
        digest = hashlib.sha256(raw_key.encode("utf-8", "surrogatepass")).digest()
        now = self._clock()
        hit = self._cache.get(digest)
        if hit is not None and hit[0] > now:
            return hit[1]
        generation = self._generation
        try:
            info, read_at = await self._lookup(raw_key, digest, generation, now)
        except Exception:  # noqa: BLE001 -- the key database is down: refuse, never let the request through
            raise Unavailable("authentication is unavailable", code="auth_unavailable") from None
        if info is None or getattr(info, "revoked_at", None) is not None:
            self._cache.pop(digest, None)
            raise Unauthorized()
        principal = Principal.from_key_info(info)
        # A key forgotten while this lookup was in flight may have been read before its revocation
        # committed: such an answer is used once, never cached.
        if self._ttl > 0 and generation == self._generation:
            if len(self._cache) > 10_000:
                self._cache.clear()
            self._cache[digest] = (read_at + self._ttl, principal)
        return principal

    def forget(self, key_id: str) -> None:
        """Drop the cached principal of ``key_id`` (a key just revoked in this process)."""
        self._generation += 1
        for digest in [d for d, (_, p) in self._cache.items() if p.key_id == key_id]:
            del self._cache[digest]

    async def _lookup(self, raw_key: str, digest: bytes, generation: int, now: float) -> tuple[Any, float]:
        """The store's answer within the timeout, else :class:`TimeoutError`, and when its lookup
        started. A lookup older than the cache's lifetime is not joined: a key revoked elsewhere
        must stop working within ``auth_cache_s`` of the revocation, and a lookup kept going by
        ever new waiters could answer as the key was long before.

        The lookup runs as a task the caller stops waiting for at the deadline, rather than under
        ``asyncio.timeout``: cancelling a query in flight makes SQLAlchemy close that connection
        gracefully first, and on a paused database that close waits its own 2 s, which the client
        would otherwise wait out too. The cancelled task finishes its cleanup in the background.
        A shared lookup is cancelled only by the last request still waiting for it.
        """
        shared = self._inflight.get(digest) if self._ttl > 0 else None
        if shared is None or shared.generation != generation or shared.task.done() or now - shared.started >= self._ttl:
            shared = _Shared(generation, now, asyncio.ensure_future(self._store.authenticate(raw_key)))
            if self._ttl > 0:
                self._inflight[digest] = shared
                shared.task.add_done_callback(partial(self._drop_inflight, digest, shared))
        task = shared.task
        shared.waiting += 1
        try:
            await asyncio.wait({task}, timeout=self._timeout)
        finally:
            shared.waiting -= 1
            if not task.done() and shared.waiting == 0:  # timed out, or the request was cancelled
                self._drop_inflight(digest, shared, task)  # nobody joins a lookup being cancelled
                task.cancel()
                self._abandoned.add(task)  # referenced until its cleanup ends
                task.add_done_callback(self._drop_abandoned)
        if not task.done() or task.cancelled():
            raise TimeoutError
        return task.result(), shared.started

    def _drop_inflight(self, digest: bytes, shared: _Shared, _task: asyncio.Task[Any]) -> None:
        if self._inflight.get(digest) is shared:
            del self._inflight[digest]

    async def aclose(self, timeout_s: float = 5.0) -> None:
        """Wait (bounded) for abandoned lookups to finish their cleanup: a lookup task still holding
        a database connection when the loop stops would leave that connection to the garbage
        collector, which cannot close an async driver's connection."""
        if self._abandoned:
            await asyncio.wait(set(self._abandoned), timeout=timeout_s)

    def _drop_abandoned(self, task: asyncio.Task[Any]) -> None:
        self._abandoned.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved: a late failure nobody waits for must not be logged
