"""`tiergate probe --ladder` / `--prefix-cache`: plan, budget guard, run, record, report."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import click

__all__ = ["run_long_probe"]


def run_long_probe(settings: Any, upstream: Any, cfg: Any, *, kind: str, model: str | None,
                   salt_key: bytes | None, dry_run: bool, no_record: bool, metrics_file: str | None) -> None:  # fmt: skip
    from prometheus_client import CollectorRegistry, write_to_textfile

    from gateway.probes.plan import OverBudget
    from gateway.probes.record import LadderMetrics, PrefixCacheMetrics, record_ladder, record_prefix_cache
    from gateway.probes.runner import ladder_for, prefix_cache_for, run_ladder, run_prefix_cache
    from gateway.upstream import UpstreamClient

    try:
        plan = (ladder_for if kind == "ladder" else prefix_cache_for)(settings, upstream, cfg, model)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    # The cost is stated before anything is sent.
    click.echo(json.dumps({"plan": plan.as_dict()}))
    if not plan.within_budget:
        click.echo(str(OverBudget(plan)), err=True)
        raise SystemExit(2)
    if dry_run:
        return

    async def run() -> Any:
        client = UpstreamClient(upstream)
        try:
            if kind == "ladder":
                return await run_ladder(client, plan, cfg, salt_key=salt_key)
            return await run_prefix_cache(client, plan, cfg, salt_key=salt_key)
        except ValueError as exc:
            raise click.ClickException(str(exc)) from None
        finally:
            await client.aclose()

    report = asyncio.run(run())
    registry = CollectorRegistry()
    metrics: Any = LadderMetrics(registry) if kind == "ladder" else PrefixCacheMetrics(registry)

    async def record(store: Any) -> Any:
        event = store.record_event if store is not None else None
        if kind == "ladder":
            lower = cfg.ladder.lower_safe_length and store is not None
            return await record_ladder(report, record_event=event, metrics=metrics, store=store,
                                       lower_safe_length=lower, actor="cli",
                                       safe_tokens=await _effective_safe(store, upstream) if lower else None)  # fmt: skip
        await record_prefix_cache(report, record_event=event, metrics=metrics)
        return None

    if no_record:
        lowered = asyncio.run(record(None))
    else:
        from gateway.commands._common import run_with_store

        lowered = run_with_store(settings, record)
        if lowered is not None:
            from gateway.quarantine import announce_change

            asyncio.run(announce_change(settings.redis_url, settings.quarantine.channel))
    if metrics_file:
        write_to_textfile(metrics_file, registry)
    detail = report.detail()
    if lowered is not None:
        detail["safe_length_lowered_to"] = lowered.max_prompt_tokens
    click.echo(json.dumps(detail))
    if not report.passed:
        click.echo(f"{kind.replace('_', '-')} probe FAILED: {', '.join(report.reasons)}", err=True)
        raise SystemExit(1)


async def _effective_safe(store: Any, upstream: Any) -> int | None:
    safe: int = upstream.safe_tokens
    if store is None:
        return safe
    from audit.length_caps import active_caps

    caps = [c.max_prompt_tokens for c in await active_caps(store.engine) if c.upstream == upstream.name]
    return min([safe, *caps])
