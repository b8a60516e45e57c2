"""Retention: never below 90 days without a reason, batched prefix purges, verify stays clean."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta

import pytest
from pydantic import ValidationError
from sqlalchemy import func, select, text

from audit import AuditSettings
from audit.models import AuditEvent, AuditOutcome, AuditRequest, AuditSegment
from tests.audit.conftest import T0, Clock, make_settings, open_store, outcome, request


def test_retention_below_90_days_needs_a_reason():
    """retention_days=30 is refused; with force_retention_reason it is accepted."""
    with pytest.raises(ValidationError, match="force_retention_reason"):
        AuditSettings(retention_days=30)
    with pytest.raises(ValidationError):
        AuditSettings(retention_days=30, force_retention_reason="   ")
    assert AuditSettings(retention_days=30, force_retention_reason="legal hold lifted").retention_days == 30
    assert AuditSettings(retention_days=365).retention_days == 365


async def _counts(store) -> dict[str, int]:
    out = {}
    async with store.engine.connect() as conn:
        for t in (AuditRequest, AuditOutcome, AuditEvent, AuditSegment):
            out[t.__tablename__] = int((await conn.execute(select(func.count()).select_from(t))).scalar_one())
    return out


def test_purge_deletes_old_rows_in_batches_and_verifies(db_url, tmp_path):
    """Rows older than 90 days go (in batches of 3), the purge is recorded, verify stays clean."""
    clock = Clock(T0 - timedelta(days=200))

    async def body() -> None:
        store = await open_store(make_settings(db_url, tmp_path), clock)
        try:
            for _ in range(5):  # old: seqs 1..10
                rec = request(at=clock.now, segments=("aa" * 32,))
                await store.record_request(rec)
                await store.record_outcome(outcome(rec.request_id))
            await store.write_checkpoint()  # a checkpoint inside the purged range
            clock.now = T0
            new = [request(at=T0) for _ in range(3)]  # seqs 11..13
            for rec in new:
                await store.record_request(rec)
            result = await store.purge(batch_size=3)
            assert (result.from_seq, result.through_seq, result.total) == (1, 10, 10)
            assert result.deleted == {"audit_requests": 5, "audit_outcomes": 5, "audit_events": 0}
            counts = await _counts(store)
            assert counts["audit_requests"] == 3 and counts["audit_outcomes"] == 0
            assert counts["audit_segments"] == 0
            async with store.engine.connect() as conn:
                events = (await conn.execute(select(AuditEvent.kind, AuditEvent.detail)
                                             .order_by(AuditEvent.seq))).all()  # fmt: skip
            assert [e.kind for e in events] == ["purge", "purge_completed"]
            detail = json.loads(events[0].detail)
            assert (detail["from_seq"], detail["through_seq"], detail["retention_days"]) == (1, 10, 90)
            assert detail["planned"]["audit_requests"] == 5
            await store.write_checkpoint()
            report = await store.verify()
            assert report.ok, report.problems
            assert (report.purged_through, report.first_seq) == (10, 11)
            assert (await store.purge()).through_seq is None  # nothing left to purge
        finally:
            await store.close()

    asyncio.run(body())


def test_second_purge_supersedes_the_first(sqlite_db, tmp_path):
    """A later purge that removes the earlier purge event still leaves a verifiable chain."""
    clock = Clock(T0 - timedelta(days=300))

    async def body() -> None:
        store = await open_store(make_settings(sqlite_db, tmp_path), clock)
        try:
            for _ in range(4):
                await store.record_request(request(at=clock.now))
            clock.now = T0 - timedelta(days=150)
            for _ in range(4):
                await store.record_request(request(at=clock.now))
            clock.now = T0 - timedelta(days=120)
            first = await store.purge()
            assert first.through_seq == 4
            clock.now = T0
            for _ in range(2):
                await store.record_request(request(at=clock.now))
            second = await store.purge(batch_size=2)
            assert second.from_seq == 5 and second.total == 4 + 2  # 4 requests + 2 purge events
            report = await store.verify()
            assert report.ok, report.problems
        finally:
            await store.close()

    asyncio.run(body())


def test_deleting_after_a_purge_is_still_detected(db_url, tmp_path):
    """A purge's anchor does not excuse a later deletion of the oldest surviving row."""
    clock = Clock(T0 - timedelta(days=200))

    async def body() -> None:
        store = await open_store(make_settings(db_url, tmp_path), clock)
        try:
            for _ in range(3):
                await store.record_request(request(at=clock.now))
            clock.now = T0
            for _ in range(3):
                await store.record_request(request(at=clock.now))
            await store.purge()
            async with store.engine.begin() as conn:
                await conn.execute(text("DELETE FROM audit_requests WHERE seq = 4"))
            report = await store.verify()
            assert (report.first_bad.kind, report.first_bad.seq) == ("deleted", 4)
        finally:
            await store.close()

    asyncio.run(body())


def test_forced_short_retention_is_recorded(sqlite_db, tmp_path):
    """With a forced 30-day retention the purge event carries the recorded reason."""
    clock = Clock(T0 - timedelta(days=40))

    async def body() -> None:
        settings = make_settings(sqlite_db, tmp_path, retention_days=30,
                                 force_retention_reason="contract ended; customer asked")  # fmt: skip
        store = await open_store(settings, clock)
        try:
            await store.record_request(request(at=clock.now))
            clock.now = T0
            result = await store.purge()
            assert result.total == 1
            async with store.engine.connect() as conn:
                detail = (await conn.execute(select(AuditEvent.detail).where(AuditEvent.kind == "purge"))).scalar_one()
            assert json.loads(detail)["forced_reason"] == "contract ended; customer asked"
        finally:
            await store.close()

    asyncio.run(body())
