"""Group commit: one writer task turns concurrent records into one chained transaction.

Every caller gets its own future and is released only after the transaction holding its record
has COMMITTED, so batching keeps the write-ahead guarantee while paying one round trip (and, on
SQLite, one fsync) per batch instead of per record. While a batch commits, new records queue up
and form the next batch, so the batch size adapts to the load without a timer.

The chain head row is moved inside the same transaction that inserts the rows, under its row lock
on PostgreSQL (replicas queue on that lock) and ``BEGIN IMMEDIATE`` on SQLite, so the chain stays
one unbroken sequence however many writers share the database.

How a batch reaches the database depends on the backend, and neither goes through SQLAlchemy's
async engine: at concurrency 1 every request pays a transaction of its own, and the engine's
layers per statement were most of its cost. A SQLite file is written by
:class:`audit.sqlite_batch.SqliteBatchWriter`: the whole transaction runs in one call on a
dedicated thread with the standard-library driver (through aiosqlite every statement is its own
thread hop: a one-record transaction cost ≈ 2.4 ms of CPU, ≈ 0.2 ms this way). PostgreSQL is
written by :class:`audit.pg_batch.PgBatchWriter` on a held asyncpg connection: usually one
statement (one round trip) that moves the head from the value this writer last committed and
inserts the rows; when another writer moved it since, the same statement after ``SELECT … FOR
UPDATE`` of the head row, in one transaction.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy.ext.asyncio import AsyncEngine

from audit.batch import PendingRow
from audit.chain import ChainHasher
from audit.db import is_sqlite
from audit.errors import AuditWriteError
from audit.sqlite_batch import BatchRejected, SqliteBatchWriter, sqlite_file

if TYPE_CHECKING:
    from audit.pg_batch import PgBatchWriter

__all__ = ["ChainWriter", "PendingRow"]

log = logging.getLogger("tiergate.audit")


@dataclass(slots=True)
class _Item:
    rows: list[PendingRow]
    future: asyncio.Future[list[int]] = field(repr=False)
    deadline: float = 0.0
    queued: float = 0.0


class ChainWriter:
    """Owns the only code path that appends to the chain within this process."""

    def __init__(self, engine: AsyncEngine, hasher: ChainHasher, *, max_batch: int = 1000,
                 timeout_s: float = 10.0, linger_s: float = 0.0,
                 sqlite_synchronous: str = "FULL") -> None:  # fmt: skip
        self._engine = engine
        self._hasher = hasher
        self._max_batch = max_batch
        self._timeout = timeout_s
        self._linger = linger_s
        self._sqlite: SqliteBatchWriter | None = None
        self._pg: PgBatchWriter | None = None
        if is_sqlite(engine):
            self._sqlite = SqliteBatchWriter(sqlite_file(engine.url), hasher, synchronous=sqlite_synchronous)
        else:
            from audit.pg_batch import PgBatchWriter  # asyncpg only where the log is on PostgreSQL

            self._pg = PgBatchWriter(engine.url, engine.dialect, hasher, timeout_s=timeout_s)
        # A deque and an Event rather than asyncio.Queue, and one watchdog instead of a timer per
        # record: the per-record cost of the hot path is a future and an append.
        self._pending: deque[_Item] = deque()
        self._lazy: deque[_Item] = deque()
        self._wakeup = asyncio.Event()
        self._inflight: list[_Item] = []
        self._task: asyncio.Task[None] | None = None
        self._watchdog: asyncio.Task[None] | None = None
        self._closing = False

    def start(self) -> None:
        if self._task is None:
            loop = asyncio.get_running_loop()
            self._task = loop.create_task(self._run(), name="audit-writer")
            self._watchdog = loop.create_task(self._expire(), name="audit-writer-watchdog")

    @property
    def alive(self) -> bool:
        return self._task is not None and not self._task.done() and not self._closing

    async def append(self, rows: list[PendingRow], *, lazy: bool = False) -> list[int]:
        """Append rows atomically; returns their sequence numbers once committed.

        ``lazy`` rows (outcomes, written after the client has its answer) wait up to ``linger_s``
        to ride along with the next ordinary batch, so that a steady stream of requests costs one
        transaction (one fsync) per request rather than two. Nothing waits on a lazy row.

        Raises ``AuditWriteError`` if the rows are not committed within the timeout. A row may
        still commit after its caller gave up: the log then over-reports a request that was
        refused, which is the safe direction.
        """
        if not self.alive:
            raise AuditWriteError("audit writer is not running")
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[list[int]] = loop.create_future()
        fut.add_done_callback(_consume)
        now = loop.time()
        if lazy:
            self._lazy.append(_Item(rows, fut, now + self._linger + self._timeout, now))
            if len(self._lazy) == 1:
                self._wakeup.set()  # start the linger clock
        else:
            self._pending.append(_Item(rows, fut, now + self._timeout, now))
            self._wakeup.set()
        return await fut

    async def close(self) -> None:
        """Commit what is queued, then stop."""
        if self._task is None:
            await self._close_backend()
            return
        self._closing = True
        self._wakeup.set()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        if self._watchdog is not None:
            self._watchdog.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watchdog
        _fail([*self._pending, *self._lazy], "audit writer closed")
        self._pending.clear()
        self._lazy.clear()
        self._task = None
        await self._close_backend()

    async def _close_backend(self) -> None:
        if self._sqlite is not None:
            self._sqlite.close()
        if self._pg is not None:
            await self._pg.close()

    async def _expire(self) -> None:
        loop = asyncio.get_running_loop()
        tick = min(1.0, self._timeout / 4)
        while True:
            await asyncio.sleep(tick)
            now = loop.time()
            late = [i for i in self._inflight if i.deadline <= now]
            late += [i for i in (*self._pending, *self._lazy) if i.deadline <= now]
            _fail(late, "audit write timed out")

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            if not self._pending and not self._closing:
                self._wakeup.clear()
                if not self._lazy:
                    await self._wakeup.wait()
                    continue
                wait = self._lazy[0].queued + self._linger - loop.time()
                if wait > 0:  # lazy rows only: give an ordinary batch the chance to carry them
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(wait):
                            await self._wakeup.wait()
                    continue
            if not self._pending and not self._lazy:
                return  # closing, and everything queued is committed
            batch = _take(self._pending, self._max_batch)
            batch += _take(self._lazy, self._max_batch - len(batch))
            if batch:
                self._inflight = batch
                await self._commit_batch(batch)
                self._inflight = []

    async def _commit_batch(self, batch: list[_Item]) -> None:
        try:
            seqs = await self._write(batch)
        except BatchRejected:
            if len(batch) == 1:
                _fail(batch, "audit write rejected by the database (IntegrityError)")
                return
            # One bad record (say a duplicate request id) must not refuse its neighbours.
            for item in batch:
                await self._commit_batch([item])
            return
        except Exception as exc:  # noqa: BLE001 -- any failure: nobody in this batch may forward
            log.error("audit batch of %d failed: %s", len(batch), type(exc).__name__)
            _fail(batch, f"audit write failed ({type(exc).__name__})")
            return
        for item, item_seqs in zip(batch, seqs, strict=True):
            if not item.future.done():
                item.future.set_result(item_seqs)

    async def _write(self, batch: list[_Item]) -> list[list[int]]:
        rows = [item.rows for item in batch]
        if self._sqlite is not None:
            return await self._sqlite.write(rows)
        if self._pg is None:  # pragma: no cover - __init__ sets one of the two
            raise AuditWriteError("no audit backend")
        return await self._pg.write(rows)


def _take(queue: deque[_Item], most: int) -> list[_Item]:
    batch: list[_Item] = []
    while queue and len(batch) < most:
        item = queue.popleft()
        if not item.future.done():  # timed out or cancelled while queued: skip it
            batch.append(item)
    return batch


def _fail(batch: list[_Item], message: str) -> None:
    for item in batch:
        if not item.future.done():
            item.future.set_exception(AuditWriteError(message))


def _consume(fut: asyncio.Future[Any]) -> None:
    if not fut.cancelled():
        fut.exception()  # a late failure nobody awaits any more must not be logged as unretrieved
