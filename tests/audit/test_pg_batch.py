"""The PostgreSQL chain writer (``audit.pg_batch``): one statement from a cached head, replicas
that move the head under each other, and connections that fail in the middle of a batch."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field
from typing import Any

import asyncpg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy.engine import make_url

from audit import AuditStore, AuditWriteError
from tests.audit.conftest import CP_KEY, FP_KEY, make_settings, open_store, outcome, request
from tests.support.fault_proxy import FaultProxy

KINDS = ("request", "outcome", "lazy_outcome", "refusal", "event", "duplicate")
WAVES = st.lists(st.lists(st.tuples(st.integers(0, 1), st.sampled_from(KINDS)), min_size=1, max_size=8),
                 min_size=1, max_size=4)  # fmt: skip


def _dsn(url: str) -> str:
    return url.replace("postgresql+asyncpg://", "postgresql://", 1)


async def _chained_seqs(url: str) -> list[int]:
    conn = await asyncpg.connect(_dsn(url))
    try:
        rows = await conn.fetch("SELECT seq FROM audit_requests UNION ALL SELECT seq FROM audit_outcomes "
                                "UNION ALL SELECT seq FROM audit_events ORDER BY 1")  # fmt: skip
        return [int(r[0]) for r in rows]
    finally:
        await conn.close()


async def _open(url: str, tmp_path: Any, **kw: Any) -> AuditStore:
    return await AuditStore.open(make_settings(url, tmp_path, **kw), fingerprint_key=FP_KEY, checkpoint_key=CP_KEY)


@dataclass
class _Ledger:
    """What the callers were told, over every example run against one database."""

    seqs: dict[int, int] = field(default_factory=dict)  # seq -> the replica that wrote it


async def _op(store: AuditStore, kind: str, seed_id: str) -> list[int]:
    if kind == "request":
        return [await store.record_request(request(segments=(uuid.uuid4().hex * 2,)))]
    if kind in ("outcome", "lazy_outcome"):
        return [await store.record_outcome(outcome(seed_id), lazy=kind == "lazy_outcome")]
    if kind == "refusal":
        rec = request()
        return list(await store.record_refusal(rec, outcome(rec.request_id, "refused", 403)))
    if kind == "event":
        return [await store.record_event("probe_run", {"ok": True})]
    return [await store.record_request(request(request_id=seed_id))]  # a duplicate: must fail alone


def test_two_replicas_interleaved_writes_keep_one_chain(postgres_db, tmp_path):
    """Two replicas writing concurrently in generated waves (requests, lazy and eager outcomes,
    refusals, events, duplicates): every write that returned is committed with the seq it was
    given, the seqs of both together are 1..n without a gap, a duplicate fails alone, nothing
    else is in the log, and the chain verifies. Each replica's cached head goes stale whenever
    the other one wrote, so both the one-statement path and the locked one run."""
    asyncio.run(_migrate(postgres_db, tmp_path))
    ledger = _Ledger()

    @settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(waves=WAVES)
    def run(waves: list[list[tuple[int, str]]]) -> None:
        asyncio.run(_example(postgres_db, tmp_path, waves, ledger))

    run()
    owners = [ledger.seqs[s] for s in sorted(ledger.seqs)]
    assert len(set(owners)) == 2 and any(a != b for a, b in zip(owners, owners[1:], strict=False))


async def _migrate(url: str, tmp_path: Any) -> None:
    store = await open_store(make_settings(url, tmp_path))
    await store.close()


async def _example(url: str, tmp_path: Any, waves: list[list[tuple[int, str]]], ledger: _Ledger) -> None:
    stores = [await _open(url, tmp_path, outcome_linger_s=0.01), await _open(url, tmp_path, outcome_linger_s=0.01)]
    try:
        seed = request()
        ledger.seqs[await stores[0].record_request(seed)] = 0
        for wave in waves:
            results = await asyncio.gather(*(_op(stores[r], kind, seed.request_id) for r, kind in wave),
                                           return_exceptions=True)  # fmt: skip
            for (replica, kind), result in zip(wave, results, strict=True):
                if kind == "duplicate":
                    assert isinstance(result, AuditWriteError), result
                    continue
                assert isinstance(result, list), result
                for seq in result:
                    assert seq not in ledger.seqs, f"seq {seq} handed out twice"
                    ledger.seqs[seq] = replica
        assert sorted(ledger.seqs) == list(range(1, len(ledger.seqs) + 1))
        assert await _chained_seqs(url) == sorted(ledger.seqs)
        report = await stores[1].verify()
        assert report.ok, report
    finally:
        for store in stores:
            await store.close()


def test_replicas_taking_turns_extend_each_others_chain(postgres_db, tmp_path):
    """Strict turns: every write finds the head moved by the other replica since its own last one."""

    async def body() -> None:
        first = await open_store(make_settings(postgres_db, tmp_path))
        second = await _open(postgres_db, tmp_path)
        try:
            seqs = []
            for _ in range(10):
                seqs.append(await first.record_request(request()))
                seqs.append(await second.record_request(request()))
            assert seqs == list(range(1, 21))
            assert (await first.verify()).ok
        finally:
            await first.close()
            await second.close()

    asyncio.run(body())


def _proxied(url: str, proxy: FaultProxy) -> str:
    return make_url(url).set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)


@pytest.mark.parametrize("reached_server", [False, True])
def test_connection_lost_mid_batch_fails_every_caller(reached_server, postgres_db, tmp_path):
    """The writer's connection is reset while a batch of five is in flight: before the statement
    reached the server (held by a pause), or after it committed there but before the answer came
    back (held by latency). Every caller is refused either way (so nothing is forwarded); the
    batch is in the log whole or not at all; the next writes reconnect and continue the same chain
    after whatever did commit."""
    url = make_url(postgres_db)

    async def body(proxy: FaultProxy) -> None:
        await _migrate(postgres_db, tmp_path)
        store = await _open(_proxied(postgres_db, proxy), tmp_path, write_timeout_s=15.0)
        try:
            assert await store.record_request(request()) == 1  # connected, head cached
            recs = [request() for _ in range(5)]
            if reached_server:
                proxy.latency(2.0)  # each chunk waits 2 s: the answer is still on its way back
            else:
                proxy.pause()
            calls = asyncio.gather(*(store.record_request(r) for r in recs), return_exceptions=True)
            if reached_server:
                # The server's state, read on a connection of its own: there is no event to await.
                while len(await _chained_seqs(postgres_db)) < 6:  # noqa: ASYNC110 -- polls another process (the database)
                    await asyncio.sleep(0.02)
            else:
                await asyncio.sleep(0.3)
            proxy.reset_all()
            results = await calls
            assert all(isinstance(r, AuditWriteError) for r in results), results
            committed = await _chained_seqs(postgres_db)
            assert committed == (list(range(1, 7)) if reached_server else [1])
            proxy.heal()
            after = [await store.record_request(request()) for _ in range(3)]
            assert after == [len(committed) + 1, len(committed) + 2, len(committed) + 3]
            report = await store.verify()
            assert report.ok, report
        finally:
            proxy.heal()
            await store.close()

    with FaultProxy(url.host or "127.0.0.1", url.port or 5432) as proxy:
        asyncio.run(body(proxy))


def test_writer_commits_synchronously_whatever_the_database_default(postgres_db, tmp_path):
    """A database configured with ``synchronous_commit = off`` does not weaken the write-ahead
    guarantee: the writer's own session has it on (and the writer would refuse to write if not)."""
    name = make_url(postgres_db).database

    async def body() -> None:
        admin = await asyncpg.connect(_dsn(postgres_db))
        await admin.execute(f'ALTER DATABASE "{name}" SET synchronous_commit = off')
        await admin.close()
        store = await open_store(make_settings(postgres_db, tmp_path))
        try:
            fresh = await asyncpg.connect(_dsn(postgres_db))
            assert await fresh.fetchval("SHOW synchronous_commit") == "off"  # the database default
            await fresh.close()
            await store.record_request(request())
            # Only the writer's own session can say what it commits with.
            conn = store._writer._pg._conn
            assert conn is not None and await conn.fetchval("SHOW synchronous_commit") == "on"
        finally:
            await store.close()

    asyncio.run(body())
