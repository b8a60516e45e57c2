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

from pydantic import BaseModel, ConfigDict, Field, model_validator

from formats.yaml_model import YamlDocument, YamlModelError, read_yaml, read_yaml_file

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
        return cls._from_document(YamlDocument(data, name))

    @classmethod
    def _from_document(cls, doc: YamlDocument) -> Policy:
        if not isinstance(doc.data, Mapping):
            raise PolicyError(f"{doc.source}: a policy must be a mapping")
        try:
            model = doc.validate(_PolicyModel)
        except YamlModelError as exc:
            raise PolicyError(str(exc)) from None
        rules = {
            tier: TierRule(tier, frozenset(rule.allow), frozenset(rule.strip)) for tier, rule in model.tiers.items()
        }
        return cls(doc.source, model.default_floor, dict(model.entities), rules)


def load_policy(path: Path | str | None = None) -> Policy:
    """Load and validate a policy file (formats.yaml_model: duplicate keys refused, errors name
    the file and line); ``None`` loads the shipped default policy."""
    try:
        if path is None:
            text = resources.files("tiers").joinpath("default_policy.yaml").read_text("utf-8")
            doc = read_yaml(text, source="default_policy.yaml")
        else:
            doc = read_yaml_file(path)
    except YamlModelError as exc:
        raise PolicyError(str(exc)) from None
    return Policy._from_document(doc)
