"""Upstream registry and the choice of eligible upstreams for one request (pure).

Order: an alias's explicit list, else the config order of upstreams offering the model. A
candidate must (1) allow the tier (``max_tier``), (2) be of a kind the tenant's policy allows for
that tier, and (3) for Tier 3 on-prem, have a hardened engine. Fallback walks this list only, so it
can never reach an upstream of lower trust than the tier allows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from gateway.settings import Settings, UpstreamSettings
from tiers.types import Tier, UpstreamKind

__all__ = ["Candidate", "Router", "TierRule"]


class TierRule(Protocol):
    """What ``tiers`` says about one tier for one tenant."""

    def allows(self, kind: UpstreamKind) -> bool: ...

    def must_strip(self, kind: UpstreamKind) -> bool: ...


@dataclass(frozen=True, slots=True)
class Candidate:
    upstream: UpstreamSettings
    provider_model: str
    must_strip: bool

    @property
    def name(self) -> str:
        return self.upstream.name

    @property
    def kind(self) -> UpstreamKind:
        return self.upstream.kind

    @property
    def provider(self) -> str | None:
        """The vendor behind the upstream, for the audit row (None: ours or undeclared)."""
        return self.upstream.provider


@dataclass(frozen=True, slots=True)
class Choice:
    """The candidates for a request, and why others were left out (for the refusal message)."""

    candidates: tuple[Candidate, ...]
    excluded_by_tier: int


class Router:
    def __init__(self, settings: Settings) -> None:
        order: dict[str, list[UpstreamSettings]] = {}
        for up in settings.upstreams:
            for public in up.models:
                order.setdefault(public, []).append(up)
        for alias in settings.aliases:
            order[alias.name] = [settings.upstream(n) for n in alias.upstreams]
        self._order = order

    def models(self) -> list[str]:
        return sorted(self._order)

    def knows(self, model: str) -> bool:
        return model in self._order

    def upstreams_for(self, model: str) -> list[UpstreamSettings]:
        return list(self._order.get(model, ()))

    def choose(
        self,
        model: str,
        tier: Tier,
        rule: TierRule,
        *,
        hardened: Callable[[UpstreamSettings], bool],
    ) -> Choice:
        eligible: list[Candidate] = []
        excluded = 0
        for up in self._order.get(model, ()):
            ok = up.max_tier >= tier and rule.allows(up.kind)
            if ok and tier >= Tier.RESTRICTED and up.kind == UpstreamKind.ONPREM:
                ok = hardened(up)  # fail closed: an unknown or unhardened engine gets no Tier 3
            if not ok:
                excluded += 1
                continue
            eligible.append(Candidate(up, up.models[model], rule.must_strip(up.kind)))
        return Choice(tuple(eligible), excluded)
