"""Checkpoint pruning: the newest N stay, verify keeps working, evidence of tampering is never pruned."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import text

from audit import AuditError, AuditStore
from tests.audit.conftest import T0, Clock, make_settings, open_store, request


def _seqs(folder: Path) -> list[int]:
    return sorted(int(p.stem.removeprefix("checkpoint-")) for p in folder.glob("checkpoint-*.json"))


async def _records_with_checkpoints(store: AuditStore, n: int, at=T0) -> None:
    """n requests, a checkpoint after each: checkpoint files at the new seqs."""
    for _ in range(n):
        await store.record_request(request(at=at))
        await store.write_checkpoint()


async def _truncate(store: AuditStore, keep_through: int) -> None:
    """What an attacker with database access does to hide the newest rows: delete them and rewind
    the head row to the last record left."""
    async with store.engine.begin() as conn:
        for table in ("audit_requests", "audit_outcomes", "audit_events"):
            await conn.execute(text(f"DELETE FROM {table} WHERE seq > :s"), {"s": keep_through})
        await conn.execute(
            text("UPDATE audit_chain_head SET seq = :s, "
                 "hash = (SELECT hash FROM audit_requests WHERE seq = :s) WHERE id = 1"),
            {"s": keep_through},
        )  # fmt: skip


def test_prune_keeps_the_newest_and_verify_still_catches_a_truncated_tail(db_url, tmp_path):
    """With keep=3 only the newest three files stay; the log verifies and truncation still shows."""
    folder = tmp_path / "checkpoints"

    async def body():
        store = await open_store(make_settings(db_url, tmp_path, checkpoint_keep=3))
        try:
            await _records_with_checkpoints(store, 8)
            assert _seqs(folder) == list(range(1, 9))
            result = await store.prune_checkpoints()
            assert (result.deleted, result.kept, result.evidence) == ((1, 2, 3, 4, 5), 3, ())
            assert _seqs(folder) == [6, 7, 8]
            report = await store.verify()
            assert report.ok and report.checkpoints_checked == 3, report.problems
            assert (await store.prune_checkpoints()).deleted == ()  # nothing more to prune
            await _truncate(store, keep_through=5)
            return await store.verify()
        finally:
            await store.close()

    report = asyncio.run(body())
    assert not report.ok
    assert (report.first_bad.kind, report.first_bad.seq) == ("truncated", 6)


def test_checkpoints_of_purged_rows_go_and_the_rest_still_verifies(db_url, tmp_path):
    """Files pinning purged records are pruned; ones disagreeing with the log are kept as evidence."""
    folder = tmp_path / "checkpoints"
    clock = Clock(T0 - timedelta(days=200))

    async def body() -> None:
        store = await open_store(make_settings(db_url, tmp_path, checkpoint_keep=2), clock)
        try:
            await _records_with_checkpoints(store, 4, at=clock.now)  # seqs 1..4, purged below
            clock.now = T0
            await _records_with_checkpoints(store, 4)  # seqs 5..8
            assert (await store.purge()).through_seq == 4  # its two events are seqs 9 and 10
            await store.write_checkpoint()
            # A record deleted without a purge: its checkpoint (seq 6) is the evidence.
            async with store.engine.begin() as conn:
                await conn.execute(text("DELETE FROM audit_requests WHERE seq = 6"))
            result = await store.prune_checkpoints()
            assert set(result.deleted) == {1, 2, 3, 4, 5, 7}
            assert result.evidence == (6,)
            assert _seqs(folder) == [6, 8, 10]
            report = await store.verify()
            assert (report.first_bad.kind, report.first_bad.seq) == ("deleted", 6)
            assert (await store.prune_checkpoints()).evidence == (6,)  # still kept next time
        finally:
            await store.close()

    asyncio.run(body())


def test_a_rewound_log_keeps_its_old_checkpoints(db_url, tmp_path):
    """After a truncated tail is written over, old checkpoints are neither replaced nor pruned."""
    folder = tmp_path / "checkpoints"

    async def body():
        store = await open_store(make_settings(db_url, tmp_path, checkpoint_keep=1))
        try:
            await _records_with_checkpoints(store, 6)
            old_six = (folder / "checkpoint-00000000000000000006.json").read_text()
            (folder / "checkpoint-00000000000000000099.json").write_text("{not json")
            await _truncate(store, keep_through=3)
            for _ in range(3):  # the gateway carries on: seqs 4..6 again, with other contents
                await store.record_request(request())
            with pytest.raises(AuditError, match="refusing to overwrite checkpoint-00000000000000000006"):
                await store.write_checkpoint()
            assert (folder / "checkpoint-00000000000000000006.json").read_text() == old_six
            await store.record_request(request())
            await store.write_checkpoint()  # seq 7: no older file there
            result = await store.prune_checkpoints()
            assert (result.deleted, result.evidence) == ((1, 2, 3), (4, 5, 6))
            assert _seqs(folder) == [4, 5, 6, 7, 99]  # the unreadable file is verify's to report
            return await store.verify()
        finally:
            await store.close()

    report = asyncio.run(body())
    assert (report.first_bad.kind, report.first_bad.seq) == ("checkpoint", 4)
    assert any("unreadable" in p.message for p in report.problems)


def test_maintenance_prunes_after_each_checkpoint(db_url, tmp_path):
    """The server's maintenance loop leaves exactly the newest checkpoint_keep files behind."""
    folder = tmp_path / "checkpoints"

    async def body():
        settings = make_settings(db_url, tmp_path, checkpoint_keep=3, checkpoint_interval_s=0.02)
        store = await open_store(settings)
        try:
            await _records_with_checkpoints(store, 10)
            task = asyncio.create_task(store.run_maintenance())
            for _ in range(250):
                await asyncio.sleep(0.02)
                if _seqs(folder) == [8, 9, 10]:
                    break
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert _seqs(folder) == [8, 9, 10]
            return await store.verify()
        finally:
            await store.close()

    report = asyncio.run(body())
    assert report.ok and report.checkpoints_checked == 3, report.problems


def test_keep_must_be_at_least_one():
    """checkpoint_keep=0 would let pruning delete the newest checkpoint: the setting refuses it."""
    from pydantic import ValidationError

    from audit import AuditSettings

    with pytest.raises(ValidationError, match="checkpoint_keep"):
        AuditSettings(checkpoint_keep=0)
    assert AuditSettings().checkpoint_keep == 1000


def test_keep_none_never_deletes(sqlite_db, tmp_path):
    """With checkpoint_keep None (write-once storage) pruning leaves every file in place."""

    async def body():
        store = await open_store(make_settings(sqlite_db, tmp_path, checkpoint_keep=None))
        try:
            await _records_with_checkpoints(store, 4)
            return await store.prune_checkpoints()
        finally:
            await store.close()

    result = asyncio.run(body())
    assert (result.deleted, result.kept) == ((), 4)
    assert _seqs(tmp_path / "checkpoints") == [1, 2, 3, 4]
