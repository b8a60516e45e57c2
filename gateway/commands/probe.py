"""`tiergate probe --upstream NAME`: an isolation probe against one configured upstream.

Prints the report as one JSON object, records it in the audit log as an ``isolation_probe`` event
(unless ``--no-record``) and exits 1 when the probe failed, so a cron job or CI step can alert on it.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import click

from gateway.commands._common import config_option, load_or_exit

__all__ = ["probe_command"]


@click.command(name="probe")
@config_option
@click.option("--upstream", "upstream_name", required=True, help="Name of the upstream to probe.")
@click.option("--model", default=None, help="Model to probe (public or provider name); default: the first.")
@click.option("--requests", "n_requests", type=click.IntRange(2, 10_000), default=None,
              help="Requests, each with its own marker (default: probes.requests).")  # fmt: skip
@click.option("--concurrency", type=click.IntRange(1, 1_000), default=None,
              help="Requests in flight at once (default: probes.concurrency).")  # fmt: skip
@click.option("--tenants", type=click.IntRange(1, 1_000), default=None,
              help="Synthetic tenants, each with its own cache_salt on on-prem (default: probes.tenants).")
@click.option("--max-missing", type=click.IntRange(0), default=None,
              help="Answers allowed to miss their own marker (default: probes.max_missing).")  # fmt: skip
@click.option("--stream/--no-stream", "stream", default=None,
              help="Read streamed (SSE) answers instead of whole ones (default: probes.stream).")  # fmt: skip
@click.option("--no-record", is_flag=True, help="Do not write the result to the audit log.")
@click.option("--metrics-file", type=click.Path(dir_okay=False), default=None,
              help="Also write the result as Prometheus text (for node_exporter's textfile collector).")
def probe_command(
    config_path: str | None, upstream_name: str, model: str | None, n_requests: int | None,
    concurrency: int | None, tenants: int | None, max_missing: int | None, stream: bool | None,
    no_record: bool, metrics_file: str | None,
) -> None:  # fmt: skip
    """Send concurrent requests with unique markers; fail on any crossed or missing marker."""
    from gateway.probe import ProbeMetrics, probe_upstream, record_probe
    from gateway.upstream import UpstreamClient

    settings = load_or_exit(config_path)
    try:
        upstream = settings.upstream(upstream_name)
    except KeyError:
        raise click.ClickException(f"no upstream named {upstream_name!r} in the configuration") from None
    base = settings.probes
    overrides = {k: v for k, v in (("requests", n_requests), ("concurrency", concurrency),
                                   ("tenants", tenants), ("max_missing", max_missing),
                                   ("stream", stream)) if v is not None}  # fmt: skip
    cfg = base.model_copy(update=overrides)
    salt = settings.secrets.cache_salt_key
    salt_key = salt.get_secret_value().encode() if salt is not None else None

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

