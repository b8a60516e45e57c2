"""Upstream registry and the choice of eligible upstreams for one request (pure).

Order: an alias's explicit list, else the config order of upstreams offering the model. A
candidate must (0) speak the request's wire protocol (``UpstreamSettings.protocols``), (1) allow the tier (``max_tier``), (2) be of a kind the tenant's policy allows for
that tier, and (3) for Tier 3 on-prem, have a hardened engine. Fallback walks this list only, so it
can never reach an upstream of lower trust than the tier allows.

Quarantine (``gateway/quarantine.py``) then takes out every candidate a quarantine in force covers
(its upstream, its provider, or its provider's model), and with it every later candidate of
*lower* trust than a quarantined one: the traffic a quarantined upstream would have carried moves
only to equal or higher trust (shared < dedicated < on-prem), never down. With nothing left the
request is refused with 503 ``upstream_quarantined`` naming the quarantines; while the replica has
never read the quarantine state, every request is refused (503 ``quarantine_state_unknown``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from gateway.errors import Quarantined
from gateway.quarantine import QuarantineBoard
from gateway.settings import Settings, UpstreamSettings
from tiers.types import Tier, UpstreamKind

_TRUST = {kind: rank for rank, kind in enumerate(UpstreamKind)}  # least to most trusted

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
    speakers: int = 0  # upstreams of the model that speak the request's protocol at all


class Router:
    def __init__(self, settings: Settings, *, quarantine: QuarantineBoard | None = None) -> None:
        self._quarantine = quarantine
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
        wire: str = "openai",
    ) -> Choice:
        eligible: list[Candidate] = []
        excluded = 0
        speakers = 0
        for up in self._order.get(model, ()):
            if wire not in up.protocols:
                continue  # the request's protocol is not served there: never a candidate
            speakers += 1
            ok = up.max_tier >= tier and rule.allows(up.kind)
            if ok and tier >= Tier.RESTRICTED and up.kind == UpstreamKind.ONPREM:
                ok = hardened(up)  # fail closed: an unknown or unhardened engine gets no Tier 3
            if not ok:
                excluded += 1
                continue
            eligible.append(Candidate(up, up.models[model], rule.must_strip(up.kind)))
        if self._quarantine is not None:
            eligible = self._unquarantined(model, eligible)
        return Choice(tuple(eligible), excluded, speakers)

    def _unquarantined(self, model: str, eligible: list[Candidate]) -> list[Candidate]:
        board = self._quarantine
        assert board is not None
        if not board.known:
            raise Quarantined("the quarantine state has not been read yet; nothing was forwarded",
                              code="quarantine_state_unknown")  # fmt: skip
        kept: list[Candidate] = []
        hits: dict[int, str] = {}
        floor = -1  # the highest trust of a quarantined candidate so far
        for c in eligible:
            covering = board.covering(c.name, c.provider, c.provider_model)
            if covering:
                for q in covering:  # the client hears ids and vendors, never our upstream names
                    hits[q.id] = f"#{q.id}" + (f" {q.target}" if q.upstream is None else "")
                floor = max(floor, _TRUST[c.kind])
            elif _TRUST[c.kind] >= floor:
                kept.append(c)
        if not kept and hits:
            raise Quarantined(f"model {model!r}: every upstream that may receive this request is "
                              f"quarantined ({'; '.join(hits.values())}); nothing was forwarded")  # fmt: skip
        return kept
