"""Confidentiality markers: phrases that say a text is customer-confidential, under NDA, export
controlled (ITAR / EAR) or part of a GMP record. Matched case-insensitively as whole words, with
any run of white space between words."""

from __future__ import annotations

from collections.abc import Iterable

import re2
from presidio_analyzer import Pattern

from ._base import TiersPatternRecognizer

__all__ = ["MarkerRecognizer", "default_marker_recognizers"]

CONFIDENTIAL = (
    "customer confidential", "company confidential", "strictly confidential",
    "highly confidential", "business confidential", "proprietary and confidential",
    "confidential and proprietary", "privileged and confidential", "attorney-client privileged",
    "confidential information", "do not distribute", "under NDA", "NDA", "non-disclosure agreement",
    "trade secret",
)
EXPORT_CONTROL = (
    "ITAR", "ITAR-controlled", "EAR99", "export controlled", "export-controlled",
    "subject to the EAR", "ECCN", "export administration regulations",
    "international traffic in arms regulations",
)
GMP = (
    "GMP batch record", "batch manufacturing record", "master batch record",
    "executed batch record", "batch record", "validated process", "process validation",
    "21 CFR part 11", "GxP",
)


def _phrase(phrase: str) -> str:
    words = phrase.split()
    return r"\s+".join(re2.escape(w) for w in words)


class MarkerRecognizer(TiersPatternRecognizer):
    """One marker family: its phrases as one case-insensitive whole-word pattern."""

    def __init__(self, entity: str, phrases: Iterable[str], name: str) -> None:
        alts = "|".join(_phrase(p) for p in sorted(set(phrases), key=len, reverse=True))
        regex = r"(?i)(?:^|[^A-Za-z0-9_])(?P<value>" + alts + r")(?:$|[^A-Za-z0-9_])"
        super().__init__(patterns=[Pattern(name, regex, 0.9)], entity=entity, name=name)


def default_marker_recognizers(extra: Iterable[str] = ()) -> list[MarkerRecognizer]:
    """The shipped marker families; ``extra`` phrases join ``CONFIDENTIALITY_MARKER``."""
    return [
        MarkerRecognizer("CONFIDENTIALITY_MARKER", (*CONFIDENTIAL, *extra), "ConfidentialMarker"),
        MarkerRecognizer("EXPORT_CONTROL_MARKER", EXPORT_CONTROL, "ExportControlMarker"),
        MarkerRecognizer("GMP_MARKER", GMP, "GmpMarker"),
    ]
