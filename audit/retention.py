"""Retention: delete chained rows older than the window, as a prefix of the chain, in batches.

Only a *prefix* (every record up to some ``seq``) is ever deleted, so the chain that remains is
contiguous. Before deleting, a ``purge`` event is appended to the chain naming the range, the
counts and the anchor (the hash of the last record to go); ``verify`` starts from that anchor.
Each batch deletes the next slice of the range in one transaction, so at any moment the rows gone
are a prefix of the range. Because the event is written first, an interrupted purge still
verifies (``verify`` reports what is left of the range), and the next run finishes the job: it
plans again from the oldest surviving record and records a purge event of its own.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from audit.db import IMMEDIATE
from audit.errors import RetentionError
from audit.models import AuditEvent, AuditOutcome, AuditRequest, AuditSegment, ChainHead
from audit.settings import MIN_RETENTION_DAYS
from audit.timeutil import from_us, to_us

if TYPE_CHECKING:
    from audit.store import AuditStore

__all__ = ["PurgeAnchor", "PurgeResult", "latest_purge", "purge"]

_TABLES = {
    "audit_requests": AuditRequest.__table__,
    "audit_outcomes": AuditOutcome.__table__,
    "audit_events": AuditEvent.__table__,
}
_SEGMENTS = AuditSegment.__table__
_HEAD = ChainHead.__table__
_EVENTS = AuditEvent.__table__


@dataclass(frozen=True, slots=True)
class PurgeAnchor:
    """What the newest ``purge`` event promises: every record up to ``through_seq`` may be gone,
    and the record at ``through_seq`` had ``anchor_hash``."""

    through_seq: int
    anchor_hash: bytes


async def latest_purge(conn: AsyncConnection) -> PurgeAnchor | None:
    """The newest purge event's range and anchor, or None when no (readable) purge event exists."""
    row = (
        await conn.execute(
            select(_EVENTS.c.detail).where(_EVENTS.c.kind == "purge").order_by(_EVENTS.c.seq.desc()).limit(1)
        )
    ).first()
    if row is None:
        return None
    try:
        detail = json.loads(row.detail)
        return PurgeAnchor(int(detail["through_seq"]), bytes.fromhex(detail["anchor_hash"]))
    except (ValueError, KeyError, TypeError):
        return None  # a mangled purge event fails its own hash check during verify's walk


@dataclass(frozen=True, slots=True)
class PurgeResult:
    cutoff: datetime
    from_seq: int | None
    through_seq: int | None
    deleted: dict[str, int]
    event_seq: int | None

    @property
    def total(self) -> int:
        return sum(self.deleted.values())


async def _first_recent_seq(conn: AsyncConnection, cutoff_us: int) -> int | None:
    """The lowest seq, in any chained table, of a record at or after the cutoff."""
    found = []
    for table in _TABLES.values():
        seq = (
            await conn.execute(
                select(table.c.seq).where(table.c.created_us >= cutoff_us)
                .order_by(table.c.seq).limit(1)
            )
        ).scalar()  # fmt: skip
        if seq is not None:
            found.append(int(seq))
    return min(found) if found else None


async def _plan(conn: AsyncConnection, cutoff_us: int) -> tuple[int, int, bytes, dict[str, int]] | None:
    head_seq = int((await conn.execute(select(_HEAD.c.seq).where(_HEAD.c.id == 1))).scalar_one())
    firsts = [(await conn.execute(select(func.min(t.c.seq)))).scalar() for t in _TABLES.values()]
    present = [int(s) for s in firsts if s is not None]
    if not present:
        return None
    start = min(present)
    recent = await _first_recent_seq(conn, cutoff_us)
    through = (recent - 1) if recent is not None else head_seq
    if through < start:
        return None
    anchor: bytes | None = None
    counts: dict[str, int] = {}
    for name, table in _TABLES.items():
        counts[name] = int(
            (await conn.execute(
                select(func.count()).select_from(table)
                .where(table.c.seq >= start, table.c.seq <= through)
            )).scalar_one()
        )  # fmt: skip
        if anchor is None:
            got = (await conn.execute(select(table.c.hash).where(table.c.seq == through))).scalar()
            anchor = bytes(got) if got is not None else None
    if anchor is None:
        raise RetentionError(f"the chain has no record {through} to anchor the purge on")
    return start, through, anchor, counts


async def purge(store: AuditStore, now: datetime, *, batch_size: int = 10_000,
                on_batch: Callable[[int, int], None] | None = None) -> PurgeResult:  # fmt: skip
    """Delete every chained record older than the retention window, oldest first.

    ``on_batch(done_through, through)`` is called after each batch has committed: every record up
    to ``done_through`` is gone, the purge ends at ``through``. An exception it raises stops the
    purge there, exactly as a crash between two batches would.
    """
    if batch_size < 1:
        raise RetentionError("batch_size must be at least 1")
    settings = store.settings
    days = settings.retention_days
    if days < MIN_RETENTION_DAYS and not (settings.force_retention_reason or "").strip():
        raise RetentionError(f"retention below {MIN_RETENTION_DAYS} days needs a recorded reason")
    cutoff_us = to_us(now - timedelta(days=days))
    engine = store.engine
    async with engine.connect() as conn:
        plan = await _plan(conn, cutoff_us)
    if plan is None:
        return PurgeResult(from_us(cutoff_us), None, None, {}, None)
    start, through, anchor, counts = plan
    detail = {
        "from_seq": start,
        "through_seq": through,
        "anchor_hash": anchor.hex(),
        "cutoff": from_us(cutoff_us).isoformat(),
        "retention_days": days,
        "planned": counts,
    }
    if settings.force_retention_reason:
        detail["forced_reason"] = settings.force_retention_reason
    event_seq = await store.record_event("purge", detail)

    deleted = dict.fromkeys(_TABLES, 0)
    lo = start
    while lo <= through:
        hi = min(lo + batch_size - 1, through)
        # One short transaction per batch, holding SQLite's write lock from its BEGIN so that it
        # queues behind the chain writer instead of failing to upgrade a read snapshot.
        async with engine.connect() as plain:
            conn = await plain.execution_options(**{IMMEDIATE: True})
            await conn.begin()
            await conn.execute(delete(_SEGMENTS).where(_SEGMENTS.c.request_seq >= lo, _SEGMENTS.c.request_seq <= hi))
            for name, table in _TABLES.items():
                result = await conn.execute(delete(table).where(table.c.seq >= lo, table.c.seq <= hi))
                deleted[name] += max(result.rowcount or 0, 0)
            await conn.commit()
        lo = hi + 1
        if on_batch is not None:
            on_batch(hi, through)
    await store.record_event("purge_completed", {"through_seq": through, "deleted": deleted})
    return PurgeResult(from_us(cutoff_us), start, through, deleted, event_seq)
