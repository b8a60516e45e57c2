"""`tiergate config check`: validate the configuration without starting anything; `tiergate config
prefilter`: compile what the gateway's first start would compile, ahead."""

from __future__ import annotations

import os
from pathlib import Path

import click

from gateway.commands._common import config_option, load_or_exit

__all__ = ["config_group"]


@click.group(name="config")
def config_group() -> None:
    """Validate configuration."""


@config_group.command(name="check")
@config_option
def check(config_path: str | None) -> None:
    """Load the YAML and environment, build the classifier, check files and key variables."""
    settings = load_or_exit(config_path)
    problems: list[str] = []
    token_env = settings.server.metrics_token_env
    if token_env and not os.environ.get(token_env):
        problems.append(f"server.metrics_token_env: environment variable {token_env} is not set "
                        "(every /metrics scrape would be refused)")  # fmt: skip
    for i, up in enumerate(settings.upstreams):
        if up.api_key_env and not os.environ.get(up.api_key_env):
            problems.append(f"upstreams.{i}.api_key_env: environment variable {up.api_key_env} is not set")
        if up.tokenizer_file is not None and not up.tokenizer_file.is_file():
            problems.append(f"upstreams.{i}.tokenizer_file: no such file")
        if not up.models:
            problems.append(f"upstreams.{i}.models: offers no model")
    try:
        from tiers import Classifier

        Classifier(settings.tiers)
    except Exception as exc:  # noqa: BLE001 -- the policy is invalid; its message names keys, never prompt text
        problems.append(f"tiers: {exc}")
    if problems:
        raise click.ClickException("invalid configuration:\n  " + "\n  ".join(problems))
    for i, up in enumerate(settings.upstreams):
        if up.provider is None and up.kind != "onprem":
            # Valid, but a vendor's incident disclosure naming its provider would miss these
            # requests: say so now rather than on the day of the incident.
            click.echo(f"warning: upstreams.{i}.provider: {up.name} ({up.kind}) declares no provider; "
                       "a disclosure naming the vendor cannot find its requests", err=True)  # fmt: skip
    from gateway.probes.runner import scheduled_over_budget

    for line in scheduled_over_budget(settings):
        click.echo(f"warning: {line}", err=True)
    models = sorted({m for u in settings.upstreams for m in u.models} | {a.name for a in settings.aliases})
    mode = "embedded (SQLite)" if settings.embedded else "database by URL"
    click.echo(f"ok: {len(settings.upstreams)} upstreams, {len(models)} models, {mode}")


@config_group.command(name="prefilter")
@config_option
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=0, min_open=True), default=600.0,
              show_default=True, help="seconds the compile may take")  # fmt: skip
def prefilter(config_path: str | None, timeout_s: float) -> None:
    """Compile the classifier's first pass for this configuration into ``cache_dir`` and keep it
    there, as the gateway's first start would in the background (seconds of one core): run it
    where an image is built, or before a benchmark, so that every start attaches it at once.

    The gateway must see the same folder (set ``cache_dir`` rather than rely on the user's home)
    and run on a CPU of the same family: a database built for other instructions does not load,
    and is compiled again at the start. Where there is nothing to compile (``limits.prefilter``
    off, or no Vectorscan wheel for this platform) it says so and succeeds.

    The recognizers' tables are kept there too (``gateway/tables.py``), whatever the prefilter
    setting: a start then reads them instead of deriving them from the installed packages."""
    from concurrent.futures import TimeoutError as FutureTimeout

    from gateway.cache_files import cache_dir_for
    from gateway.prefilter import attach_prefilter, kept_at
    from gateway.tables import build_classifier, keep_tables, kept_tables_at
    from tiers.prefilter import available

    settings = load_or_exit(config_path)
    folder = cache_dir_for(settings)
    tables = kept_tables_at(folder)
    tables_before = _inode(tables)
    try:
        clf = build_classifier(settings.tiers, folder)
    except Exception as exc:  # noqa: BLE001 -- an invalid tiers section; its message names keys
        raise click.ClickException(f"invalid configuration:\n  tiers: {exc}") from None
    if _inode(tables) is None:
        keep_tables(folder)  # this process had them already: read from a snapshot elsewhere, or derived
    tables_after = _inode(tables)
    if tables_after is None:
        click.echo(f"warning: the recognizers' tables were not kept in {folder} (see the warning above)", err=True)
    else:
        click.echo(f"tables {'already kept' if tables_after == tables_before else 'kept'}: {tables}")
    if not settings.limits.prefilter or not available():
        why = "limits.prefilter is off" if not settings.limits.prefilter else "no Vectorscan (hyperscan) wheel here"
        click.echo(f"nothing compiled: {why}; the gateway scans with RE2's sets", err=True)
        return
    path = kept_at(folder, clf.prefilter_key)
    before = _inode(path)  # a damaged file is compiled anew and replaced (another inode)
    try:
        attached = attach_prefilter(clf, folder, lambda: None).result(timeout=timeout_s)
    except FutureTimeout:
        raise click.ClickException(f"the compile did not finish in {timeout_s:g} s") from None
    after = _inode(path)
    if after is None:
        raise click.ClickException(f"no database kept in {folder} (see the warning above)")
    if not attached:
        raise click.ClickException(f"{path} was written but does not load here (see the warning above)")
    click.echo(f"{'already kept' if after == before else 'kept'}: {path}")


def _inode(path: Path) -> int | None:
    try:
        return path.stat().st_ino
    except OSError:
        return None
