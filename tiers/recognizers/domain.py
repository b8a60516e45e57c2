"""Domain identifiers: batch / lot, deviation, CAPA and part numbers.

The shipped patterns need a keyword (``Lot``, ``Batch No.``, ``CAPA-``, ``P/N`` …) so that plain
numbers do not count; an organisation adds its own formats with ``TiersConfig.domain_patterns``.
"""

from __future__ import annotations

from collections.abc import Iterable

from presidio_analyzer import Pattern

from ..config import DomainPattern
from ._base import TiersPatternRecognizer

__all__ = ["DomainIdRecognizer", "configured_domain_recognizers"]

_NO = r"(?:\s*(?i:no|nr|number|num|id)\b\.?|\s*#)?\s*[:#]?\s*"


class BatchIdRecognizer(TiersPatternRecognizer):
    ENTITY = "BATCH_ID"
    PATTERNS = [
        Pattern(
            "batch_or_lot",
            r"\b(?i:batch|lot)" + _NO + r"(?P<value>(?:[A-Z]{1,6}-?)?\d[A-Z0-9-]{4,}|[A-Z]{1,6}-?\d{2,}[A-Z0-9-]*)\b",
            0.85,
        )
    ]


class DeviationIdRecognizer(TiersPatternRecognizer):
    ENTITY = "DEVIATION_ID"
    PATTERNS = [
        Pattern("deviation_code", r"\b(?:DEV|DEVN|NCR|NCMR)-\d{2,}(?:-\d+)*\b", 0.85),
        Pattern("deviation_keyword", r"\b(?i:deviation)" + _NO + r"(?P<value>[A-Z]{0,5}-?\d{3,}(?:-\d+)*)\b", 0.85),
    ]


class CapaIdRecognizer(TiersPatternRecognizer):
    ENTITY = "CAPA_ID"
    PATTERNS = [Pattern("capa", r"\bCAPA" + _NO + r"[- ]?(?P<value>\d{2,}(?:-\d+)*)\b", 0.85)]


class PartNumberRecognizer(TiersPatternRecognizer):
    ENTITY = "PART_NUMBER"
    PATTERNS = [
        Pattern(
            "part_number",
            r"(?:\bP/N|\b(?i:part)\s*(?i:no\.?|number|#))\s*[:#]?\s*(?P<value>[A-Z0-9]*\d[A-Z0-9.-]{2,}[A-Z0-9])\b",
            0.85,
        )
    ]


class DomainIdRecognizer(TiersPatternRecognizer):
    """A pattern from the configuration."""

    def __init__(self, spec: DomainPattern, index: int) -> None:
        super().__init__(
            patterns=[Pattern(f"configured_{index}", spec.pattern, spec.score)],
            entity=spec.entity,
            name=f"DomainPattern{index}",
            context=list(spec.context),
        )


def default_domain_recognizers() -> list[TiersPatternRecognizer]:
    return [BatchIdRecognizer(), DeviationIdRecognizer(), CapaIdRecognizer(), PartNumberRecognizer()]


def configured_domain_recognizers(specs: Iterable[DomainPattern]) -> list[TiersPatternRecognizer]:
    return [DomainIdRecognizer(spec, i) for i, spec in enumerate(specs)]
