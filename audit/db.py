"""Engine construction: SQLite (WAL) for the embedded mode, PostgreSQL by URL.

SQLite durability: WAL mode with ``synchronous=FULL`` (the default here) fsyncs the WAL at every
commit, so a row that ``record_request`` reported committed survives kill -9 and power loss. With
``NORMAL`` it still survives kill -9 (the WAL pages are in the OS page cache, which outlives the
process) but the last commits may be lost on power failure. Group commit makes FULL affordable:
one fsync per batch, not per record.

The pysqlite driver's own transaction handling starts transactions lazily and never takes the
write lock up front; we disable it and emit ``BEGIN`` ourselves so the chain writer can ask for
``BEGIN IMMEDIATE`` (the write lock before reading the chain head, needed when several processes
share one SQLite file).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import CursorResult, event
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

__all__ = ["IMMEDIATE", "configure_sqlite", "is_sqlite", "inserted_id", "make_engine", "write_transaction"]

# Execution option the writer sets to take SQLite's write lock at BEGIN.
IMMEDIATE = "tiergate_immediate"


@asynccontextmanager
async def write_transaction(engine: AsyncEngine) -> AsyncIterator[AsyncConnection]:
    """A transaction that reads rows and then writes on what it read.

    On SQLite it holds the write lock from its BEGIN: a deferred transaction that read first cannot
    upgrade a snapshot another writer has moved past, and fails at once with "database is locked"
    instead of waiting out busy_timeout. Two concurrent ones then queue instead of one failing.
    PostgreSQL ignores the option (its row locks and the statements' own guards serialise them).
    """
    async with engine.connect() as plain:
        conn = await plain.execution_options(**{IMMEDIATE: True})
        async with conn.begin():
            yield conn


def inserted_id(result: CursorResult[Any]) -> int:
    """The integer key of the one row an INSERT wrote (both backends report it)."""
    key = result.inserted_primary_key
    if key is None or key[0] is None:
        raise RuntimeError("the database did not report the key of the row it inserted")
    return int(key[0])


def is_sqlite(engine_or_url: AsyncEngine | str) -> bool:
    url = engine_or_url.url if isinstance(engine_or_url, AsyncEngine) else make_url(engine_or_url)
    return url.get_backend_name() == "sqlite"


def make_engine(url: str, *, sqlite_synchronous: str = "FULL", pool_size: int = 5) -> AsyncEngine:
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            from pathlib import Path

            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_async_engine(parsed, connect_args={"timeout": 30})
        _install_sqlite_hooks(engine, sqlite_synchronous)
        return engine
    if parsed.get_backend_name() == "postgresql":
        return create_async_engine(parsed, pool_size=pool_size, max_overflow=pool_size, pool_pre_ping=True)
    raise ValueError(f"unsupported audit database backend: {parsed.get_backend_name()}")


def configure_sqlite(dbapi_conn: Any, synchronous: str) -> None:
    """Settings every SQLite connection of this project gets (the engine's and the chain writer's)."""
    if synchronous not in {"FULL", "NORMAL"}:
        raise ValueError("sqlite_synchronous must be FULL or NORMAL")
    dbapi_conn.isolation_level = None  # we issue BEGIN ourselves (see module docstring)
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute(f"PRAGMA synchronous={synchronous}")
    cur.execute("PRAGMA busy_timeout=30000")
    cur.execute("PRAGMA foreign_keys=ON")
    # Exposure queries walk index ranges and then table pages: map the file instead of
    # copying every page through read(), and keep a larger page cache per connection.
    cur.execute("PRAGMA mmap_size=1073741824")
    cur.execute("PRAGMA cache_size=-65536")
    cur.close()


def _install_sqlite_hooks(engine: AsyncEngine, synchronous: str) -> None:
    if synchronous not in {"FULL", "NORMAL"}:
        raise ValueError("sqlite_synchronous must be FULL or NORMAL")

    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        configure_sqlite(dbapi_conn, synchronous)

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn: Any) -> None:
        immediate = conn.get_execution_options().get(IMMEDIATE, False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")
