"""Alembic environment: async engines, batch mode on SQLite, and a caller-supplied connection.

``migrations.upgrade()`` passes the store's own connection in ``config.attributes["connection"]``
(the Alembic cookbook's connection-sharing recipe); the plain ``alembic`` command builds an engine
from ``TIERGATE_AUDIT__URL`` or ``sqlalchemy.url``.
"""

from __future__ import annotations

import asyncio
import os
from logging.config import fileConfig

from alembic import context
from sqlalchemy.engine import Connection

from audit.db import make_engine
from audit.models import Base

config = context.config
target_metadata = Base.metadata


def _configure_and_run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


async def _run_with_own_engine(url: str) -> None:
    engine = make_engine(url)
    try:
        async with engine.begin() as conn:
            await conn.run_sync(_configure_and_run)
    finally:
        await engine.dispose()


def run_online() -> None:
    shared = config.attributes.get("connection")
    if shared is not None:
        _configure_and_run(shared)
        return
    if config.config_file_name is not None:
        fileConfig(config.config_file_name, disable_existing_loggers=False)
    url = os.environ.get("TIERGATE_AUDIT__URL") or config.get_main_option("sqlalchemy.url")
    if not url:
        raise SystemExit("set TIERGATE_AUDIT__URL (or use `tiergate db upgrade`)")
    asyncio.run(_run_with_own_engine(url))


if context.is_offline_mode():
    raise SystemExit("offline (SQL script) migrations are not supported; use `tiergate db upgrade`")
run_online()
