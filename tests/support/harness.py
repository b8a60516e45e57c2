"""Start a whole gateway on 127.0.0.1 against fake upstreams, for any test package to reuse.

    with FakeUpstreams() as ups, GatewayHarness(db_url, tmp_path, ups.upstream_config()) as gw:
        key = gw.create_key("acme")
        client = gw.openai(key)
        client.chat.completions.create(model="m", messages=[...])
        gw.rows("SELECT * FROM audit_requests")

The harness migrates the database, creates keys through the real store (in its own event loop),
then serves ``create_app`` under uvicorn in a thread with any seams the test injects.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import openai
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from migrations import upgrade

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

    from audit.types import KeyInfo, Outcome, RequestRecord
    from gateway.seams import AuditStore as SeamStore

from tests.support.fake_upstream import FakeUpstream
from tests.support.servers import ServerThread

__all__ = ["FakeUpstreams", "GatewayHarness", "SECRETS", "fetch_rows"]

SECRETS = {
    "fingerprint_key": "f" * 64,
    "checkpoint_key": "c" * 64,
    "cache_salt_key": "s" * 64,
}


def fetch_rows(db_url: str, sql: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Run one query on a fresh connection (so it sees only committed rows)."""

    async def run() -> list[dict[str, Any]]:
        engine = create_async_engine(db_url)
        try:
            async with engine.connect() as conn:
                result = await conn.execute(text(sql), params or {})
                return [dict(r._mapping) for r in result]
        finally:
            await engine.dispose()

    box: list[list[dict[str, Any]]] = []
    # A private loop in a private thread: callers may already be inside another event loop.
    import threading

    t = threading.Thread(target=lambda: box.append(asyncio.run(run())))
    t.start()
    t.join()
    return box[0]


class FakeUpstreams:
    """Serves several fake upstreams; ``upstream_config`` writes their ``upstreams:`` entries."""

    def __init__(self, *fakes: FakeUpstream) -> None:
        self.fakes = {f.name: f for f in fakes}
        self.servers: dict[str, ServerThread] = {}

    def __enter__(self) -> FakeUpstreams:
        for name, fake in self.fakes.items():
            self.servers[name] = ServerThread(fake.app, lifespan="off").start()
        return self

    def __exit__(self, *exc: object) -> None:
        for server in self.servers.values():
            server.stop()

    def __getitem__(self, name: str) -> FakeUpstream:
        return self.fakes[name]

    def base_url(self, name: str) -> str:
        return self.servers[name].url + "/v1"


class GatewayHarness:
    def __init__(
        self,
        db_url: str,
        tmp_path: Path,
        config: dict[str, Any],
        *,
        classifier: Any = None,
        store_wrapper: Callable[[Any], Any] | None = None,
        **seams: Any,
    ) -> None:
        from gateway.settings import Settings

        merged = {"secrets": SECRETS, "state_dir": str(tmp_path / "var"), **config}
        audit = {"url": db_url, "checkpoint_dir": str(tmp_path / "checkpoints"), **config.get("audit", {})}
        merged["audit"] = audit
        merged.setdefault("server", {})
        merged["server"] = {"auto_migrate": False, **merged["server"]}
        self.settings = Settings(**merged)
        self.db_url = db_url
        self._classifier = classifier
        self._wrapper = store_wrapper
        self._seams = seams
        self._server: ServerThread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.store: Any = None

    # ---- store, in the gateway's own loop ----------------------------------------------------

    def _open_store(self) -> Any:
        from audit.store import AuditStore

        s = self.settings.secrets
        return AuditStore.open(
            self.settings.audit,
            fingerprint_key=s.fingerprint_key.get_secret_value().encode(),  # type: ignore[union-attr]  # required by Settings
            checkpoint_key=s.checkpoint_key.get_secret_value().encode(),  # type: ignore[union-attr]  # required by Settings
        )

    def admin(self, work: Callable[[Any], Any]) -> Any:
        """Run ``await work(store)`` with a short-lived store of its own (keys, migrations)."""

        async def run() -> Any:
            store = await self._open_store()
            try:
                return await work(store)
            finally:
                await store.close()

        box: list[Any] = []
        import threading

        t = threading.Thread(target=lambda: box.append(asyncio.run(run())))
        t.start()
        t.join()
        return box[0] if box else None

    def create_key(self, tenant: str = "acme", *, max_tier: int = 3, models: list[str] | None = None) -> str:
        plaintext, _info = self.admin(lambda st: st.create_key(tenant, f"{tenant}-key", max_tier, models))
        return str(plaintext)

    def revoke(self, key: str) -> None:
        key_id = key.split("_", 2)[1]
        assert self.admin(lambda st: st.revoke_key(key_id))

    # ---- lifecycle ---------------------------------------------------------------------------

    def __enter__(self) -> GatewayHarness:
        from gateway.app import create_app
        from gateway.serving import uvicorn_options

        self.admin(lambda st: upgrade(st))
        store = None
        if self._wrapper is not None:
            store = _LazyStore(self._open_store, self._wrapper)
        app = create_app(self.settings, store=store, classifier=self._classifier, **self._seams)
        if store is not None:
            app.on_shutdown.append(store.close)
        # Served like `tiergate serve` serves it: read deadlines, keep-alive, connection cap.
        self._server = ServerThread(app, options=uvicorn_options(self.settings.server)).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.stop()

    @property
    def url(self) -> str:
        assert self._server is not None
        return self._server.url

    def openai(self, key: str, **kwargs: Any) -> openai.OpenAI:
        return openai.OpenAI(api_key=key, base_url=self.url + "/v1", max_retries=0, timeout=30, **kwargs)

    def rows(self, sql: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Query the audit database once every outcome has landed (see :meth:`settle`)."""
        self.settle()
        return fetch_rows(self.db_url, sql, params)

    def settle(self, timeout_s: float = 3.0) -> None:
        """Wait until every forwarded request has its outcome row: the gateway writes outcomes
        after the client has its answer, so a test reading right after a response could race."""
        import time

        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            (row,) = fetch_rows(self.db_url, _UNSETTLED)
            if not row["n"]:
                return
            time.sleep(0.02)


_UNSETTLED = (
    "SELECT count(*) AS n FROM audit_requests r WHERE r.forwarded AND NOT EXISTS "
    "(SELECT 1 FROM audit_outcomes o WHERE o.request_id = r.request_id)"
)


class _LazyStore:
    """Opens the real store inside the server's event loop on first use, then wraps it: the
    gateway's ``AuditStore`` seam (``gateway.seams``), member by member."""

    def __init__(self, opener: Callable[[], Any], wrapper: Callable[[Any], Any]) -> None:
        self._opener = opener
        self._wrapper = wrapper
        self._inner: SeamStore | None = None
        self._lock: asyncio.Lock | None = None

    async def _get(self) -> SeamStore:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._inner is None:
                self._inner = self._wrapper(await self._opener())
            inner = self._inner
        return inner

    @property
    def engine(self) -> AsyncEngine:
        if self._inner is None:
            raise RuntimeError("the store opens on its first call in the server's loop")
        return self._inner.engine

    async def record_request(self, rec: RequestRecord) -> int:
        return await (await self._get()).record_request(rec)

    async def record_outcome(self, out: Outcome, *, lazy: bool = False) -> int:
        return await (await self._get()).record_outcome(out, lazy=lazy)

    async def record_refusal(self, rec: RequestRecord, out: Outcome) -> tuple[int, int]:
        return await (await self._get()).record_refusal(rec, out)

    async def authenticate(self, presented: str) -> KeyInfo | None:
        return await (await self._get()).authenticate(presented)

    async def ping(self, timeout_s: float = 5.0) -> None:
        await (await self._get()).ping(timeout_s)

    async def record_event(self, kind: str, detail: dict[str, Any]) -> int:
        return await (await self._get()).record_event(kind, detail)

    async def active_quarantines(self) -> tuple[Any, ...]:
        return await (await self._get()).active_quarantines()

    async def active_length_caps(self) -> tuple[Any, ...]:
        return await (await self._get()).active_length_caps()

    def __getattr__(self, name: str) -> Any:  # what the dashboard reads beyond the seam
        async def call(*args: Any, **kwargs: Any) -> Any:
            return await getattr(await self._get(), name)(*args, **kwargs)

        return call

    async def close(self) -> None:
        wrapped: Any = self._inner  # the test's wrapper closes its real store; the seam has no close
        if wrapped is not None:
            with contextlib.suppress(Exception):
                await wrapped.close()
