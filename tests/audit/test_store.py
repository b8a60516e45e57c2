"""The write-ahead store contract, run on SQLite and PostgreSQL alike (``db_url``)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import datetime

import pytest
from sqlalchemy import func, select, text

from audit import AuditStore, AuditUnavailable, AuditWriteError
from audit.db import make_engine
from audit.models import AuditOutcome, AuditRequest, AuditSegment
from tests.audit.conftest import CP_KEY, FP_KEY, make_settings, open_store, outcome, request


async def _count(url: str, table) -> int:  # a separate engine: only committed rows are visible
    engine = make_engine(url)
    try:
        async with engine.connect() as conn:
            return int((await conn.execute(select(func.count()).select_from(table))).scalar_one())
    finally:
        await engine.dispose()


def test_record_request_is_committed_when_it_returns(db_url, tmp_path):
    """A row is visible to an independent connection as soon as record_request returns."""

    async def body() -> None:
        store = await open_store(make_settings(db_url, tmp_path))
        try:
            rec = request(tier=2, findings={"EMAIL_ADDRESS": 2}, stripped=True, segments=("ab" * 32,))
            seq = await store.record_request(rec)
            assert seq == 1
            assert await _count(db_url, AuditRequest.__table__) == 1
            engine = make_engine(db_url)
            async with engine.connect() as conn:
                row = (await conn.execute(select(AuditRequest.__table__))).one()
            await engine.dispose()
            assert (row.request_id, row.tier, row.stripped, row.forwarded) == (rec.request_id, 2, True, True)
            assert row.findings == '{"EMAIL_ADDRESS":2}'
        finally:
            await store.close()

    asyncio.run(body())


def test_concurrent_records_get_one_contiguous_sequence(db_url, tmp_path):
    """300 concurrent writers: every caller gets a distinct seq, together 1..300, all committed."""

    async def body() -> None:
        store = await open_store(make_settings(db_url, tmp_path))
        try:
            recs = [request(segments=(f"{i:064x}",)) for i in range(300)]
            seqs = await asyncio.gather(*(store.record_request(r) for r in recs))
            assert sorted(seqs) == list(range(1, 301))
            assert await _count(db_url, AuditRequest.__table__) == 300
            assert await _count(db_url, AuditSegment.__table__) == 300
            assert (await store.verify()).ok
        finally:
            await store.close()

    asyncio.run(body())


def test_outcome_and_refusal_rows(db_url, tmp_path):
    """Outcomes append their own rows; a refusal writes request (not forwarded) + outcome together."""

    async def body() -> None:
        store = await open_store(make_settings(db_url, tmp_path))
        try:
            rec = request()
            await store.record_request(rec)
            await store.record_outcome(outcome(rec.request_id))
            refused = request(tier=3, upstream=None, kind=None)
            a, b = await store.record_refusal(refused, outcome(refused.request_id, "refused", 403))
            assert b == a + 1
            engine = make_engine(db_url)
            async with engine.connect() as conn:
                fwd = dict((await conn.execute(
                    select(AuditRequest.request_id, AuditRequest.forwarded))).all())  # fmt: skip
                statuses = dict((await conn.execute(
                    select(AuditOutcome.request_id, AuditOutcome.status))).all())  # fmt: skip
            await engine.dispose()
            assert fwd == {rec.request_id: True, refused.request_id: False}
            assert statuses == {rec.request_id: "ok", refused.request_id: "refused"}
            with pytest.raises(AuditWriteError):
                await store.record_refusal(request(), outcome("another-id"))
        finally:
            await store.close()

    asyncio.run(body())


def test_duplicate_request_id_fails_alone(db_url, tmp_path):
    """A record the database rejects fails its own caller only; its batch-mates still commit."""

    async def body() -> None:
        store = await open_store(make_settings(db_url, tmp_path))
        try:
            first = request()
            await store.record_request(first)
            batch = [request() for _ in range(20)] + [request(request_id=first.request_id)]
            results = await asyncio.gather(*(store.record_request(r) for r in batch),
                                           return_exceptions=True)  # fmt: skip
            failures = [r for r in results if isinstance(r, BaseException)]
            assert len(failures) == 1 and isinstance(failures[0], AuditWriteError)
            assert await _count(db_url, AuditRequest.__table__) == 21
            assert (await store.verify()).ok
        finally:
            await store.close()

    asyncio.run(body())


def test_invalid_records_are_refused_before_writing(sqlite_db, tmp_path):
    """A naive timestamp, a bad tier or an over-long field raise AuditWriteError and write nothing."""

    async def body() -> None:
        store = await open_store(make_settings(sqlite_db, tmp_path))
        try:
            good = request()
            for bad in (replace(good, created_at=datetime(2026, 9, 1)), replace(good, tier=4),
                        replace(good, client_model="m" * 500), replace(good, prompt_tokens=-1),
                        replace(good, endpoint="images")):  # fmt: skip
                with pytest.raises(AuditWriteError) as err:
                    await store.record_request(bad)
                assert "m" * 50 not in str(err.value)
            assert await _count(sqlite_db, AuditRequest.__table__) == 0
        finally:
            await store.close()

    asyncio.run(body())


def test_write_fails_closed_without_schema(db_url, tmp_path):
    """With no schema (a broken database), record_request raises AuditWriteError: forward nothing."""

    async def body() -> None:
        store = await AuditStore.open(make_settings(db_url, tmp_path), fingerprint_key=FP_KEY,
                                      checkpoint_key=CP_KEY)  # fmt: skip
        try:
            with pytest.raises(AuditWriteError):
                await store.record_request(request())
            with pytest.raises(AuditUnavailable):
                await store.ping()
        finally:
            await store.close()

    asyncio.run(body())


def test_unreachable_database_is_unavailable(tmp_path):
    """A PostgreSQL URL nobody listens on: ping raises AuditUnavailable, writes AuditWriteError."""

    async def body() -> None:
        url = "postgresql+asyncpg://postgres@127.0.0.1:1/nothing"
        store = await AuditStore.open(make_settings(url, tmp_path, write_timeout_s=5),
                                      fingerprint_key=FP_KEY, checkpoint_key=CP_KEY)  # fmt: skip
        try:
            with pytest.raises(AuditUnavailable):
                await store.ping()
            with pytest.raises(AuditWriteError):
                await store.record_request(request())
        finally:
            await store.close()

    asyncio.run(body())


def test_writes_after_close_fail(sqlite_db, tmp_path):
    """After close() nothing can claim to be recorded."""

    async def body() -> None:
        store = await open_store(make_settings(sqlite_db, tmp_path))
        await store.close()
        with pytest.raises(AuditWriteError):
            await store.record_request(request())

    asyncio.run(body())


def test_sqlite_is_in_wal_mode_with_full_sync(sqlite_db, tmp_path):
    """The embedded database runs in WAL mode with synchronous=FULL (2) by default."""

    async def body() -> None:
        store = await open_store(make_settings(sqlite_db, tmp_path))
        try:
            async with store.engine.connect() as conn:
                mode = (await conn.execute(text("PRAGMA journal_mode"))).scalar()
                sync = (await conn.execute(text("PRAGMA synchronous"))).scalar()
            assert (mode, sync) == ("wal", 2)
        finally:
            await store.close()

    asyncio.run(body())


def test_no_prompt_text_reaches_the_database_files(sqlite_db, tmp_path):
    """Only the keyed fingerprint of a prompt is stored: its text appears nowhere in DB or WAL."""
    from audit import fingerprint, normalize_for_fingerprint

    marker = "CANARY-7f3a9c secret merger plan for Globex"

    async def body() -> None:
        store = await open_store(make_settings(sqlite_db, tmp_path))
        try:
            fp = fingerprint(FP_KEY, normalize_for_fingerprint(marker))
            assert store.fingerprint(normalize_for_fingerprint(marker)) == fp
            await store.record_request(request(fingerprint=fp, segments=(fp,)))
            await store.record_event("probe", {"result": "ok"})
        finally:
            await store.close()

    asyncio.run(body())
    blobs = b"".join(p.read_bytes() for p in tmp_path.glob("audit.db*"))
    assert blobs and marker.encode() not in blobs and b"CANARY-7f3a9c" not in blobs


def test_write_times_out_when_the_database_is_locked(db_url, tmp_path):
    """While another session holds the chain lock, record_request fails closed after the timeout."""

    async def body() -> None:
        store = await open_store(make_settings(db_url, tmp_path, write_timeout_s=1.0))
        blocker = make_engine(db_url)
        try:
            async with blocker.connect() as conn:
                if db_url.startswith("sqlite"):
                    await conn.exec_driver_sql("PRAGMA busy_timeout=0")
                    await conn.exec_driver_sql("UPDATE audit_chain_head SET seq = seq")  # write lock
                else:
                    await conn.execute(text("SELECT seq FROM audit_chain_head FOR UPDATE"))
                with pytest.raises(AuditWriteError, match="timed out"):
                    await store.record_request(request())
                await conn.rollback()
            # Once the lock is gone the log works again (the timed-out row may or may not be there).
            seq = await store.record_request(request())
            assert seq >= 1
            assert (await store.verify()).ok
        finally:
            await blocker.dispose()
            await store.close()

    asyncio.run(body())


def test_maintenance_writes_checkpoints_and_purges(sqlite_db, tmp_path):
    """run_maintenance writes signed checkpoints on its interval and runs the scheduled purge."""
    from datetime import timedelta

    from tests.audit.conftest import T0, Clock

    clock = Clock(T0 - timedelta(days=120))

    async def body() -> None:
        settings = make_settings(sqlite_db, tmp_path, checkpoint_interval_s=0.05, purge_interval_s=0.05)
        store = await open_store(settings, clock)
        try:
            await store.record_request(request(at=clock.now))
            clock.now = T0
            await store.record_request(request(at=T0))
            task = asyncio.create_task(store.run_maintenance())
            for _ in range(200):
                await asyncio.sleep(0.05)
                async with store.engine.connect() as conn:
                    purged = (await conn.execute(text(
                        "SELECT count(*) FROM audit_events WHERE kind = 'purge_completed'"))).scalar()  # fmt: skip
                if purged and list((tmp_path / "checkpoints").glob("checkpoint-*.json")):
                    break
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert purged >= 1
            report = await store.verify()
            assert report.ok and report.checkpoints_checked >= 1 and report.purged_through == 1
        finally:
            await store.close()

    asyncio.run(body())


def test_lazy_outcome_rides_with_the_next_write_ahead_row(db_url, tmp_path):
    """A lazy outcome is not committed on its own while it lingers; the next ordinary record
    commits it in the same transaction (adjacent seqs), and close() flushes one still waiting."""

    async def body() -> None:
        store = await open_store(make_settings(db_url, tmp_path, outcome_linger_s=5))
        try:
            first = request()
            await store.record_request(first)
            lazy = asyncio.ensure_future(store.record_outcome(outcome(first.request_id), lazy=True))
            await asyncio.sleep(0.3)
            assert not lazy.done() and await _count(db_url, AuditOutcome.__table__) == 0
            second = request()
            seq = await store.record_request(second)
            assert await lazy in (seq - 1, seq + 1)  # one transaction: next to the request row
            assert await _count(db_url, AuditOutcome.__table__) == 1
            pending = asyncio.ensure_future(store.record_outcome(outcome(second.request_id), lazy=True))
            await asyncio.sleep(0.05)
        finally:
            await store.close()
        assert await pending == seq + 2
        assert await _count(db_url, AuditOutcome.__table__) == 2

    asyncio.run(body())


def test_lazy_outcome_commits_alone_after_the_linger(db_url, tmp_path):
    """With no other traffic a lazy outcome is committed after ``outcome_linger_s`` anyway."""

    async def body() -> None:
        store = await open_store(make_settings(db_url, tmp_path, outcome_linger_s=0.2))
        try:
            rec = request()
            await store.record_request(rec)
            loop = asyncio.get_running_loop()
            t0 = loop.time()
            await store.record_outcome(outcome(rec.request_id), lazy=True)
            assert loop.time() - t0 >= 0.15
            assert await _count(db_url, AuditOutcome.__table__) == 1
        finally:
            await store.close()

    asyncio.run(body())


def test_in_memory_sqlite_is_refused(tmp_path):
    """An in-memory SQLite audit log would vanish with the process: opening it is refused."""

    async def body() -> None:
        await AuditStore.open(make_settings("sqlite+aiosqlite:///:memory:", tmp_path),
                              fingerprint_key=FP_KEY, checkpoint_key=CP_KEY)  # fmt: skip

    with pytest.raises(ValueError, match="must be a file"):
        asyncio.run(body())
