"""The declarative policy: entity type -> tier floor, and per tier what may happen to a request.

A policy is a YAML file validated at start-up; an unknown key or a bad value raises
:class:`PolicyError` naming the file and the key. Tier 3 may never be sent to a shared endpoint,
whatever a file says.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .errors import PolicyError
from .types import Tier, UpstreamKind

__all__ = ["Policy", "TierRule", "load_policy"]


@dataclass(frozen=True, slots=True)
class TierRule:
    """What may happen to a request of one tier."""

    tier: Tier
    allow: frozenset[UpstreamKind]
    strip: frozenset[UpstreamKind]

    def allows(self, kind: UpstreamKind) -> bool:
        """Whether a request of this tier may be sent to an upstream of ``kind`` at all."""
        return UpstreamKind(kind) in self.allow

    def must_strip(self, kind: UpstreamKind) -> bool:
        """Whether identifiers must be replaced before sending to an upstream of ``kind``."""
        return UpstreamKind(kind) in self.strip


class _RuleModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    allow: list[UpstreamKind]
    strip: list[UpstreamKind] = Field(default_factory=list)

    @model_validator(mode="after")
    def _strip_within_allow(self) -> _RuleModel:
        if not set(self.strip) <= set(self.allow):
            raise ValueError("strip lists an upstream kind that allow does not")
        return self


class _PolicyModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = Field(ge=1, le=1)
    default_floor: Tier = Tier.INTERNAL
    entities: dict[str, Tier] = Field(default_factory=dict)
    tiers: dict[Tier, _RuleModel]

    @model_validator(mode="after")
    def _complete(self) -> _PolicyModel:
        missing = [int(t) for t in Tier if t not in self.tiers]
        if missing:
            raise ValueError(f"tiers: missing rules for tier(s) {missing}")
        if UpstreamKind.SHARED in self.tiers[Tier.RESTRICTED].allow:
            raise ValueError("tiers.3.allow: tier 3 may never go to a shared endpoint")
        for name in self.entities:
            if not name or not name.replace("_", "").isalnum() or name.upper() != name:
                raise ValueError(f"entities.{name}: entity types are UPPER_CASE names")
        return self


@dataclass(frozen=True, slots=True)
class Policy:
    """A validated policy. Immutable; shared by all threads."""

    name: str
    default_floor: Tier
    floors: Mapping[str, Tier]
    rules: Mapping[Tier, TierRule]

    def rule(self, tier: Tier) -> TierRule:
        """The rule for ``tier``."""
        return self.rules[Tier(tier)]

    def floor(self, entity_type: str) -> Tier:
        """The lowest tier of a request containing ``entity_type``."""
        return self.floors.get(entity_type, self.default_floor)

    @classmethod
    def from_mapping(cls, data: Any, name: str = "<policy>") -> Policy:
        """Validate a parsed policy document; raises :class:`PolicyError` naming the bad key."""
        if not isinstance(data, Mapping):
            raise PolicyError(f"{name}: a policy must be a mapping")
        try:
            model = _PolicyModel.model_validate(data)
        except ValidationError as exc:
            err = exc.errors()[0]
            key = ".".join(str(p) for p in err["loc"]) or "<root>"
            raise PolicyError(f"{name}: {key}: {err['msg']}") from None
        rules = {
            tier: TierRule(tier, frozenset(rule.allow), frozenset(rule.strip))
            for tier, rule in model.tiers.items()
        }
        return cls(name, model.default_floor, dict(model.entities), rules)


def load_policy(path: Path | str | None = None) -> Policy:
    """Load and validate a policy file; ``None`` loads the shipped default policy."""
    if path is None:
        text = resources.files("tiers").joinpath("default_policy.yaml").read_text("utf-8")
        name = "default_policy.yaml"
    else:
        name = str(path)
        try:
            text = Path(path).read_text("utf-8")
        except OSError as exc:
            raise PolicyError(f"{name}: cannot read policy file ({exc.strerror})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise PolicyError(f"{name}: not valid YAML{where}") from None
    return Policy.from_mapping(data, name)
