"""Names in capitals throughout (``PERSON``): "MARIA GONZALEZ", "JAMES T. WILSON", "GONZALEZ,
MARIA", as passports, ID cards, boarding passes and HR or payroll exports write them.

:mod:`.people` takes a surname in capitals only after a given name in mixed case ("Jean DUPONT"),
because capitals are mostly acronyms and headings ("Save ACL", "MARK AS READ"). With both in
capitals the words must say it alone, so both are held to more: a given name common somewhere
(frequency 2 or more in the gazetteer) that is none of the given names that are words too
("MARK", "GRANT", "WILL", "ROSE", "JUNE"), and a surname of the census's first 20,000 that is no
ordinary word, and no English word unless it is among the commonest thousand ("SMITH", "BROWN"
are; "CORE", "CLOSE" are code's words: "PIL CORE", "CLOSE, PING"). A surname of no census
("KOWALCZYK", "LEFEBVRE") is missed here: taking any word shaped as a surname took "ALTER
DATABASE", "JIT WORKAROUND", "DONE INLINING" from real code. Code's constants are joined by "_",
not blanks, and stay out of the pattern.
"""

from __future__ import annotations

from functools import lru_cache

from presidio_analyzer import Pattern

from ._english_words import is_english_word
from ._given_names import given_names
from ._surnames import is_surname
from ._vocabulary import AMBIGUOUS_GIVEN_NAMES, NOT_GIVEN_NAMES, WEAK_GIVEN_NAMES, is_common
from .people import _END, _NameRecognizer

__all__ = ["CapitalsPersonRecognizer", "capitals_recognizers"]

_WORD = r"[A-Z]{3,15}(?:-[A-Z]{3,15})?"
_INITIAL = r"[A-Z]\."
_SURNAME_RANK = 20_000
_WORD_SURNAME_RANK = 1_000


class CapitalsPersonRecognizer(_NameRecognizer):
    """A common given name and a common surname, both in capitals; a middle name or an initial
    between them; or the list form "SURNAME, GIVEN"."""

    ENTITY = "PERSON"
    PATTERNS = [
        Pattern(
            "capitals_given_surname",
            r"\b(?P<value>" + _WORD + r"(?:[ ](?:" + _INITIAL + "|" + _WORD + r")){0,2}" + r"[ ]" + _WORD + r")" + _END,
            0.6,
        ),
        Pattern("capitals_surname_given", r"\b(?P<value>" + _WORD + r",[ ]" + _WORD + r")" + _END, 0.6),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._given = given_names(2) - NOT_GIVEN_NAMES - AMBIGUOUS_GIVEN_NAMES
        self.refine_span = lru_cache(maxsize=4096)(self._refine)

    def _given_name(self, word: str) -> bool:
        w = word.lower()
        return w.split("-")[0] in self._given and w not in WEAK_GIVEN_NAMES

    @staticmethod
    def _surname(word: str) -> bool:
        last = word.split("-")[-1]
        if not is_surname(word, _SURNAME_RANK) or is_common(last):
            return False
        # an English word only as one of the commonest surnames ("SMITH", "BROWN", "YOUNG"):
        # "PIL CORE", "CLOSE, PING" are code's words
        return not is_english_word(last) or is_surname(word, _WORD_SURNAME_RANK)

    def _refine(self, text: str) -> tuple[int, int] | None:
        """The whole candidate when its given name and surname hold (a middle word a given name
        or an initial), else None."""
        if "," in text:
            surname, given = (w.strip() for w in text.split(","))
            return (0, len(text)) if self._surname(surname) and self._given_name(given) else None
        words = text.split()
        middle_ok = all(self._given_name(w) or (len(w) == 2 and w.endswith(".")) for w in words[1:-1])
        if self._given_name(words[0]) and middle_ok and self._surname(words[-1]):
            return 0, len(text)
        return None


def capitals_recognizers() -> list[CapitalsPersonRecognizer]:
    return [CapitalsPersonRecognizer()]
