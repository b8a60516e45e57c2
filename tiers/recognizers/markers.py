"""Confidentiality markers: phrases that say a text is customer-confidential, under NDA, export
controlled (ITAR / EAR) or part of a GMP record. Matched case-insensitively as whole words, with
any run of white space between words; confidentiality phrases also with ``_`` or ``-`` between
them (``STRICTLY_CONFIDENTIAL``, ``customer-confidential``: labels and tags are written so).

The word *confidential* alone is a marker where it stands as a header: alone on its line
(``CONFIDENTIAL``, ``*** Confidential ***``, ``[CONFIDENTIAL]``), or in capitals opening a line
before a colon or dash (``CONFIDENTIAL: Q3 pricing``). In prose ("keep this confidential") and in
code (``CONFIDENTIAL = 3``, ``Level.CONFIDENTIAL``) it is not. *Confidential information* is a
marker where it labels the text: as a heading or a defined term in capitals, or said of the text
itself ("this e-mail contains confidential information"); a sentence about data ("if the user name
may contain confidential information") describes, it labels nothing.

Underscores and hyphens are not accepted between the words of the export-control and GMP
phrases: ``process_validation`` and ``batch_record`` are ordinary identifiers in GMP software.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import re2
from presidio_analyzer import Pattern

from ._base import TiersPatternRecognizer

__all__ = [
    "ConfidentialHeaderRecognizer",
    "ConfidentialInformationRecognizer",
    "MarkerRecognizer",
    "default_marker_recognizers",
]

CONFIDENTIAL = (
    "customer confidential",
    "company confidential",
    "strictly confidential",
    "highly confidential",
    "business confidential",
    "proprietary and confidential",
    "confidential and proprietary",
    "privileged and confidential",
    "attorney-client privileged",
    "do not distribute",
    "under NDA",
    "NDA",
    "non-disclosure agreement",
    "trade secret",
)
EXPORT_CONTROL = (
    "ITAR",
    "ITAR-controlled",
    "EAR99",
    "export controlled",
    "export-controlled",
    "subject to the EAR",
    "ECCN",
    "export administration regulations",
    "international traffic in arms regulations",
)
GMP = (
    "GMP batch record",
    "batch manufacturing record",
    "master batch record",
    "executed batch record",
    "batch record",
    "validated process",
    "process validation",
    "21 CFR part 11",
    "GxP",
)


# decoration around a header line: white space, rules, brackets, bullets
_DECORATION = r"[ \t*#=_~.:|<>()\[\]{}-]*"
_ALONE_ON_ITS_LINE = r"(?m)^" + _DECORATION + r"(?P<value>(?i:confidential))" + _DECORATION + r"$"
_OPENING_A_LINE = r"(?m)^" + _DECORATION + r"(?P<value>CONFIDENTIAL)[ \t]*(?::|[ \t]-)"

_LABEL = (
    r"(?:^|[^A-Za-z0-9_])(?P<value>Confidential[ \t]+Information|CONFIDENTIAL[ \t_-]+INFORMATION)(?:$|[^A-Za-z0-9_])"
)
# the text speaking of itself: "this document / e-mail / message … contains confidential information"
_TEXT_NOUNS = (
    r"document|e-?mail|message|file|report|attachment|presentation|communication|transmission|page|"
    r"material|memo|letter|slide|deck|record|dokument|nachricht|fichier|courriel"
)
_OF_THIS_TEXT = (
    r"(?i)\b(?:this|these|the[ ]+(?:enclosed|attached|following))[ ]+(?:" + _TEXT_NOUNS + r")s?\b"
    r"[^.\n]{0,60}?\b(?P<value>confidential[ \t]+information)\b"
)


def _phrase(phrase: str, joiners: str) -> str:
    words = phrase.replace("-", " ").split() if "-" in joiners else phrase.split()
    out = joiners.join(re2.escape(w) for w in words)
    # an acronym alone is one only as written: "NDA", "ITAR", "GxP"; "nda" is a glyph name,
    # "ear99" a file name
    if len(words) == 1 and len(phrase) <= 5 and phrase[:1].isupper() and not phrase[1:].islower():
        return "(?-i:" + out + ")"
    return out


class MarkerRecognizer(TiersPatternRecognizer):
    """One marker family: its phrases as one case-insensitive whole-word pattern; ``joined``
    lets ``_`` and ``-`` stand between the words as white space does."""

    def __init__(self, entity: str, phrases: Iterable[str], name: str, *, joined: bool = False) -> None:
        joiners = r"[\s_-]+" if joined else r"\s+"
        # Longest first (an alternation takes its first match), then alphabetical: the pattern's
        # text must not depend on the process's string hashing, or the prefilter compiled for it
        # (cached on disk under a hash of the patterns) would never be found at the next start.
        alts = "|".join(_phrase(p, joiners) for p in sorted(set(phrases), key=lambda p: (-len(p), p)))
        regex = r"(?i)(?:^|[^A-Za-z0-9_])(?P<value>" + alts + r")(?:$|[^A-Za-z0-9_])"
        super().__init__(patterns=[Pattern(name, regex, 0.9)], entity=entity, name=name)

    def reject_at(self, text: str, start: int, end: int) -> bool:
        """An acronym negated ("non-ITAR") or in the name of a linked public page (below) is
        no label. A licence's defined term inside a lower-case sentence ("provided that you do not
        Distribute …": the Artistic License capitalises its verbs as terms it defines) is a
        condition of the licence, not a label on the text. Only there: a lower-case word and one
        space right before it, one space between its words. A label stands alone, in brackets,
        after a comment's mark or a comma, or is written in one case ("DO NOT DISTRIBUTE",
        "Do Not Distribute", "[do not Distribute]")."""
        if _ACRONYM.fullmatch(text, start, end) and (
            _NEGATED.search(text, max(0, start - 5), start) or _linked_name(text, start, end)
        ):
            # "non-ITAR parts" says the opposite; "[Kleister-NDA](https://github.com/applicaai/
            # kleister-nda)" names a public data set that its address spells: no label
            return True
        return (
            _DEFINED_DISTRIBUTE.fullmatch(text, start, end) is not None
            and _LOWER_WORD_BEFORE.search(text, max(0, start - 32), start) is not None
        )


_DEFINED_DISTRIBUTE = re.compile(r"do not Distribute")
_ACRONYM = re.compile(r"[A-Z][A-Za-z0-9]{1,4}")
_NEGATED = re.compile(r"\b(?i:non)-\Z")
# a Markdown link's text of hyphenated words, the acronym among them, and its address
_LINK = re.compile(r"\[([A-Za-z0-9]+(?:-[A-Za-z0-9]+)+)\]\((https?://[^)\s]{1,400})\)")


def _linked_name(text: str, start: int, end: int) -> bool:
    """Whether the acronym is part of a Markdown link's text that its address spells in any
    case ("[Kleister-NDA](https://github.com/applicaai/kleister-nda)"): the name of a public
    page, repository or data set, which nothing confidential is."""
    open_at = text.rfind("[", max(0, start - 64), start)
    m = _LINK.match(text, open_at) if open_at >= 0 else None
    return m is not None and m.end(1) >= end and m.group(1).lower() in m.group(2).lower()


_LOWER_WORD_BEFORE = re.compile(r"(?:^|[^A-Za-z])[a-z]+ \Z")


class ConfidentialInformationRecognizer(TiersPatternRecognizer):
    """*Confidential information* where it labels the text it stands in: as a heading or a
    contract's defined term (``Confidential Information``, ``CONFIDENTIAL INFORMATION``), or
    said of the text itself (``This e-mail contains confidential information``). A sentence
    about some data ("if `user.name` may contain confidential information") labels nothing."""

    ENTITY = "CONFIDENTIALITY_MARKER"
    PATTERNS = [
        Pattern("confidential_information_label", _LABEL, 0.9),
        Pattern("confidential_information_of_this_text", _OF_THIS_TEXT, 0.9),
    ]

    def __init__(self) -> None:
        super().__init__(name="ConfidentialInformation")


class ConfidentialHeaderRecognizer(TiersPatternRecognizer):
    """The bare word *confidential* as a header line (see the module docstring)."""

    ENTITY = "CONFIDENTIALITY_MARKER"
    PATTERNS = [
        Pattern("confidential_alone_on_its_line", _ALONE_ON_ITS_LINE, 0.9),
        Pattern("confidential_opening_a_line", _OPENING_A_LINE, 0.9),
    ]

    def __init__(self) -> None:
        super().__init__(name="ConfidentialHeader")


def default_marker_recognizers(extra: Iterable[str] = ()) -> list[TiersPatternRecognizer]:
    """The shipped marker families; ``extra`` phrases join ``CONFIDENTIALITY_MARKER``."""
    return [
        MarkerRecognizer("CONFIDENTIALITY_MARKER", (*CONFIDENTIAL, *extra), "ConfidentialMarker", joined=True),
        ConfidentialHeaderRecognizer(),
        ConfidentialInformationRecognizer(),
        MarkerRecognizer("EXPORT_CONTROL_MARKER", EXPORT_CONTROL, "ExportControlMarker"),
        MarkerRecognizer("GMP_MARKER", GMP, "GmpMarker"),
    ]
