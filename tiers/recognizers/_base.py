"""Building blocks shared by the recognizer modules.

Every recognizer is a presidio ``EntityRecognizer``: pattern recognizers are presidio
``PatternRecognizer`` subclasses (``PATTERNS``, ``CONTEXT``, ``validate_result``), and term lists
(known names, deny lists) are :class:`TermRecognizer`. Patterns must be RE2 syntax to run on the
fast path; a named group ``value`` narrows the part of a match that is reported and stripped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from presidio_analyzer import EntityRecognizer, Pattern, PatternRecognizer, RecognizerResult

__all__ = ["TermRecognizer", "TiersPatternRecognizer", "read_term_file"]


class TiersPatternRecognizer(PatternRecognizer):
    """A presidio pattern recognizer whose patterns are case-sensitive unless they say ``(?i)``.

    Subclasses set ``ENTITY``, ``PATTERNS`` and optionally ``CONTEXT`` and ``validate_result``.
    """

    ENTITY: str = ""
    PATTERNS: list[Pattern] = []
    CONTEXT: list[str] = []
    # True: the scanner's first pass keeps these patterns in an RE2 set of their own (see
    # ``tiers.scanner``), for patterns that may start a match at nearly every word of code
    OWN_SET: bool = False
    # pattern name -> strings one of which every match of that pattern holds, as written
    # (case-sensitive): the scanner runs the set pass of such patterns only where one occurs
    LITERALS: dict[str, tuple[str, ...]] = {}

    def __init__(
        self,
        patterns: list[Pattern] | None = None,
        entity: str | None = None,
        name: str | None = None,
        context: list[str] | None = None,
    ) -> None:
        super().__init__(
            supported_entity=entity or self.ENTITY,
            name=name or type(self).__name__,
            patterns=list(patterns if patterns is not None else self.PATTERNS),
            # presidio keeps None for "no context words" and annotates it as List[str]
            context=list(context if context is not None else self.CONTEXT) or None,  # type: ignore[arg-type]  # see above
            global_regex_flags=re.MULTILINE,
        )


class TermRecognizer(EntityRecognizer):
    """Whole-word, case-insensitive matching of term lists (names, deny lists) of any size.

    Matching is done by the scanner with one Aho-Corasick automaton per recognizer; ``terms``
    maps each entity type to its terms (already normalised by the caller or not: the scanner
    normalises them the same way as the text).
    """

    def __init__(self, terms: Mapping[str, Iterable[str]], name: str, score: float = 1.0) -> None:
        self.terms = {entity: tuple(t for t in ts if t.strip()) for entity, ts in terms.items()}
        self.score = score
        super().__init__(supported_entities=list(self.terms), name=name, supported_language="en")

    def load(self) -> None:  # presidio hook; nothing to load
        pass

    def analyze(self, text: str, entities: list[str], nlp_artifacts: object = None) -> list[RecognizerResult]:
        # Only used if someone runs this recognizer inside a stock presidio AnalyzerEngine; the
        # gateway's scanner matches terms itself with an Aho-Corasick automaton.
        from ..scanner import find_terms

        return [
            RecognizerResult(entity, start, end, self.score)
            for entity, start, end in find_terms(self, text)
            if entity in entities
        ]


def read_term_file(path: str | Path) -> list[str]:
    """Terms from a UTF-8 file: one per line, blank lines and ``#`` comments ignored."""
    with open(path, encoding="utf-8") as fh:
        return [s for line in fh if (s := line.strip()) and not s.startswith("#")]
