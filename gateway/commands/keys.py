"""`tiergate keys`: create, list and revoke client API keys."""

from __future__ import annotations

import json

import click

from gateway.commands._common import config_option, load_or_exit, run_with_store

__all__ = ["keys_group"]


@click.group(name="keys")
def keys_group() -> None:
    """Client API keys (stored hashed; shown once at creation)."""


def _row(info: object) -> dict[str, object]:
    return {
        "key_id": info.key_id,  # type: ignore[attr-defined]
        "tenant": info.tenant,  # type: ignore[attr-defined]
        "name": info.name,  # type: ignore[attr-defined]
        "max_tier": info.max_tier,  # type: ignore[attr-defined]
        "models": list(info.models) if info.models else None,  # type: ignore[attr-defined]
        "created_at": info.created_at.isoformat(),  # type: ignore[attr-defined]
        "revoked_at": info.revoked_at.isoformat() if info.revoked_at else None,  # type: ignore[attr-defined]
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

    async def work(store: object) -> tuple[str, object]:
        return await store.create_key(tenant, name, max_tier, list(models) or None)  # type: ignore[attr-defined]

    plaintext, info = run_with_store(settings, work)
    click.echo(json.dumps({"key": plaintext, **_row(info)}))
    click.echo("Store this key now: it is not shown again.", err=True)


@keys_group.command(name="list")
@config_option
@click.option("--tenant", default=None, help="Only this tenant's keys.")
def list_(config_path: str | None, tenant: str | None) -> None:
    """List keys (never their secrets), one JSON object per line."""
    settings = load_or_exit(config_path)

    async def work(store: object) -> list[object]:
        return await store.list_keys(tenant)  # type: ignore[attr-defined,no-any-return]

    for info in run_with_store(settings, work):
        click.echo(json.dumps(_row(info)))


@keys_group.command(name="revoke")
@config_option
@click.argument("key_id")
def revoke(config_path: str | None, key_id: str) -> None:
    """Revoke a key by its id; it stops working within limits.auth_cache_s seconds."""
    settings = load_or_exit(config_path)

    async def work(store: object) -> bool:
        return await store.revoke_key(key_id)  # type: ignore[attr-defined,no-any-return]

    if not run_with_store(settings, work):
        raise click.ClickException(f"no active key with id {key_id!r}")
    click.echo(json.dumps({"revoked": key_id}))
