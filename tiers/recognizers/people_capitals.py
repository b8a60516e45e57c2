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
DATABASE", "JIT WORKAROUND", "DONE INLINING" from real code. Two English words together are no
name ("JET BLACK", "EDIT FIELDS", "GRACE CHURCH"), nor two words of the spelling alphabet
("CHARLIE ROMEO"), nor the list form inside an enumeration ("BLACK, SILVER, GOLD"). The name is
looked for inside a run of capitals ("MRS MARIA GONZALEZ", "EMPLOYEE JOHN SMITH WAS
TERMINATED"). Code's constants are joined by "_", not blanks, and stay out of the pattern.
"""

from __future__ import annotations

import re
from functools import lru_cache

from presidio_analyzer import Pattern

from ._english_words import is_entry
from ._given_names import given_names
from ._surnames import is_surname
from ._vocabulary import AMBIGUOUS_GIVEN_NAMES, NOT_GIVEN_NAMES, WEAK_GIVEN_NAMES, is_common
from .people import _END, _NameRecognizer

__all__ = ["CapitalsPersonRecognizer", "capitals_recognizers"]

_WORD = r"[A-Z]{3,15}(?:-[A-Z]{3,15})?"
_INITIAL = r"[A-Z]\."
_SURNAME_RANK = 20_000
_WORD_SURNAME_RANK = 1_000
_WORDS = re.compile(r"[A-Z]\.|[A-Z]+(?:-[A-Z]+)?")
# given names that are no name in capitals: labels ("EDIT", "DONE", "SUB"), a greeting ("HEY"),
# SQL's verb ("GRANT")
_NOT_IN_CAPITALS = frozenset("edit done sub hey grant".split())
_SPELLING_ALPHABET = frozenset(
    "alpha alfa bravo charlie delta echo foxtrot golf hotel india juliet juliett kilo lima mike november oscar papa "
    "quebec romeo sierra tango uniform victor whiskey xray yankee zulu fox".split()
)
# another item of an enumeration right after the list form, or right before it
_MORE_AFTER = re.compile(r",[ ]?[A-Z]{2,}")
_MORE_BEFORE = re.compile(r"[A-Z]{2,},[ ]?\Z")


class CapitalsPersonRecognizer(_NameRecognizer):
    """A common given name and a common surname, both in capitals; a middle name or an initial
    between them; or the list form "SURNAME, GIVEN"."""

    ENTITY = "PERSON"
    PATTERNS = [
        # a run of up to eight words in capitals; the name is looked for inside it ("MRS MARIA
        # GONZALEZ", "EMPLOYEE JOHN SMITH WAS TERMINATED")
        Pattern(
            "capitals_given_surname",
            r"\b(?P<value>" + _WORD + r"(?:[ ](?:" + _INITIAL + "|" + _WORD + r")){1,7})" + _END,
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
        return w.split("-")[0] in self._given and w not in WEAK_GIVEN_NAMES and w not in _NOT_IN_CAPITALS

    @staticmethod
    def _surname(word: str) -> bool:
        last = word.split("-")[-1]
        if not is_surname(word, _SURNAME_RANK) or is_common(last):
            return False
        # an English word only as one of the commonest surnames ("SMITH", "BROWN", "YOUNG"):
        # "PIL CORE", "CLOSE, PING" are code's words. The entry itself, not a plural's singular:
        # "DAVIES" is no plural of "davy"
        return not is_entry(last) or is_surname(word, _WORD_SURNAME_RANK)

    @staticmethod
    def _pair_holds(given: str, surname: str) -> bool:
        """Two words a heading or a label reads as well: both English words ("JET BLACK", "EDIT
        FIELDS", "GRACE CHURCH", "SILVER FOX") or both of the spelling alphabet ("CHARLIE
        ROMEO") are no name."""
        if is_entry(given.split("-")[0]) and is_entry(surname.split("-")[-1]):
            return False
        return not (given.lower() in _SPELLING_ALPHABET and surname.lower() in _SPELLING_ALPHABET)

    def _refine(self, text: str) -> tuple[int, int] | None:
        """The first name inside the run: a given name, at most two middle names or initials,
        and a surname; None when there is none."""
        if "," in text:
            surname, given = (w.strip() for w in text.split(","))
            ok = self._surname(surname) and self._given_name(given) and self._pair_holds(given, surname)
            return (0, len(text)) if ok else None
        words = [(m.start(), m.end(), m.group()) for m in _WORDS.finditer(text)]
        for i, (start, _, first) in enumerate(words):
            if not self._given_name(first):
                continue
            for j in range(i + 1, min(i + 4, len(words))):
                middle = [w for _, _, w in words[i + 1 : j]]
                if not all(self._given_name(w) or (len(w) == 2 and w.endswith(".")) for w in middle):
                    break
                last = words[j][2]
                if self._surname(last) and self._pair_holds(first, last):
                    return start, words[j][1]
        return None

    def reject_at(self, text: str, start: int, end: int) -> bool:
        """Besides code, placeholders and places: the list form inside an enumeration ("COLORS:
        BLACK, SILVER, GOLD") is no "SURNAME, GIVEN"."""
        if "," in text[start:end] and (_MORE_AFTER.match(text, end) or _MORE_BEFORE.search(text, 0, start)):
            return True
        return super().reject_at(text, start, end)


def capitals_recognizers() -> list[CapitalsPersonRecognizer]:
    return [CapitalsPersonRecognizer()]
