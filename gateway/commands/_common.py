"""Helpers shared by the ``tiergate`` command groups: the ``--config`` option and the store."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import click

from gateway.settings import ConfigError, Settings, load_settings

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


def run_with_store(settings: Settings, work: Callable[[Any], Awaitable[T]]) -> T:
    """Open the audit store, run ``work(store)``, close it; one event loop for the command."""
    from audit.store import AuditStore

    async def main() -> T:
        s = settings.secrets
        store = await AuditStore.open(
            settings.audit,
            fingerprint_key=s.fingerprint_key.get_secret_value().encode(),  # type: ignore[union-attr]
            checkpoint_key=s.checkpoint_key.get_secret_value().encode(),  # type: ignore[union-attr]
        )
        try:
            if settings.embedded:
                await store.upgrade()
            return await work(store)
        finally:
            await store.close()

    return asyncio.run(main())
