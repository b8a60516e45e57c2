"""One chained PostgreSQL batch per call, usually in one statement on a held asyncpg connection.

The group-commit writer (:mod:`audit.writer`) hands each batch here when the audit database is
PostgreSQL. Through SQLAlchemy's async engine a one-record batch cost about seven round trips
(the pool's pre-ping, ``BEGIN``, ``SET LOCAL``, the head row's ``SELECT … FOR UPDATE``, the insert,
the head ``UPDATE``, ``COMMIT``), each with its greenlet hops; at concurrency 1 every request pays
one such batch. Here the common case is **one** round trip: a single prepared statement that moves
the chain head and inserts the batch's rows, committed on its own (an implicit transaction).

The head is kept in memory after each commit, and the statement moves it only from that value::

    WITH head AS (UPDATE audit_chain_head SET seq = new, hash = new
                  WHERE id = 1 AND seq = cached AND hash = cached RETURNING 1),
         r0 AS (INSERT INTO audit_requests (…) SELECT * FROM unnest(…) WHERE EXISTS (SELECT FROM head)),
         …
    SELECT count(*) FROM head

Every row is inserted only when the head moved, and the head row stays locked until the
statement commits, so another writer (a replica) waits on that lock exactly as it would behind
``SELECT … FOR UPDATE``; once it gets the row, PostgreSQL re-reads the row's latest version, finds
the head moved past its cached value, and the statement changes nothing. Then (and on the first
write, and after any error) the batch is placed again under the lock: ``BEGIN``, the head row
``FOR UPDATE``, the same statement, ``COMMIT``. Either way the chain stays one unbroken sequence.

The connection sets ``synchronous_commit = on`` for its session (and checks it), so the commit is
durable before the callers are released, whatever the server's default. The connection must be a
session of its own (no transaction-pooling proxy in between), like every prepared statement.
Any failure other than a constraint drops the connection (a new one is made for the next batch)
and fails the whole batch: a statement whose answer was lost may or may not have committed, and
nobody in the batch may forward on a maybe.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import asyncpg
from sqlalchemy import Boolean, Integer, LargeBinary, String

from audit.batch import INSERT_COLUMNS, LinkedBatch, PendingRow, link_batch
from audit.errors import AuditWriteError
from audit.models import AuditEvent, AuditOutcome, AuditRequest, AuditSegment
from audit.sqlite_batch import BatchRejected

if TYPE_CHECKING:
    from sqlalchemy.engine import URL, Dialect

    from audit.chain import ChainHasher

__all__ = ["PgBatchWriter", "batch_statement"]


def _array_type(column: Any) -> str:
    # Wide types on purpose: the INSERT's assignment cast then refuses a value that does not fit
    # its column (an explicit cast to varchar(n) would cut it short without a word).
    kind = column.type
    if isinstance(kind, Boolean):
        return "boolean[]"
    if isinstance(kind, Integer):  # SmallInteger and BigInteger are Integers too
        return "bigint[]"
    if isinstance(kind, LargeBinary):
        return "bytea[]"
    if isinstance(kind, String):  # Text is a String
        return "text[]"
    raise ImportError(f"no PostgreSQL array type for column {column.name} ({kind!r}): update audit.pg_batch")


_ARRAY_TYPES: dict[str, tuple[str, ...]] = {
    t.name: tuple(_array_type(t.c[name]) for name in INSERT_COLUMNS[t.name])
    for t in (AuditRequest.__table__, AuditOutcome.__table__, AuditEvent.__table__, AuditSegment.__table__)
}


@functools.cache
def batch_statement(tables: tuple[str, ...]) -> str:
    """The one statement for a batch holding rows of ``tables`` (in that order): parameters are
    the new head (seq, hash), the head it must replace (seq, hash), then one array per column."""
    n = 4
    parts = ["head AS (UPDATE audit_chain_head SET seq = $1, hash = $2 WHERE id = 1 AND seq = $3 AND hash = $4 "
             "RETURNING 1)"]  # fmt: skip
    for i, table in enumerate(tables):
        arrays = []
        for kind in _ARRAY_TYPES[table]:
            n += 1
            arrays.append(f"${n}::{kind}")
        parts.append(f"i{i} AS (INSERT INTO {table} ({', '.join(INSERT_COLUMNS[table])}) "
                     f"SELECT * FROM unnest({', '.join(arrays)}) WHERE EXISTS (SELECT FROM head))")  # fmt: skip
    return f"WITH {', '.join(parts)} SELECT count(*) FROM head"


class PgBatchWriter:
    """Only :class:`audit.writer.ChainWriter`'s one writer task calls :meth:`write`, one batch at a
    time: the cached head and the connection need no lock of their own."""

    def __init__(self, url: URL, dialect: Dialect, hasher: ChainHasher, *, timeout_s: float) -> None:
        if url.get_driver_name() != "asyncpg":  # the connection arguments below are asyncpg's
            raise ValueError("a PostgreSQL audit log is reached with asyncpg: postgresql+asyncpg://…")
        _, params = dialect.create_connect_args(url)
        # SQLAlchemy's own options for its adapter, not asyncpg.connect's.
        for name in ("prepared_statement_cache_size", "prepared_statement_name_func", "async_creator_fn"):
            params.pop(name, None)
        params["server_settings"] = {**params.get("server_settings", {}), "synchronous_commit": "on",
                                     "application_name": "tiergate-audit-writer"}  # fmt: skip
        params.setdefault("timeout", timeout_s)
        self._params = params
        self._hasher = hasher
        # The callers' deadline is the writer's watchdog's (``timeout_s``, checked every quarter of
        # it): this one only frees the writer from a statement that never answers, and must not
        # beat the watchdog to the callers.
        self._timeout = 2 * timeout_s
        self._conn: asyncpg.Connection | None = None
        self._head: tuple[int, bytes] | None = None  # (seq, hash) as this writer last committed it
        self._closed = False

    async def write(self, batch: list[list[PendingRow]]) -> list[list[int]]:
        """Commit the batch; returns each item's sequence numbers once durable."""
        if self._closed:
            raise AuditWriteError("the PostgreSQL batch writer is closed")
        try:
            conn = await self._connection()
            if self._head is not None:
                linked = link_batch(*self._head, batch, self._hasher)
                if await self._run(conn, linked, self._head):
                    self._head = (linked.head_seq, linked.head_hash)
                    return linked.seqs
            # Someone else moved the head (or we never knew it): place the batch under the lock.
            async with conn.transaction():
                row = await conn.fetchrow("SELECT seq, hash FROM audit_chain_head WHERE id = 1 FOR UPDATE",
                                          timeout=self._timeout)  # fmt: skip
                if row is None:
                    raise AuditWriteError("audit chain head row is missing")
                head = (int(row[0]), bytes(row[1]))
                linked = link_batch(*head, batch, self._hasher)
                if not await self._run(conn, linked, head):  # pragma: no cover - we hold the row lock
                    raise AuditWriteError("audit chain head moved under its lock")
            self._head = (linked.head_seq, linked.head_hash)
            return linked.seqs
        except asyncpg.IntegrityConstraintViolationError as exc:
            # The statement (or the transaction) was rolled back whole; the connection is fine.
            raise BatchRejected(type(exc).__name__) from None
        except BaseException:
            self._drop()
            raise

    async def close(self) -> None:
        self._closed = True
        if self._conn is not None:
            conn, self._conn = self._conn, None
            try:
                await conn.close(timeout=min(self._timeout, 5.0))
            except Exception:  # noqa: BLE001 -- closing a broken connection: drop it instead
                conn.terminate()

    async def _run(self, conn: asyncpg.Connection, linked: LinkedBatch, head: tuple[int, bytes]) -> bool:
        tables = tuple(linked.rows)
        args: list[Any] = [linked.head_seq, linked.head_hash, *head]
        for table in tables:
            args.extend(list(column) for column in zip(*linked.rows[table], strict=True))
        moved = await conn.fetchval(batch_statement(tables), *args, timeout=self._timeout)
        return bool(moved)

    async def _connection(self) -> asyncpg.Connection:
        if self._conn is not None and not self._conn.is_closed():
            return self._conn
        self._drop()
        conn = await asyncpg.connect(**self._params)
        try:
            setting = await conn.fetchval("SHOW synchronous_commit", timeout=self._timeout)
            if setting != "on":  # a server that overrides the session's setting: refuse to write
                raise AuditWriteError("the audit writer's connection does not commit synchronously")
        except BaseException:
            conn.terminate()
            raise
        self._conn = conn
        return conn

    def _drop(self) -> None:
        # A connection that failed once (timed out, lost, killed) is not trusted again, and neither
        # is the head we cached: its last statement may or may not have committed.
        self._head = None
        if self._conn is not None:
            conn, self._conn = self._conn, None
            conn.terminate()
