"""Names that science gives its objects: "the Bellman-Ford algorithm", "the Denman-Beavers
iteration", "the Kampe de Feriet function". A name right before what it names is an eponym, which
identifies nobody in the text that uses it; people and firms (joined surnames) are judged so.

Only the attributive form counts for people: "Maria Gonzalez's method" is a colleague's, and
science writes it so too ("Faa di Bruno's formula"), so a genitive is no cue.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ._per_text import per_text

__all__ = ["eponym_after", "eponym_elsewhere", "names_an_object"]

# what mathematics and computing name after people, in English
_OBJECTS = (
    r"algorithms?|theorems?|lemmas?|lemmata|conjectures?|formulae?|formulas|equations?|inequalit(?:y|ies)"
    r"|iterations?|polynomials?|series|integrals?|transforms?|function|distributions?|criterion|coefficients?"
    r"|expansions?|quadrature|recurrences?|sieve|approximations?|decompositions?|heuristics?|estimators?"
    r"|centrality|relaxation|shuffle|pseudoprimes?|resultants?"
)
# further ones after joined surnames only: a firm is no "layout" or "test", a person may well be
# a "model" or have a "style"
_FIRM_OBJECTS = (
    r"graphs?|method|bound|distance|problem|layout|compositing|operators?|model|index|ordering|scheme|flow"
    r"|search|metric|rule|principle|effect|law|curve|statistic|test|tree|sampling|style|cycle|numbers?"
)
# and after a hyphenated pair only, which firms write with "&" ("Marks & Spencer window"); not
# what a patient's double surname goes before ("Garcia-Lopez scan", "angles", "variant")
_HYPHENATED_OBJECTS = r"window|modes|prefix"


def _after(objects: str) -> re.Pattern[str]:
    # the object after the name on its line ("Fisher-Yates shuffle: swap each …"), capitalised
    # only where it is no label ("Anna Berg Function: QA lead" is a form), or in lower case on
    # the next line of a wrapped comment or docstring, again no label ("name: Anna Berg\n
    # function: QA lead" is YAML)
    return re.compile(
        r"[ \t]+(?:(?:" + objects + r")\b|(?i:" + objects + r")\b(?![ \t]*:))"
        r"|[ \t]*\r?\n[ \t]*(?:(?:#+|//|\*|>)[ \t]*)?(?:" + objects + r")\b(?![ \t]*:)"
    )


_AFTER = _after(_OBJECTS)
# the objects above that no job, firm or product is called after a name in capitals: "Karen
# Garcia Estimator" holds a job, "Fernando Alonso Formula 1" is a racing series, "Quadrature
# Capital" a firm
_OBJECT = re.compile(
    r"(?:Algorithms?|Theorems?|Lemmas?|Lemmata|Conjectures?|Equations?|Inequalit(?:y|ies)|Polynomials?"
    r"|Coefficients?|Recurrences?|Decompositions?|Approximations?|Pseudoprimes?|Resultants?)\.?"
)


def names_an_object(word: str) -> bool:
    """Whether ``word`` is, capitalised, what science names after people ("Theorem",
    "Resultant"): in "Lucas Theorem" the eponym's object, as in "Lucas theorem", not a surname."""
    return _OBJECT.fullmatch(word) is not None


_AFTER_BROAD = _after(_OBJECTS + "|" + _FIRM_OBJECTS)
_AFTER_HYPHENATED = _after(_OBJECTS + "|" + _FIRM_OBJECTS + "|" + _HYPHENATED_OBJECTS)
_HYPHENATED_ONLY = _after(_HYPHENATED_OBJECTS)


def eponym_after(text: str, end: int, *, broad: bool = False, genitive: bool = False, hyphenated: bool = False) -> bool:
    """Whether the name ending at ``end`` is followed by what it names ("… iteration");
    ``broad`` adds the words only a firm's name cannot stand before, ``hyphenated`` those only a
    hyphenated pair cannot ("the Blackman-Harris window"); ``genitive`` lets a name in the
    genitive be one (for a surname alone: "Euler's formula")."""
    if not broad and not genitive and text[max(0, end - 2) : end] in ("'s", "’s"):
        return False  # "Maria Gonzalez's algorithm": a colleague's
    after = _AFTER_HYPHENATED if hyphenated else _AFTER_BROAD if broad else _AFTER
    return after.match(text, end) is not None


# a hyphenated eponym ("Held-Karp", "Denman-Beavers"): capitalised words joined by "-", not a part
# of a longer compound or path; bounded words, so each place the search tries costs a bounded time
_JOINED = re.compile(r"[A-Z][a-z]{1,30}(?:-[A-Z][a-z]{1,30}){1,3}")
# what may not stand right before or after one (the compound or path it would be part of); checked
# on each match instead of as look-arounds, which made the search try them at every place of the
# text (3 MB of code: 61 against 20 ms). The same spans: a match is a run of letters and hyphens,
# so no match could start inside one refused for what precedes it, and a shorter one than the
# longest is always followed by a letter or "-"
_NOT_BEFORE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.'’/-")
_NOT_AFTER = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def joined_names(text: str) -> Iterator[tuple[int, int]]:
    """The spans of the hyphenated capitalised names in ``text`` that are no part of a longer word."""
    for m in _JOINED.finditer(text):
        start, end = m.span()
        if (start and text[start - 1] in _NOT_BEFORE) or (end < len(text) and text[end] in _NOT_AFTER):
            continue
        yield start, end


@per_text
def _eponyms_written(text: str) -> frozenset[int]:
    """The hashes of the hyphenated names ``text`` writes as eponyms (the names themselves would
    stay in memory after the request)."""
    # the objects of science only: a firm is no "algorithm" or "relaxation", nor a hyphenated
    # pair's "window", while "the Parsons-Moran model" may be the firm's product, and the firm
    # then still the firm
    return frozenset(
        hash(text[s:e]) for s, e in joined_names(text) if eponym_after(text, e) or _HYPHENATED_ONLY.match(text, e)
    )


def eponym_elsewhere(text: str, name: str) -> bool:
    """Whether the text writes ``name`` as an eponym somewhere ("the Held-Karp relaxation"), so
    that a mention of it without its object ("a scaled version of the Held-Karp\n solution") is
    the same eponym. Hyphenated names only: a person's name before an object stays a name
    elsewhere ("Maria Gonzalez's method")."""
    names = _eponyms_written(text)
    return hash(name) in names
