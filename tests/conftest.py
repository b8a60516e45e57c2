"""Fixtures shared by every test package: real PostgreSQL and Redis, each test run isolated.

A missing service is an error, never a skip: ``scripts/services.sh`` starts them before the run.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Iterator

import pytest

# The gateways a run starts keep their compiled first pass (gateway/prefilter.py) in a folder of
# this run's, not in the user's cache; subprocess gateways inherit it.
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="tiergate-test-cache-")

PG_ADMIN_DSN = os.environ.get("TIERGATE_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
REDIS_URL = os.environ.get("TIERGATE_TEST_REDIS", "redis://127.0.0.1:6379/0")


def _pg_admin_exec(sql: str) -> None:
    import asyncio

    import asyncpg

    async def run() -> None:
        conn = await asyncpg.connect(PG_ADMIN_DSN, timeout=10)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    asyncio.run(run())


@pytest.fixture
def postgres_db() -> Iterator[str]:
    """A brand-new, empty PostgreSQL database; yields its SQLAlchemy async URL, drops it after."""
    name = f"tg_{uuid.uuid4().hex[:12]}"
    try:
        _pg_admin_exec(f'CREATE DATABASE "{name}"')
    except Exception as exc:  # noqa: BLE001 -- the suite must fail, not skip, when PostgreSQL is missing
        pytest.fail(f"PostgreSQL is required at {PG_ADMIN_DSN}: {exc!r}")
    base = PG_ADMIN_DSN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+asyncpg://", 1)
    yield f"{base}/{name}"
    _pg_admin_exec(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def sqlite_db(tmp_path) -> str:
    """A fresh SQLite database file in the test's temp folder; yields its SQLAlchemy async URL."""
    return f"sqlite+aiosqlite:///{tmp_path / 'audit.db'}"


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request) -> str:
    """Runs a test once on SQLite and once on PostgreSQL: one contract, two backends."""
    return request.getfixturevalue(f"{request.param}_db")


@pytest.fixture
def redis_url() -> Iterator[str]:
    """The real Redis server; a unique key prefix per test keeps runs apart. Yields the URL."""
    import redis

    client = redis.Redis.from_url(REDIS_URL, socket_timeout=5)
    try:
        client.ping()
    except Exception as exc:  # noqa: BLE001 -- the suite must fail, not skip, when Redis is missing
        pytest.fail(f"Redis is required at {REDIS_URL}: {exc!r}")
    finally:
        client.close()
    yield REDIS_URL


@pytest.fixture
def unique_prefix() -> str:
    return f"tgtest:{uuid.uuid4().hex[:10]}:"
