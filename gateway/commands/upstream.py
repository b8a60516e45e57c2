"""`tiergate upstream`: quarantine an upstream, a vendor or one vendor model, release it, list.

The change is written to the audit database (every replica polls it within
``quarantine.poll_s``) and announced on Redis when ``redis_url`` is set (replicas re-read at once).
The target is checked against the config first: a misspelt provider would quarantine nothing.
"""

from __future__ import annotations

import asyncio
import getpass
import json
from typing import Any

import click

from gateway.commands._common import config_option
from gateway.commands.db import db_url_option, load_audit_settings, run_store
from gateway.settings import Settings

__all__ = ["upstream_group"]


def _default_actor() -> str:
    try:
        return f"cli:{getpass.getuser()}"
    except Exception:  # noqa: BLE001 -- no user name in this environment: the operator must say who they are
        return ""


def check_target(settings: Settings, upstream: str | None, provider: str | None, model: str | None) -> None:
    """Raise ``click.UsageError`` unless the config has an upstream the target would cover."""
    from gateway.quarantine import target_problem

    problem = target_problem(settings.upstreams, upstream, provider, model)
    if problem is not None:
        raise click.UsageError(problem)


def _announce(settings: Settings) -> str:
    from gateway.quarantine import announce_change

    q = settings.quarantine
    told = asyncio.run(announce_change(settings.redis_url, q.channel))
    return ("announced on Redis: replicas re-read now" if told
            else f"every replica reads it within {q.poll_s:g}s")  # fmt: skip


target_options = [
    click.argument("name", required=False),
    click.option("--provider", default=None, help="The vendor, as upstreams declare `provider:`."),
    click.option("--model", default=None, help="Only this vendor model id (a `models` value)."),
    click.option("--reason", required=True, help="Why (recorded with the change)."),
    click.option("--actor", default=_default_actor, show_default="cli:$USER", help="Who decided it."),
]


def _targeted(f: Any) -> Any:
    for option in reversed(target_options):
        f = option(f)
    return db_url_option(config_option(f))


@click.group(name="upstream")
def upstream_group() -> None:
    """Take upstreams, vendors or vendor models out of routing and back."""


@upstream_group.command("quarantine")
@_targeted
def quarantine_command(config_path: str | None, db_url: str | None, name: str | None,
                       provider: str | None, model: str | None, reason: str, actor: str) -> None:  # fmt: skip
    """Quarantine upstream NAME, or every upstream of --provider (optionally only --model).

    Routing then uses the model's other upstreams of equal or higher trust, or refuses (503
    upstream_quarantined); never an upstream of lower trust.
    """
    from audit.quarantine import quarantine

    settings = load_audit_settings(config_path, db_url)
    check_target(settings, name, provider, model)

    async def work(store: Any) -> Any:
        return await quarantine(store, upstream=name, provider=provider, model=model, reason=reason,
                                actor=actor)  # fmt: skip

    entry = run_store(settings, work)
    click.echo(json.dumps({"quarantined": entry.as_dict()}))
    click.echo(f"quarantine #{entry.id} ({entry.target}) in force; {_announce(settings)}", err=True)


@upstream_group.command("release")
@_targeted
@click.option("--id", "quarantine_id", type=click.IntRange(1), default=None,
              help="Release this quarantine by id instead of by its target.")  # fmt: skip
def release_command(config_path: str | None, db_url: str | None, name: str | None,
                    provider: str | None, model: str | None, reason: str, actor: str,
                    quarantine_id: int | None) -> None:  # fmt: skip
    """Release the quarantine of NAME / --provider [--model], or --id N."""
    from audit.quarantine import release

    settings = load_audit_settings(config_path, db_url)

    async def work(store: Any) -> Any:
        return await release(store, quarantine_id, upstream=name, provider=provider, model=model,
                             reason=reason, actor=actor)  # fmt: skip

    entry = run_store(settings, work)
    click.echo(json.dumps({"released": entry.as_dict()}))
    click.echo(f"quarantine #{entry.id} ({entry.target}) released; {_announce(settings)}", err=True)


@upstream_group.command("quarantines")
@config_option
@db_url_option
@click.option("--all", "include_released", is_flag=True, help="Released ones too (the history).")
def list_command(config_path: str | None, db_url: str | None, include_released: bool) -> None:
    """List quarantines in force (newest first), one JSON object per line."""
    from audit.quarantine import list_quarantines

    settings = load_audit_settings(config_path, db_url)

    async def work(store: Any) -> Any:
        return await list_quarantines(store.engine, include_released=include_released)

    for entry in run_store(settings, work):
        click.echo(json.dumps(entry.as_dict()))
