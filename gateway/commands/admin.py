"""`tiergate admin`: dashboard administrators (create, list, set a password, disable, delete).

Passwords are read from a prompt (hidden, asked twice) or from standard input with
``--password-stdin`` for scripts, never from an argument (which would land in the shell history
and the process list).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from gateway.commands._common import config_option
from gateway.commands.db import db_url_option, load_audit_settings, run_store

__all__ = ["admin_group"]


def _password(from_stdin: bool) -> str:
    if from_stdin:
        value = sys.stdin.readline().rstrip("\r\n")
    else:
        value = click.prompt("Password", hide_input=True, confirmation_prompt=True)
    if len(value) < 12:
        raise click.ClickException("passwords need at least 12 characters")
    return str(value)


def _run(config_path: str | None, db_url: str | None, work: Any, *, change: str | None = None,
         username: str | None = None) -> Any:  # fmt: skip
    """``work(engine)``; with ``change``, a change that took effect is also a chained audit event
    (``admin_<change>``: who, their tenant, never a password), so the SIEM stream carries it."""
    from audit.admins import list_admins

    settings = load_audit_settings(config_path, db_url)

    async def run(store: Any) -> Any:
        before = None
        if change is not None:
            before = next((a for a in await list_admins(store.engine) if a.username == username), None)
        result = await work(store.engine)
        if change is not None and result:
            tenant = getattr(result, "tenant", before.tenant if before is not None else None)
            await store.record_event(f"admin_{change}", {"username": username, "tenant": tenant,
                                                         "platform": tenant is None, "actor": "cli"})  # fmt: skip
        return result

    return run_store(settings, run, migrate=settings.embedded)


password_stdin = click.option("--password-stdin", is_flag=True,
                              help="Read the password from the first line of standard input.")  # fmt: skip


@click.group(name="admin")
def admin_group() -> None:
    """Dashboard administrators: platform admins see every tenant, tenant admins only theirs."""


@admin_group.command("create-user")
@config_option
@db_url_option
@click.argument("username")
@click.option("--tenant", default=None, help="Confine this admin to one tenant.")
@click.option("--platform", is_flag=True, help="A platform admin: sees every tenant.")
@password_stdin
def create_user(config_path: str | None, db_url: str | None, username: str, tenant: str | None,
                platform: bool, password_stdin: bool) -> None:  # fmt: skip
    """Create USERNAME as a tenant admin (--tenant T) or a platform admin (--platform)."""
    from audit.admins import AdminExists, create_admin

    if platform == (tenant is not None):
        raise click.UsageError("give exactly one of --tenant TENANT or --platform")
    password = _password(password_stdin)

    async def work(engine: Any) -> Any:
        try:
            return await create_admin(engine, username, password, tenant)
        except AdminExists:
            raise click.ClickException(f"admin {username!r} already exists") from None
        except ValueError as exc:
            raise click.ClickException(str(exc)) from None

    info = _run(config_path, db_url, work, change="created", username=username)
    click.echo(json.dumps({"username": info.username, "tenant": info.tenant,
                           "platform": info.is_platform}))  # fmt: skip


@admin_group.command("list")
@config_option
@db_url_option
def list_users(config_path: str | None, db_url: str | None) -> None:
    """List admins, one JSON object per line (never a password hash)."""
    from audit.admins import list_admins

    for info in _run(config_path, db_url, list_admins):
        click.echo(json.dumps({"username": info.username, "tenant": info.tenant,
                               "platform": info.is_platform, "disabled": info.disabled,
                               "created_at": info.created_at.isoformat()}))  # fmt: skip


def _must(found: bool, username: str) -> None:
    if not found:
        raise click.ClickException(f"no admin named {username!r}")


@admin_group.command("set-password")
@config_option
@db_url_option
@click.argument("username")
@password_stdin
def set_password_command(config_path: str | None, db_url: str | None, username: str,
                         password_stdin: bool) -> None:  # fmt: skip
    """Replace USERNAME's password, clear a lockout and end their sessions."""
    from audit.admins import set_password

    password = _password(password_stdin)
    _must(_run(config_path, db_url, lambda engine: set_password(engine, username, password),
               change="password_set", username=username), username)  # fmt: skip
    click.echo(json.dumps({"password_set": username}))


@admin_group.command("disable")
@config_option
@db_url_option
@click.argument("username")
def disable_command(config_path: str | None, db_url: str | None, username: str) -> None:
    """Disable USERNAME and end their sessions."""
    from audit.admins import set_disabled

    _must(_run(config_path, db_url, lambda engine: set_disabled(engine, username, True), change="disabled",
               username=username), username)  # fmt: skip
    click.echo(json.dumps({"disabled": username}))


@admin_group.command("enable")
@config_option
@db_url_option
@click.argument("username")
def enable_command(config_path: str | None, db_url: str | None, username: str) -> None:
    """Enable a disabled USERNAME again."""
    from audit.admins import set_disabled

    _must(_run(config_path, db_url, lambda engine: set_disabled(engine, username, False), change="enabled",
               username=username), username)  # fmt: skip
    click.echo(json.dumps({"enabled": username}))


@admin_group.command("delete")
@config_option
@db_url_option
@click.argument("username")
def delete_command(config_path: str | None, db_url: str | None, username: str) -> None:
    """Delete USERNAME and their sessions."""
    from audit.admins import delete_admin

    _must(_run(config_path, db_url, lambda engine: delete_admin(engine, username), change="deleted",
               username=username), username)  # fmt: skip
    click.echo(json.dumps({"deleted": username}))
