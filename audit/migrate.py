"""Run the Alembic migrations programmatically over the store's own engine."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

import migrations

__all__ = ["current_revision", "downgrade", "head_revision", "upgrade"]

# Any fixed 64-bit number: replicas starting together on PostgreSQL migrate one at a time.
_MIGRATION_LOCK = 0x7469657267617465


def _script_location() -> str:
    if migrations.__file__:
        return str(Path(migrations.__file__).parent)
    return str(list(migrations.__path__)[0])


def _config(connection: Connection) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", _script_location())
    cfg.attributes["connection"] = connection
    return cfg


def _lock(connection: Connection) -> None:
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _MIGRATION_LOCK})


def _upgrade(connection: Connection, revision: str) -> None:
    _lock(connection)
    command.upgrade(_config(connection), revision)


def _downgrade(connection: Connection, revision: str) -> None:
    _lock(connection)
    command.downgrade(_config(connection), revision)


async def upgrade(engine: AsyncEngine, revision: str = "head") -> None:
    async with engine.begin() as conn:
        await conn.run_sync(_upgrade, revision)


async def downgrade(engine: AsyncEngine, revision: str = "base") -> None:
    async with engine.begin() as conn:
        await conn.run_sync(_downgrade, revision)


async def current_revision(engine: AsyncEngine) -> str | None:
    async with engine.connect() as conn:
        return await conn.run_sync(lambda c: MigrationContext.configure(c).get_current_revision())


def head_revision() -> str:
    """The newest revision in ``migrations/versions``."""
    from alembic.script import ScriptDirectory

    cfg = Config()
    cfg.set_main_option("script_location", _script_location())
    head = ScriptDirectory.from_config(cfg).get_current_head()
    assert head is not None
    return head
