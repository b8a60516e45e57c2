"""`tiergate probe --upstream NAME`: a probe against one configured upstream.

- plain: the isolation probe (short concurrent requests with markers, ``gateway.probe``);
- ``--ladder``: the long-context ladder (``gateway.probes.ladder``);
- ``--prefix-cache``: the cross-tenant prefix-cache probe (``gateway.probes.prefix_cache``);
- ``--restore-safe-length UPSTREAM --reason ...``: end a lowering a failed ladder made.

A ladder or prefix-cache probe prints its plan first (requests, tokens, the price when the vendor
register knows it) as one JSON line, and refuses to start over ``probes.max_tokens_per_run``
(exit 2); ``--dry-run`` prints the plan and sends nothing. Then the report as one JSON line,
recorded in the audit log (unless ``--no-record``); exit 1 when the probe failed, so a cron job or
CI step can alert on it.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import click

from gateway.commands._common import config_option, load_or_exit

__all__ = ["probe_command"]


def _rungs(_ctx: Any, _param: Any, value: str | None) -> list[int] | None:
    if value is None:
        return None
    try:
        rungs = [int(v) for v in value.split(",") if v.strip()]
    except ValueError:
        raise click.BadParameter("a comma-separated list of token counts") from None
    if not rungs or any(r < 16 for r in rungs):
        raise click.BadParameter("each rung must be at least 16 tokens")
    return rungs


@click.command(name="probe")
@config_option
@click.option("--upstream", "upstream_name", default=None, help="Name of the upstream to probe.")
@click.option("--model", default=None, help="Model to probe (public or provider name); default: the first.")
@click.option("--requests", "n_requests", type=click.IntRange(2, 10_000), default=None,
              help="Requests, each with its own marker (default: probes.requests).")  # fmt: skip
@click.option("--concurrency", type=click.IntRange(1, 1_000), default=None,
              help="Requests in flight at once (default: probes.concurrency).")  # fmt: skip
@click.option(
    "--tenants",
    type=click.IntRange(1, 1_000),
    default=None,
    help="Synthetic tenants, each with its own cache_salt on on-prem (default: probes.tenants).",
)
@click.option("--max-missing", type=click.IntRange(0), default=None,
              help="Answers allowed to miss their own marker (default: probes.max_missing).")  # fmt: skip
@click.option("--stream/--no-stream", "stream", default=None,
              help="Read streamed (SSE) answers instead of whole ones (default: probes.stream).")  # fmt: skip
@click.option("--ladder", is_flag=True, help="Run the long-context ladder probe instead.")
@click.option("--prefix-cache", is_flag=True, help="Run the cross-tenant prefix-cache probe instead.")
@click.option("--rungs", callback=_rungs, default=None,
              help="Ladder rungs in tokens, comma-separated (default: probes.ladder).")  # fmt: skip
@click.option(
    "--max-tokens-per-run",
    type=click.IntRange(1),
    default=None,
    help="Token budget of a ladder or prefix-cache run (default: probes.max_tokens_per_run).",
)
@click.option(
    "--lower-safe-length/--keep-safe-length",
    "lower",
    default=None,
    help="On a failed rung, lower the upstream's safe length (default: probes.ladder.lower_safe_length).",
)
@click.option(
    "--salting",
    type=click.Choice(["tenant", "shared"]),
    default=None,
    help="Prefix-cache probe: per-tenant salts, or one shared (default: probes.prefix_cache.salting).",
)
@click.option("--dry-run", is_flag=True, help="Print the ladder or prefix-cache plan and send nothing.")
@click.option(
    "--restore-safe-length",
    "restore",
    default=None,
    metavar="UPSTREAM",
    help="End the lowering of UPSTREAM's safe length (with --reason); probes nothing.",
)
@click.option("--reason", default=None, help="Why the safe length is restored (kept in the audit log).")
@click.option("--actor", default="cli", show_default=True, help="Who restores it (kept in the audit log).")
@click.option("--no-record", is_flag=True, help="Do not write the result to the audit log.")
@click.option(
    "--metrics-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Also write the result as Prometheus text (for node_exporter's textfile collector).",
)
def probe_command(
    config_path: str | None, upstream_name: str | None, model: str | None, n_requests: int | None,
    concurrency: int | None, tenants: int | None, max_missing: int | None, stream: bool | None,
    ladder: bool, prefix_cache: bool, rungs: list[int] | None, max_tokens_per_run: int | None,
    lower: bool | None, salting: str | None, dry_run: bool, restore: str | None, reason: str | None,
    actor: str, no_record: bool, metrics_file: str | None,
) -> None:  # fmt: skip
    """Send concurrent requests with unique markers; fail on any crossed or missing marker."""
    settings = load_or_exit(config_path)
    if restore is not None:
        _restore(settings, restore, reason, actor)
        return
    if upstream_name is None:
        raise click.UsageError("--upstream is required")
    if ladder and prefix_cache:
        raise click.UsageError("--ladder and --prefix-cache are separate probes: pick one")
    try:
        upstream = settings.upstream(upstream_name)
    except KeyError:
        raise click.ClickException(f"no upstream named {upstream_name!r} in the configuration") from None
    base = settings.probes
    overrides: dict[str, Any] = {k: v for k, v in (("requests", n_requests), ("concurrency", concurrency),
                                                   ("tenants", tenants), ("max_missing", max_missing),
                                                   ("stream", stream),
                                                   ("max_tokens_per_run", max_tokens_per_run)) if v is not None}  # fmt: skip
    ladder_over = {k: v for k, v in (("rungs", rungs), ("lower_safe_length", lower),
                                     ("stream", stream if ladder else None)) if v is not None}  # fmt: skip
    if ladder_over:
        overrides["ladder"] = base.ladder.model_copy(update=ladder_over)
    if salting is not None:
        overrides["prefix_cache"] = base.prefix_cache.model_copy(update={"salting": salting})
    cfg = base.model_copy(update=overrides)
    salt = settings.secrets.cache_salt_key
    salt_key = salt.get_secret_value().encode() if salt is not None else None
    if ladder or prefix_cache:
        from gateway.commands._probe_long import run_long_probe

        run_long_probe(settings, upstream, cfg, kind="ladder" if ladder else "prefix_cache", model=model,
                       salt_key=salt_key, dry_run=dry_run, no_record=no_record, metrics_file=metrics_file)  # fmt: skip
        return
    if dry_run:
        raise click.UsageError("--dry-run applies to --ladder and --prefix-cache")
    _isolation(settings, upstream, cfg, model, salt_key, no_record, metrics_file)


def _restore(settings: Any, upstream: str, reason: str | None, actor: str) -> None:
    from audit.length_caps import restore_safe_length
    from gateway.commands._common import run_with_store

    if not reason:
        raise click.UsageError("--restore-safe-length needs --reason")
    try:
        configured = settings.upstream(upstream).safe_tokens
    except KeyError:
        raise click.ClickException(f"no upstream named {upstream!r} in the configuration") from None

    async def work(store: Any) -> Any:
        caps = await restore_safe_length(store, upstream=upstream, reason=reason, actor=actor)
        from gateway.quarantine import announce_change

        await announce_change(settings.redis_url, settings.quarantine.channel)
        return caps

    caps = run_with_store(settings, work)
    click.echo(json.dumps({"upstream": upstream, "restored": [c.id for c in caps], "safe_tokens": configured}))


def _isolation(settings: Any, upstream: Any, cfg: Any, model: str | None, salt_key: bytes | None,
               no_record: bool, metrics_file: str | None) -> None:  # fmt: skip
    from gateway.probe import ProbeMetrics, probe_upstream, record_probe
    from gateway.upstream import UpstreamClient

    async def run() -> Any:
        client = UpstreamClient(upstream)
        try:
            try:
                return await probe_upstream(client, settings=cfg, model=model, salt_key=salt_key)
            except ValueError as exc:
                raise click.ClickException(str(exc)) from None
        finally:
            await client.aclose()

    report = asyncio.run(run())
    metrics = None
    if metrics_file:
        from prometheus_client import CollectorRegistry

        registry = CollectorRegistry()
        metrics = ProbeMetrics(registry)
    if no_record:
        asyncio.run(record_probe(report, record_event=None, metrics=metrics))
    else:
        from gateway.commands._common import run_with_store

        run_with_store(settings, lambda store: record_probe(report, record_event=store.record_event,
                                                            metrics=metrics))  # fmt: skip
    if metrics_file and metrics is not None:
        from prometheus_client import write_to_textfile

        write_to_textfile(metrics_file, registry)
    click.echo(json.dumps(report.detail()))
    if not report.passed:
        click.echo(f"isolation probe FAILED: {', '.join(report.reasons)}", err=True)
        raise SystemExit(1)
