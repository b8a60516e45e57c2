"""Run the Alembic migrations programmatically, over an audit store's own engine.

Here and not in ``audit``: the scripts import audit's models, so the package that runs them sits
above it (``migrations -> audit``, never back). ``tiergate db upgrade``, the server's
``auto_migrate`` and the tests call :func:`upgrade`.

Alembic is imported only where a migration runs: a server starting on a database already at the
newest revision (every start but the first) reads one row and loads none of it (a quarter of a
second of CPU). The newest revision is then read from the scripts' own ``revision`` /
``down_revision`` lines; where they are not that simple, Alembic decides as before.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine

from audit.store import AuditStore

if TYPE_CHECKING:
    from alembic.config import Config

__all__ = ["current_revision", "downgrade", "head_revision", "upgrade"]

# Any fixed 64-bit number: replicas starting together on PostgreSQL migrate one at a time.
_MIGRATION_LOCK = 0x7469657267617465


def _script_location() -> str:
    return str(Path(__file__).resolve().parent)


def _engine(target: AuditStore | AsyncEngine) -> AsyncEngine:
    return target if isinstance(target, AsyncEngine) else target.engine


def _config(connection: Connection) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", _script_location())
    cfg.attributes["connection"] = connection
    return cfg


def _lock(connection: Connection) -> None:
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _MIGRATION_LOCK})


def _upgrade(connection: Connection, revision: str) -> None:
    from alembic import command

    _lock(connection)
    command.upgrade(_config(connection), revision)


def _downgrade(connection: Connection, revision: str) -> None:
    from alembic import command

    _lock(connection)
    command.downgrade(_config(connection), revision)


_ASSIGNMENT = re.compile(r'^(down_revision|revision) = (None|"[^"\n]+")$', re.MULTILINE)


@lru_cache(maxsize=1)
def _scripted_head() -> str | None:
    """The one revision of ``versions/`` that no other revises, read from the scripts' text;
    None where that is not plain (a merge, a branch, an unusual spelling): ask Alembic then."""
    revisions: set[str] = set()
    revised: set[str] = set()
    for script in (Path(_script_location()) / "versions").glob("*.py"):
        found = {m[1]: m[2] for m in _ASSIGNMENT.finditer(script.read_text(encoding="utf-8"))}
        if set(found) != {"revision", "down_revision"} or found["revision"] == "None":
            return None
        revisions.add(found["revision"].strip('"'))
        if found["down_revision"] != "None":
            revised.add(found["down_revision"].strip('"'))
    heads = revisions - revised
    return heads.pop() if len(heads) == 1 and revised <= revisions else None


async def _at_head(engine: AsyncEngine) -> bool:
    head = _scripted_head()
    if head is None:
        return False
    try:
        async with engine.connect() as conn:
            rows = (await conn.execute(text("SELECT version_num FROM alembic_version"))).scalars().all()
    except DBAPIError:
        return False  # no version table yet: a new database
    return list(rows) == [head]


async def upgrade(target: AuditStore | AsyncEngine, revision: str = "head") -> None:
    """Migrate the store's database (or an engine's) up to ``revision``; a database already at
    the newest revision is left as it is without loading Alembic."""
    engine = _engine(target)
    if revision == "head" and await _at_head(engine):
        return
    async with engine.begin() as conn:
        await conn.run_sync(_upgrade, revision)


async def downgrade(target: AuditStore | AsyncEngine, revision: str = "base") -> None:
    async with _engine(target).begin() as conn:
        await conn.run_sync(_downgrade, revision)


async def current_revision(target: AuditStore | AsyncEngine) -> str | None:
    from alembic.runtime.migration import MigrationContext

    async with _engine(target).connect() as conn:
        return await conn.run_sync(lambda c: MigrationContext.configure(c).get_current_revision())


def head_revision() -> str:
    """The newest revision in ``migrations/versions``."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    cfg = Config()
    cfg.set_main_option("script_location", _script_location())
    head = ScriptDirectory.from_config(cfg).get_current_head()
    assert head is not None
    return head
