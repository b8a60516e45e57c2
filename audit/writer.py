"""Group commit: one writer task turns concurrent records into one chained transaction.

Every caller gets its own future and is released only after the transaction holding its record
has COMMITTED, so batching keeps the write-ahead guarantee while paying one round trip (and, on
SQLite, one fsync) per batch instead of per record. While a batch commits, new records queue up
and form the next batch, so the batch size adapts to the load without a timer.

The chain head row is read and updated inside the same transaction, under ``SELECT … FOR UPDATE``
on PostgreSQL (replicas queue on that row lock) and ``BEGIN IMMEDIATE`` on SQLite, so the chain
stays one unbroken sequence however many writers share the database.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select, text, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from audit.chain import ChainHasher
from audit.db import IMMEDIATE, is_sqlite
from audit.errors import AuditWriteError
from audit.models import AuditEvent, AuditOutcome, AuditRequest, AuditSegment, ChainHead

__all__ = ["ChainWriter", "PendingRow"]

log = logging.getLogger("tiergate.audit")

_TABLES = {
    "audit_requests": AuditRequest.__table__,
    "audit_outcomes": AuditOutcome.__table__,
    "audit_events": AuditEvent.__table__,
}
_HEAD = ChainHead.__table__
_SEGMENTS = AuditSegment.__table__


@dataclass(slots=True)
class PendingRow:
    """One chained row before it has a place in the chain (no ``seq`` / ``hash`` yet)."""

    table: str
    values: dict[str, Any]
    segments: tuple[str, ...] = ()


@dataclass(slots=True)
class _Item:
    rows: list[PendingRow]
    future: asyncio.Future[list[int]] = field(repr=False)
    deadline: float = 0.0


class ChainWriter:
    """Owns the only code path that appends to the chain within this process."""

    def __init__(self, engine: AsyncEngine, hasher: ChainHasher, *, max_batch: int = 1000,
                 timeout_s: float = 10.0) -> None:  # fmt: skip
        self._engine = engine
        self._hasher = hasher
        self._max_batch = max_batch
        self._timeout = timeout_s
        self._sqlite = is_sqlite(engine)
        # A deque and an Event rather than asyncio.Queue, and one watchdog instead of a timer per
        # record: the per-record cost of the hot path is a future and an append.
        self._pending: deque[_Item] = deque()
        self._wakeup = asyncio.Event()
        self._inflight: list[_Item] = []
        self._task: asyncio.Task[None] | None = None
        self._watchdog: asyncio.Task[None] | None = None
        self._closing = False
        self._sql: dict[str, str] = {}

    def start(self) -> None:
        if self._task is None:
            loop = asyncio.get_running_loop()
            self._task = loop.create_task(self._run(), name="audit-writer")
            self._watchdog = loop.create_task(self._expire(), name="audit-writer-watchdog")

    @property
    def alive(self) -> bool:
        return self._task is not None and not self._task.done() and not self._closing

    async def append(self, rows: list[PendingRow]) -> list[int]:
        """Append rows atomically; returns their sequence numbers once committed.

        Raises ``AuditWriteError`` if the rows are not committed within the timeout. A row may
        still commit after its caller gave up: the log then over-reports a request that was
        refused, which is the safe direction.
        """
        if not self.alive:
            raise AuditWriteError("audit writer is not running")
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[list[int]] = loop.create_future()
        fut.add_done_callback(_consume)
        self._pending.append(_Item(rows, fut, loop.time() + self._timeout))
        self._wakeup.set()
        return await fut

    async def close(self) -> None:
        """Commit what is queued, then stop."""
        if self._task is None:
            return
        self._closing = True
        self._wakeup.set()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        if self._watchdog is not None:
            self._watchdog.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watchdog
        _fail(list(self._pending), "audit writer closed")
        self._pending.clear()
        self._task = None

    async def _expire(self) -> None:
        loop = asyncio.get_running_loop()
        tick = min(1.0, self._timeout / 4)
        while True:
            await asyncio.sleep(tick)
            now = loop.time()
            late = [i for i in self._inflight if i.deadline <= now]
            late += [i for i in self._pending if i.deadline <= now]
            _fail(late, "audit write timed out")

    async def _run(self) -> None:
        while True:
            if not self._pending:
                if self._closing:
                    return
                self._wakeup.clear()
                await self._wakeup.wait()
                continue
            batch: list[_Item] = []
            while self._pending and len(batch) < self._max_batch:
                item = self._pending.popleft()
                if not item.future.done():  # timed out or cancelled while queued: skip it
                    batch.append(item)
            if batch:
                self._inflight = batch
                await self._commit_batch(batch)
                self._inflight = []

    async def _commit_batch(self, batch: list[_Item]) -> None:
        try:
            seqs = await self._write(batch)
        except IntegrityError:
            if len(batch) == 1:
                _fail(batch, "audit write rejected by the database (IntegrityError)")
                return
            # One bad record (say a duplicate request id) must not refuse its neighbours.
            for item in batch:
                await self._commit_batch([item])
            return
        except Exception as exc:  # any failure: nobody in this batch may forward
            log.error("audit batch of %d failed: %s", len(batch), type(exc).__name__)
            _fail(batch, f"audit write failed ({type(exc).__name__})")
            return
        for item, item_seqs in zip(batch, seqs, strict=True):
            if not item.future.done():
                item.future.set_result(item_seqs)

    async def _write(self, batch: list[_Item]) -> list[list[int]]:
        async with self._engine.connect() as conn:
            if self._sqlite:
                conn = await conn.execution_options(**{IMMEDIATE: True})
            async with conn.begin():
                return await self._write_in(conn, batch)

    async def _insert_many(self, conn: AsyncConnection, table: str, rows: list[dict[str, Any]]) -> None:
        # Straight to the driver's executemany: SQLAlchemy's per-parameter processing was the
        # largest CPU cost per record, and every value here is already a plain int/str/bool/bytes.
        sql = self._sql.get(table)
        if sql is None:
            sql = self._sql[table] = _insert_sql(table, conn.dialect.paramstyle)
        cols = _INSERT_COLUMNS[table]
        await conn.exec_driver_sql(sql, [tuple(r[c] for c in cols) for r in rows])

    async def _write_in(self, conn: AsyncConnection, batch: list[_Item]) -> list[list[int]]:
        if not self._sqlite:
            # Defend the write-ahead guarantee against a server configured with async commit.
            await conn.execute(text("SET LOCAL synchronous_commit = on"))
        head = (
            await conn.execute(
                select(_HEAD.c.seq, _HEAD.c.hash).where(_HEAD.c.id == 1).with_for_update()
            )
        ).one()
        seq, prev = int(head.seq), bytes(head.hash)
        by_table: dict[str, list[dict[str, Any]]] = {}
        segments: list[dict[str, Any]] = []
        result: list[list[int]] = []
        link = self._hasher.link
        for item in batch:
            item_seqs = []
            for row in item.rows:
                seq += 1
                values = dict(row.values, seq=seq)
                prev = link(prev, row.table, values)
                values["hash"] = prev
                by_table.setdefault(row.table, []).append(values)
                segments.extend({"fingerprint": fp, "request_seq": seq} for fp in row.segments)
                item_seqs.append(seq)
            result.append(item_seqs)
        for table, rows in by_table.items():
            await self._insert_many(conn, table, rows)
        if segments:
            await self._insert_many(conn, "audit_segments", segments)
        await conn.execute(update(_HEAD).where(_HEAD.c.id == 1).values(seq=seq, hash=prev))
        return result


_INSERT_COLUMNS: dict[str, tuple[str, ...]] = {
    name: tuple(c.name for c in table.columns)
    for name, table in (*_TABLES.items(), ("audit_segments", _SEGMENTS))
}


def _insert_sql(table: str, paramstyle: str) -> str:
    cols = _INSERT_COLUMNS[table]
    if paramstyle == "qmark":
        marks = ", ".join("?" for _ in cols)
    elif paramstyle == "numeric_dollar":
        marks = ", ".join(f"${i}" for i in range(1, len(cols) + 1))
    elif paramstyle == "format":
        marks = ", ".join("%s" for _ in cols)
    else:  # pragma: no cover - only the two supported drivers reach here
        raise AuditWriteError(f"unsupported driver paramstyle {paramstyle}")
    return f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({marks})"


def _fail(batch: list[_Item], message: str) -> None:
    for item in batch:
        if not item.future.done():
            item.future.set_exception(AuditWriteError(message))


def _consume(fut: asyncio.Future[Any]) -> None:
    if not fut.cancelled():
        fut.exception()  # a late failure nobody awaits any more must not be logged as unretrieved
