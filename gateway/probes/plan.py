"""What a probe will send, stated before it sends anything: rungs, tokens, and the price.

A probe of a million-token window costs real money at a vendor. The plan is computed from the
settings alone (no request is sent), priced from the vendor register (``vendors.providers.<p>.price``)
when it knows the upstream's provider, and refused when its tokens exceed
``probes.max_tokens_per_run``: an over-budget probe does not start at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from audit.vendors import VendorPrice, VendorRegister
from gateway.probes.settings import LadderSettings, PrefixCacheSettings
from gateway.tokens import BASE_FRAMING, PER_SEGMENT_FRAMING

__all__ = ["RESERVE_TOKENS", "OverBudget", "ProbePlan", "Rung", "ladder_plan", "ladder_rungs", "prefix_cache_plan",
           "price_for"]  # fmt: skip

# What a chat template may add to our two-message prompt: the top in-context rung leaves it free.
RESERVE_TOKENS = BASE_FRAMING + 2 * PER_SEGMENT_FRAMING


class OverBudget(Exception):
    """The plan needs more tokens than ``probes.max_tokens_per_run`` allows; nothing was sent."""

    def __init__(self, plan: ProbePlan) -> None:
        super().__init__(f"the {plan.kind} probe of {plan.upstream!r} would spend {plan.total_tokens:,} tokens, "
                         f"over probes.max_tokens_per_run ({plan.budget:,}); nothing was sent")  # fmt: skip
        self.plan = plan


@dataclass(frozen=True, slots=True)
class Rung:
    """One ladder step: prompts of ``tokens`` tokens (our count).

    ``may_refuse``: the prompt leaves no room for the answer within the declared context window,
    so a 4xx refusal is the correct answer and passes; an answer is judged like any other."""

    tokens: int
    label: str
    may_refuse: bool

    def as_dict(self) -> dict[str, Any]:
        return {"tokens": self.tokens, "label": self.label, "may_refuse": self.may_refuse}


def _label(tokens: int, safe: int | None, context: int, top: int) -> str:
    if tokens >= context:
        return "over_context"
    if tokens == top:
        return "top"
    if safe is not None and tokens < safe and tokens >= safe * 0.9:
        return "below_safe"
    if safe is not None and safe < tokens <= safe * 1.1:
        return "above_safe"
    return "ladder"


def ladder_rungs(context_window: int, safe_prompt_tokens: int | None, cfg: LadderSettings) -> tuple[Rung, ...]:
    """The rungs, shortest first: ``cfg.rungs`` when given, else the default ladder.

    Default: ``start_tokens`` times ``factor`` to the power n below the top rung (the longest
    prompt that leaves room for ``max_tokens`` and the template), the top rung, a rung
    ``safe_margin`` below and above ``safe_prompt_tokens`` when it is below the top, and with
    ``over_context`` one rung just above the context window."""
    top = max(16, context_window - cfg.max_tokens - RESERVE_TOKENS)
    safe = safe_prompt_tokens if safe_prompt_tokens is not None and safe_prompt_tokens < context_window else None
    if cfg.rungs is not None:
        points = set(cfg.rungs)
    else:
        points = set()
        x = float(cfg.start_tokens)
        while x < top:
            points.add(int(x))
            x *= cfg.factor
        points.add(top)
        if safe is not None:
            step = max(16, int(safe * cfg.safe_margin))
            points.update(p for p in (safe - step, safe + step) if 16 <= p < top)
        if cfg.over_context:
            points.add(context_window + max(64, int(context_window * cfg.safe_margin)))
    return tuple(Rung(t, _label(t, safe, context_window, top), t + cfg.max_tokens + RESERVE_TOKENS > context_window)
                 for t in sorted(points))  # fmt: skip


@dataclass(frozen=True, slots=True)
class ProbePlan:
    kind: str  # "ladder" or "prefix_cache"
    upstream: str
    model: str
    requests: int
    prompt_tokens: int
    output_tokens: int
    budget: int
    rungs: tuple[Rung, ...] = ()
    price: VendorPrice | None = None

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.output_tokens

    @property
    def within_budget(self) -> bool:
        return self.total_tokens <= self.budget

    @property
    def cost(self) -> Decimal | None:
        return None if self.price is None else self.price.cost(self.prompt_tokens, self.output_tokens)

    def check_budget(self) -> None:
        if not self.within_budget:
            raise OverBudget(self)

    def as_dict(self) -> dict[str, Any]:
        cost = self.cost
        return {"kind": self.kind, "upstream": self.upstream, "model": self.model, "requests": self.requests,
                "prompt_tokens": self.prompt_tokens, "output_tokens": self.output_tokens,
                "total_tokens": self.total_tokens, "max_tokens_per_run": self.budget,
                "within_budget": self.within_budget, "rungs": [r.as_dict() for r in self.rungs],
                "cost": None if cost is None else f"{cost:.4f}",
                "currency": None if self.price is None else self.price.currency}  # fmt: skip


def price_for(provider: str | None, register: VendorRegister | None) -> VendorPrice | None:
    if provider is None or register is None:
        return None
    profile = register.providers.get(provider.lower())
    return profile.price if profile is not None else None


def ladder_plan(*, upstream: str, model: str, context_window: int, safe_prompt_tokens: int | None,
                cfg: LadderSettings, budget: int, price: VendorPrice | None = None) -> ProbePlan:  # fmt: skip
    rungs = ladder_rungs(context_window, safe_prompt_tokens, cfg)
    n = cfg.requests_per_rung
    return ProbePlan("ladder", upstream, model, requests=n * len(rungs),
                     prompt_tokens=n * sum(r.tokens + RESERVE_TOKENS for r in rungs),
                     output_tokens=n * len(rungs) * cfg.max_tokens, budget=budget, rungs=rungs, price=price)  # fmt: skip


# Each round: cold, warm and cross-tenant requests on one prefix, and a cold one on another.
PREFIX_REQUESTS_PER_ROUND = 4


def prefix_cache_plan(*, upstream: str, model: str, cfg: PrefixCacheSettings, budget: int,
                      price: VendorPrice | None = None) -> ProbePlan:  # fmt: skip
    n = PREFIX_REQUESTS_PER_ROUND * cfg.rounds
    return ProbePlan("prefix_cache", upstream, model, requests=n,
                     prompt_tokens=n * (cfg.prefix_tokens + RESERVE_TOKENS), output_tokens=n * cfg.max_tokens,
                     budget=budget, price=price)  # fmt: skip
