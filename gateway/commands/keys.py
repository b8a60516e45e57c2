"""`tiergate keys`: create, list and revoke client API keys."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from gateway.commands._common import config_option, load_or_exit, run_with_store

if TYPE_CHECKING:
    from audit import AuditStore
    from audit.types import KeyInfo

__all__ = ["keys_group"]


@click.group(name="keys")
def keys_group() -> None:
    """Client API keys (stored hashed; shown once at creation)."""


def _row(info: KeyInfo) -> dict[str, object]:
    return {
        "key_id": info.key_id,
        "tenant": info.tenant,
        "name": info.name,
        "max_tier": info.max_tier,
        "models": list(info.models) if info.models else None,
        "created_at": info.created_at.isoformat(),
        "revoked_at": info.revoked_at.isoformat() if info.revoked_at else None,
    }


@keys_group.command(name="create")
@config_option
@click.option("--tenant", required=True, help="Tenant the key belongs to.")
@click.option("--name", required=True, help="A label for people (not secret).")
@click.option("--max-tier", type=click.IntRange(1, 3), default=3, show_default=True,
              help="Highest tier this key may send.")  # fmt: skip
@click.option("--model", "models", multiple=True, help="Allowed model (repeat); default: all.")
def create(config_path: str | None, tenant: str, name: str, max_tier: int, models: tuple[str, ...]) -> None:
    """Create a key and print it once."""
    settings = load_or_exit(config_path)

    async def work(store: AuditStore) -> tuple[str, KeyInfo]:
        return await store.create_key(tenant, name, max_tier, list(models) or None)

    plaintext, info = run_with_store(settings, work)
    click.echo(json.dumps({"key": plaintext, **_row(info)}))
    click.echo("Store this key now: it is not shown again.", err=True)


@keys_group.command(name="list")
@config_option
@click.option("--tenant", default=None, help="Only this tenant's keys.")
def list_(config_path: str | None, tenant: str | None) -> None:
    """List keys (never their secrets), one JSON object per line."""
    settings = load_or_exit(config_path)

    async def work(store: AuditStore) -> list[KeyInfo]:
        return await store.list_keys(tenant)

    for info in run_with_store(settings, work):
        click.echo(json.dumps(_row(info)))


@keys_group.command(name="revoke")
@config_option
@click.argument("key_id")
def revoke(config_path: str | None, key_id: str) -> None:
    """Revoke a key by its id; it stops working within limits.auth_cache_s seconds."""
    settings = load_or_exit(config_path)

    async def work(store: AuditStore) -> bool:
        return await store.revoke_key(key_id)

    if not run_with_store(settings, work):
        raise click.ClickException(f"no active key with id {key_id!r}")
    click.echo(json.dumps({"revoked": key_id}))
