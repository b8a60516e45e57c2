"""Run the Alembic migrations programmatically, over an audit store's own engine.

Here and not in ``audit``: the scripts import audit's models, so the package that runs them sits
above it (``migrations -> audit``, never back). ``tiergate db upgrade``, the server's
``auto_migrate`` and the tests call :func:`upgrade`.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

from audit.store import AuditStore

__all__ = ["current_revision", "downgrade", "head_revision", "upgrade"]

# Any fixed 64-bit number: replicas starting together on PostgreSQL migrate one at a time.
_MIGRATION_LOCK = 0x7469657267617465


def _script_location() -> str:
    return str(Path(__file__).resolve().parent)


def _engine(target: AuditStore | AsyncEngine) -> AsyncEngine:
    return target if isinstance(target, AsyncEngine) else target.engine


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


async def upgrade(target: AuditStore | AsyncEngine, revision: str = "head") -> None:
    """Migrate the store's database (or an engine's) up to ``revision``."""
    async with _engine(target).begin() as conn:
        await conn.run_sync(_upgrade, revision)


async def downgrade(target: AuditStore | AsyncEngine, revision: str = "base") -> None:
    async with _engine(target).begin() as conn:
        await conn.run_sync(_downgrade, revision)


async def current_revision(target: AuditStore | AsyncEngine) -> str | None:
    async with _engine(target).connect() as conn:
        return await conn.run_sync(lambda c: MigrationContext.configure(c).get_current_revision())


def head_revision() -> str:
    """The newest revision in ``migrations/versions``."""
    from alembic.script import ScriptDirectory

    cfg = Config()
    cfg.set_main_option("script_location", _script_location())
    head = ScriptDirectory.from_config(cfg).get_current_head()
    assert head is not None
    return head
