"""One ladder or prefix-cache probe from the settings: plan, budget guard, run (shared by the CLI
and the server's schedule)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gateway.probes.plan import ProbePlan, ladder_plan, prefix_cache_plan, price_for
from gateway.tokens import TokenCounter, counter_for

if TYPE_CHECKING:
    from gateway.probes.settings import ProbeSettings
    from gateway.probes.ladder import LadderReport
    from gateway.probes.prefix_cache import PrefixCacheReport
    from gateway.settings import Settings, UpstreamSettings
    from gateway.upstream import UpstreamClient

__all__ = [
    "ladder_for",
    "prefix_cache_for",
    "provider_model",
    "run_ladder",
    "run_prefix_cache",
    "scheduled_over_budget",
    "upstream_counter",
]


def upstream_counter(up: UpstreamSettings) -> TokenCounter:
    """Our count for ``up``, as the pipeline makes it: its tokenizer_file, else the estimate."""
    return counter_for(up.tokenizer_file, bytes_per_token=up.bytes_per_token, tolerance=up.usage_tolerance)


def provider_model(up: UpstreamSettings, model: str | None = None) -> str:
    """The provider model name to probe: ``model`` (public or provider name) or the first offered."""
    if model:
        return up.models.get(model, model)
    if not up.models:
        raise ValueError(f"upstream {up.name!r} lists no models: pass one explicitly")
    return next(iter(up.models.values()))


def ladder_for(settings: Settings, up: UpstreamSettings, probes: ProbeSettings | None = None,
               model: str | None = None) -> ProbePlan:  # fmt: skip
    cfg = probes or settings.probes
    return ladder_plan(upstream=up.name, model=provider_model(up, model), context_window=up.context_window,
                       safe_prompt_tokens=up.safe_prompt_tokens, cfg=cfg.ladder, budget=cfg.max_tokens_per_run,
                       price=price_for(up.provider, settings.vendors))  # fmt: skip


def prefix_cache_for(settings: Settings, up: UpstreamSettings, probes: ProbeSettings | None = None,
                     model: str | None = None) -> ProbePlan:  # fmt: skip
    cfg = probes or settings.probes
    return prefix_cache_plan(upstream=up.name, model=provider_model(up, model), cfg=cfg.prefix_cache,
                             budget=cfg.max_tokens_per_run, price=price_for(up.provider, settings.vendors))  # fmt: skip


async def run_ladder(client: UpstreamClient, plan: ProbePlan, probes: ProbeSettings, *,
                     salt_key: bytes | None) -> LadderReport:  # fmt: skip
    """Refuse an over-budget plan (``OverBudget``, nothing sent), else climb it."""
    from gateway.probes.ladder import climb

    plan.check_budget()
    return await climb(client, plan, probes.ladder, upstream_counter(client.settings), salt_key=salt_key)


async def run_prefix_cache(client: UpstreamClient, plan: ProbePlan, probes: ProbeSettings, *,
                           salt_key: bytes | None) -> PrefixCacheReport:  # fmt: skip
    from gateway.probes.prefix_cache import probe_prefix_cache

    plan.check_budget()
    return await probe_prefix_cache(client, plan, probes.prefix_cache, upstream_counter(client.settings),
                                    salt_key=salt_key)  # fmt: skip


def scheduled_over_budget(settings: Settings) -> list[str]:
    """One line per scheduled ladder or prefix-cache probe whose plan exceeds
    ``probes.max_tokens_per_run``: such a probe would be refused every round (for ``config check``)."""
    probes = settings.probes
    out = []
    for block, plan_for, default in (("ladder", ladder_for, None), ("prefix_cache", prefix_cache_for, "onprem")):
        sub = getattr(probes, block)
        if sub.interval_s is None:
            continue
        names = sub.upstreams or [u.name for u in settings.upstreams if default is None or u.kind == default]
        for name in names:
            up = settings.upstream(name)
            if not up.models:
                continue
            plan = plan_for(settings, up)
            if not plan.within_budget:
                out.append(f"probes.{block}: the scheduled probe of {name} needs {plan.total_tokens:,} tokens, over "
                           f"probes.max_tokens_per_run ({plan.budget:,}): it will never run")  # fmt: skip
    return out
