"""The ``tiergate`` command. Each group lives in its own module under ``gateway/commands``, but
``tiergate engine``: the engine's own commands (``engine/cli.py``), which engine images run as
``python -m engine`` without the gateway."""

from __future__ import annotations

import gc

if __name__ == "__main__":  # `python -m gateway.cli`: as the entry point does (gateway/entry.py)
    gc.disable()

import click

import gateway._httpx  # noqa: F401  # first: httpx without its console command (rich, pygments)
from engine import engine_group
from gateway.commands.admin import admin_group
from gateway.commands.alerts import alerts_group
from gateway.commands.audit import audit_group
from gateway.commands.config import config_group
from gateway.commands.db import db_group
from gateway.commands.exposure import exposure_group
from gateway.commands.keys import keys_group
from gateway.commands.probe import probe_command
from gateway.commands.scan import scan_command
from gateway.commands.serve import serve_command
from gateway.commands.upstream import upstream_group


@click.group()
@click.version_option(package_name="tiergate")
@click.pass_context
def main(ctx: click.Context) -> None:
    """Tiergate: an LLM API gateway that tiers, strips, routes and audits every prompt."""
    if ctx.invoked_subcommand != "serve":  # serve: once its app has started (gateway/app.py)
        gc.enable()


main.add_command(serve_command)
main.add_command(config_group)
main.add_command(db_group)
main.add_command(keys_group)
main.add_command(exposure_group)
main.add_command(audit_group)
main.add_command(engine_group)
main.add_command(admin_group)
main.add_command(probe_command)
main.add_command(upstream_group)
main.add_command(alerts_group)
main.add_command(scan_command)


if __name__ == "__main__":
    main()
