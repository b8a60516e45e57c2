"""Helpers shared by the ``tiergate`` command groups: the ``--config`` option and the store."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import click

from gateway.settings import ConfigError, Settings, load_settings
from migrations import upgrade

__all__ = ["config_option", "load_or_exit", "run_with_store"]

T = TypeVar("T")

config_option = click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    default=None,
    envvar="TIERGATE_CONFIG",
    help="YAML config file (default: $TIERGATE_CONFIG; environment TIERGATE_* overrides it).",
)


def load_or_exit(config_path: str | None) -> Settings:
    """Load the settings or exit with status 2 and the list of wrong keys."""
    try:
        return load_settings(config_path)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None


def run_with_store(settings: Settings, work: Callable[[Any], Awaitable[T]], *, migrate: bool | None = None) -> T:
    """Open the audit store, run ``work(store)``, close it; one event loop for the command.

    ``migrate``: apply migrations first (default: only in embedded SQLite mode). Audit and
    database errors become a clean CLI error without a traceback.
    """
    from sqlalchemy.exc import SQLAlchemyError

    from audit import AuditError, AuditStore

    async def main() -> T:
        s = settings.secrets
        store = await AuditStore.open(
            settings.audit,
            fingerprint_key=s.fingerprint_key.get_secret_value().encode(),  # type: ignore[union-attr]  # required by Settings
            checkpoint_key=s.checkpoint_key.get_secret_value().encode(),  # type: ignore[union-attr]  # required by Settings
        )
        try:
            if settings.embedded if migrate is None else migrate:
                await upgrade(store)
            return await work(store)
        finally:
            await store.close()

    try:
        return asyncio.run(main())
    except AuditError as exc:
        raise click.ClickException(str(exc)) from None
    except SQLAlchemyError as exc:  # e.g. no schema yet: say so without a traceback
        raise click.ClickException(
            f"audit database error ({type(exc).__name__}); is the schema migrated? run `tiergate db upgrade`"
        ) from None
