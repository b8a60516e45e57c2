"""``TiersConfig``: every setting of the classifier, validated once at start-up.

The gateway embeds this model as the ``tiers:`` section of its YAML configuration, so unknown
keys are rejected and each field documents itself. Paths are read by :class:`~tiers.Classifier`
when it is built, never later.
"""

from __future__ import annotations

from pathlib import Path

import re2
from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["DomainPattern", "TiersConfig"]


class DomainPattern(BaseModel):
    """An organisation's own identifier format, e.g. batch or CAPA numbers."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    entity: str = Field(pattern=r"^[A-Z][A-Z0-9_]*$")
    """Entity type reported for a match (e.g. ``BATCH_ID``); the policy gives its tier floor."""
    pattern: str
    """An RE2 regular expression; a named group ``value`` narrows what is stripped."""
    score: float = Field(default=0.85, ge=0.0, le=1.0)
    """Confidence of a match; below ``min_score`` it counts only with ``context`` nearby."""
    context: tuple[str, ...] = ()
    """Words that, found shortly before a match, raise its score."""

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re2.compile(value)
        except re2.error as exc:
            raise ValueError(f"not a valid RE2 pattern: {exc}") from None
        return value


class TiersConfig(BaseModel):
    """Settings of the ``tiers`` library (the ``tiers:`` section of the gateway's config)."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    policy: Path | None = None
    """Policy YAML file; ``None`` uses the shipped default (``tiers/default_policy.yaml``)."""
    tenant_policies: dict[str, Path] = Field(default_factory=dict)
    """Tenant name -> policy YAML file used for that tenant's requests instead of ``policy``."""
    phone_regions: tuple[str, ...] = ("US", "GB", "DE", "FR", "IN", "CA", "AU", "BR", "IL")
    """ISO regions whose national phone formats are recognised (``+``-prefixed numbers always)."""
    internal_domains: tuple[str, ...] = ()
    """Domain suffixes of internal hosts, e.g. ``corp.example.com`` or ``internal``."""
    customer_lists: tuple[Path, ...] = ()
    """Files of customer names (one per line, ``#`` comments) -> ``CUSTOMER_NAME``."""
    supplier_lists: tuple[Path, ...] = ()
    """Files of supplier names -> ``SUPPLIER_NAME``."""
    employee_lists: tuple[Path, ...] = ()
    """Files of employee names -> ``EMPLOYEE_NAME``."""
    domain_patterns: tuple[DomainPattern, ...] = ()
    """Extra identifier formats (batch / lot, deviation, CAPA, part numbers …)."""
    extra_markers: tuple[str, ...] = ()
    """Extra confidentiality phrases (matched case-insensitively, whole words) -> tier floor of
    ``CONFIDENTIALITY_MARKER`` in the policy."""
    recognizer_files: tuple[Path, ...] = ()
    """Presidio-format recognizer YAML files; loaded into the same registry as the defaults."""
    spacy_model: str | None = None
    """Name of an operator-installed spaCy model for NER (PERSON, ORG …). Never downloaded: if it
    is not installed, building the classifier fails."""
    deadline_seconds: float | None = Field(default=10.0, gt=0)
    """Analysis of one request longer than this fails closed (Tier 3). ``None``: no deadline.
    Measured by the classifier's clock; the gateway gives it the CPU time of the thread doing the
    analysis, so time a request waits for a worker or a core never counts."""
    max_findings: int = Field(default=20_000, ge=1)
    """More findings than this in one request fails it closed (Tier 3): a body carrying tens of
    thousands of identifiers is a data export, and each finding costs time to strip and restore."""
    regex_timeout_seconds: float = Field(default=1.0, gt=0, le=60)
    """Time limit for one window of a pattern that RE2 cannot run (look-arounds or
    back-references in a user's recognizer); running out fails the request closed (Tier 3)."""
    min_score: float = Field(default=0.4, ge=0.0, le=1.0)
    """Matches scoring below this (after context) are ignored."""
    context_window: int = Field(default=64, ge=0, le=1000)
    """Characters before and after a match searched for the recognizer's context words."""

    @field_validator(
        "phone_regions",
        "internal_domains",
        "customer_lists",
        "supplier_lists",
        "employee_lists",
        "domain_patterns",
        "extra_markers",
        "recognizer_files",
        mode="before",
    )
    @classmethod
    def _in_order(cls, value: object) -> object:
        # YAML's ``!!set`` would be accepted as a tuple in the set's order, which changes from
        # process to process: recognizers then join in another order, and the patterns' key
        # (which names the prefilter kept on disk) with them. A list says its order.
        if isinstance(value, (set, frozenset)):
            raise ValueError("a list is needed here, not a set")
        return value

    @field_validator("phone_regions")
    @classmethod
    def _regions(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        import phonenumbers

        known = phonenumbers.SUPPORTED_REGIONS
        for region in value:
            if region.upper() not in known:
                raise ValueError(f"unknown phone region {region!r}")
        return tuple(r.upper() for r in value)

    @field_validator("internal_domains")
    @classmethod
    def _domains(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        out = []
        for d in value:
            d = d.strip().lower().lstrip(".")
            if not d or not re2.fullmatch(r"[a-z0-9-]+(?:\.[a-z0-9-]+)*", d):
                raise ValueError(f"not a domain suffix: {d!r}")
            out.append(d)
        return tuple(out)
