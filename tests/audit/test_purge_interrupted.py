"""An interrupted purge: verify explains the gap by the purge event, and a re-run completes it."""

from __future__ import annotations

import asyncio
import threading
from datetime import timedelta

import pytest
from sqlalchemy import func, select, text

from audit import AuditStore
from audit.models import AuditEvent, AuditOutcome, AuditRequest
from tests.audit.conftest import (
    CP_KEY,
    FP_KEY,
    T0,
    Clock,
    make_settings,
    open_store,
    outcome,
    request,
)

OLD = 8  # old requests, each with its outcome: seqs 1..16 fall out of retention
NEW = 3  # recent requests: seqs 17..19


class Interrupted(Exception):
    """Stands for a crash between two purge batches."""


async def _seed(store: AuditStore, clock: Clock) -> None:
    clock.now = T0 - timedelta(days=200)
    for _ in range(OLD):
        rec = request(at=clock.now)
        await store.record_request(rec)
        await store.record_outcome(outcome(rec.request_id))
    await store.write_checkpoint()  # pins seq 16, inside the range the purge will delete
    clock.now = T0
    for _ in range(NEW):
        await store.record_request(request(at=T0))


def _stop_after(batches: int):
    done: list[int] = []

    def on_batch(through_done: int, through: int) -> None:
        done.append(through_done)
        if len(done) == batches:
            raise Interrupted(f"stopped after seq {through_done} of {through}")

    return on_batch


async def _min_seq(store: AuditStore) -> int:
    async with store.engine.connect() as conn:
        firsts = [(await conn.execute(select(func.min(t.seq)))).scalar() for t in
                  (AuditRequest, AuditOutcome, AuditEvent)]  # fmt: skip
    return min(s for s in firsts if s is not None)


async def _event_kinds(store: AuditStore) -> list[str]:
    async with store.engine.connect() as conn:
        return list((await conn.execute(select(AuditEvent.kind).order_by(AuditEvent.seq))).scalars())


async def _interrupt(store: AuditStore, clock: Clock) -> None:
    """Seed, then purge in batches of 3 and stop after two batches: seqs 1..6 gone, 7..16 left."""
    await _seed(store, clock)
    with pytest.raises(Interrupted):
        await store.purge(batch_size=3, on_batch=_stop_after(2))
    assert await _min_seq(store) == 7
    assert await _event_kinds(store) == ["purge"]  # the completion was never recorded


def test_interrupted_purge_verifies_and_a_rerun_completes_it(db_url, tmp_path):
    """Mid-purge the log verifies with the leftover range named; purging again finishes it."""
    clock = Clock()

    async def body() -> None:
        store = await open_store(make_settings(db_url, tmp_path), clock)
        try:
            await _interrupt(store, clock)
            report = await store.verify()
            assert report.ok, report.problems
            assert (report.purged_through, report.first_seq, report.last_seq) == (16, 7, 20)
            assert report.unfinished_purge == (7, 16)
            assert report.checkpoints_checked == 1  # the checkpoint at 16 is still walked over
            assert report.as_dict()["unfinished_purge"] == {"from_seq": 7, "through_seq": 16}

            result = await store.purge()
            assert (result.from_seq, result.through_seq, result.total) == (7, 16, 10)
            assert await _event_kinds(store) == ["purge", "purge", "purge_completed"]
            report = await store.verify()
            assert report.ok, report.problems
            assert (report.purged_through, report.first_seq, report.unfinished_purge) == (16, 17, None)
            assert (await store.purge()).through_seq is None  # nothing left over
        finally:
            await store.close()

    asyncio.run(body())


def test_cancelled_purge_leaves_a_verifiable_prefix(db_url, tmp_path):
    """A purge task cancelled between batches (a shutdown) leaves a prefix gone and a clean log."""
    clock = Clock()

    async def body() -> None:
        store = await open_store(make_settings(db_url, tmp_path), clock)
        try:
            await _seed(store, clock)

            def cancel_after_first(through_done: int, through: int) -> None:
                task.cancel()

            task = asyncio.create_task(store.purge(batch_size=4, on_batch=cancel_after_first))
            with pytest.raises(asyncio.CancelledError):
                await task
            assert await _min_seq(store) == 5
            report = await store.verify()
            assert report.ok, report.problems
            assert report.unfinished_purge == (5, 16)
            assert (await store.purge()).total == 12
            assert (await store.verify()).unfinished_purge is None
        finally:
            await store.close()

    asyncio.run(body())


@pytest.mark.parametrize(
    ("statement", "kind", "seq"),
    [
        ("UPDATE audit_requests SET tier = 3 WHERE seq = 9", "modified", 9),
        ("DELETE FROM audit_outcomes WHERE seq = 10", "deleted", 10),
        ("UPDATE audit_outcomes SET status = 'refused' WHERE seq = 16", "modified", 16),
    ],
)
def test_tampering_inside_the_leftover_range_is_detected(db_url, tmp_path, statement, kind, seq):
    """An unfinished purge excuses only its deleted prefix, not edits or holes in what is left."""
    clock = Clock()

    async def body():
        store = await open_store(make_settings(db_url, tmp_path), clock)
        try:
            await _interrupt(store, clock)
            async with store.engine.begin() as conn:
                await conn.execute(text(statement))
            return await store.verify()
        finally:
            await store.close()

    report = asyncio.run(body())
    assert not report.ok
    assert (report.first_bad.kind, report.first_bad.seq) == (kind, seq)


def test_a_purge_committing_during_verify_is_not_reported_as_deletion(db_url, tmp_path, monkeypatch):
    """Verify reads one snapshot: batches a concurrent purge commits mid-walk change nothing."""
    import audit.verify

    monkeypatch.setattr(audit.verify, "_PAGE", 4)  # several pages, so the purge lands mid-walk
    clock = Clock()
    settings = make_settings(db_url, tmp_path)

    def purge_elsewhere() -> None:
        # Another process's purge, run to the end while verify waits between two pages.
        async def run() -> int:
            other = await AuditStore.open(settings, fingerprint_key=FP_KEY, checkpoint_key=CP_KEY,
                                          clock=clock)  # fmt: skip
            try:
                return (await other.purge(batch_size=2)).total
            finally:
                await other.close()

        box: list[int] = []
        worker = threading.Thread(target=lambda: box.append(asyncio.run(run())))
        worker.start()
        worker.join(60)
        assert box == [16]

    pages: list[int] = []

    def progress(records: int) -> None:
        pages.append(records)
        if len(pages) == 1:
            purge_elsewhere()

    async def body():
        store = await open_store(settings, clock)
        try:
            await _seed(store, clock)
            during = await store.verify(progress=progress)
            after = await store.verify()
            return during, after
        finally:
            await store.close()

    during, after = asyncio.run(body())
    assert during.ok, during.problems
    assert len(pages) >= 2  # the purge committed before the walk's second page
    assert (during.first_seq, during.last_seq, during.purged_through) == (1, 19, None)
    assert after.ok and (after.first_seq, after.purged_through) == (17, 16)
