"""`tiergate alerts test`: send a test alert through every configured webhook (or one)."""

from __future__ import annotations

import asyncio
import os

import click
import httpx

from gateway.commands._common import config_option, load_or_exit

__all__ = ["alerts_group"]


@click.group(name="alerts")
def alerts_group() -> None:
    """Alerts to webhooks (the ``alerts`` settings)."""


@alerts_group.command("test")
@config_option
@click.option("--webhook", "only", default=None, help="Only this webhook (by name).")
def test_command(config_path: str | None, only: str | None) -> None:
    """Send one test alert (marked test, severity info) to each webhook in its format; print
    what each answered. Exit status: 0 every webhook took it; 1 one did not."""
    from gateway.alerts.manager import send_alert
    from gateway.alerts.rules import Alert

    settings = load_or_exit(config_path).alerts
    hooks = [h for h in settings.webhooks if only is None or h.name == only]
    if not hooks:
        raise click.UsageError("no alerts.webhooks configured" + (f" named {only!r}" if only else ""))
    alert = Alert("test", "test", "info", "test alert from `tiergate alerts test`", {"rule": "test"}, test=True)

    async def run() -> list[bool]:
        async with httpx.AsyncClient(timeout=settings.timeout_s, follow_redirects=False) as client:
            return list(await asyncio.gather(*(send_alert(client, h, alert, os.environ.get, retries=0, backoff_s=0)
                                               for h in hooks)))  # fmt: skip

    results = asyncio.run(run())
    for hook, ok in zip(hooks, results, strict=True):
        click.echo(f"{hook.name} ({hook.format}): {'sent' if ok else 'FAILED'}")
    if not all(results):
        raise SystemExit(1)
