"""`tiergate db` commands, and the ``--db-url`` override the audit and exposure groups share."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from gateway.commands._common import config_option, load_or_exit, run_with_store
from gateway.settings import Settings
from migrations import current_revision, downgrade, upgrade

__all__ = ["db_group", "db_url_option", "load_audit_settings"]

db_url_option = click.option(
    "--db-url",
    default=None,
    envvar="TIERGATE_DB_URL",
    help="Audit database URL; overrides audit.url from the config (e.g. postgresql+asyncpg://user@host/db).",
)


def load_audit_settings(config_path: str | None, db_url: str | None) -> Settings:
    """The settings tree with ``audit.url`` replaced by ``--db-url`` when given."""
    settings = load_or_exit(config_path)
    if db_url:
        audit = settings.audit.model_copy(update={"url": db_url})
        settings = settings.model_copy(update={"audit": audit})
    return settings


def run_store(settings: Settings, work: Callable[[Any], Any], *, migrate: bool = False) -> Any:
    """Open the store, run ``work(store)``; migrations only when asked (``tiergate db upgrade``)."""
    return run_with_store(settings, work, migrate=migrate)


@click.group(name="db")
def db_group() -> None:
    """Database schema migrations."""


@db_group.command("upgrade")
@config_option
@db_url_option
@click.option("--revision", default="head", show_default=True, help="Target Alembic revision.")
def upgrade_command(config_path: str | None, db_url: str | None, revision: str) -> None:
    """Apply the audit schema migrations (safe to run on every start and from every replica)."""
    settings = load_audit_settings(config_path, db_url)

    async def work(store: Any) -> str | None:
        await upgrade(store, revision)
        return await current_revision(store.engine)

    rev = run_store(settings, work)
    click.echo(f"audit schema at revision {rev}")


@db_group.command("downgrade")
@config_option
@db_url_option
@click.argument("revision")
@click.option("--yes", is_flag=True, help="Confirm: downgrading can drop tables and their rows.")
def downgrade_command(config_path: str | None, db_url: str | None, revision: str, yes: bool) -> None:
    """Revert the audit schema to REVISION ("base" drops every audit table)."""
    if not yes:
        raise click.UsageError("downgrading may destroy audit rows; pass --yes to confirm")
    settings = load_audit_settings(config_path, db_url)

    async def work(store: Any) -> str | None:
        await downgrade(store, revision)
        return await current_revision(store.engine)

    rev = run_store(settings, work)
    click.echo(f"audit schema at revision {rev or 'base'}")


@db_group.command("current")
@config_option
@db_url_option
def current_command(config_path: str | None, db_url: str | None) -> None:
    """Print the audit schema's current revision."""
    settings = load_audit_settings(config_path, db_url)

    async def work(store: Any) -> str | None:
        return await current_revision(store.engine)

    click.echo(run_store(settings, work) or "base")
