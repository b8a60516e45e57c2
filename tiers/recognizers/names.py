"""Known names: the configured customer, supplier and employee lists as one term recognizer.

A person's name is written "Given Surname" in prose and "Surname, Given" in lists, directories
and CRM exports, so each listed name of two to four words also matches in that order
("Maria Gonzalez" -> "Gonzalez, Maria", "Gonzalez,Maria"). White-space runs and line breaks
between words are the scanner's business (any run counts as one space).
"""

from __future__ import annotations

import re

from ..config import TiersConfig
from ..errors import RecognizerError
from ._base import TermRecognizer, read_term_file

__all__ = ["known_names", "surname_first"]

# words of a personal name: letters, with inner hyphens and apostrophes (Jean-Luc, O'Neil)
_NAME_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")


def surname_first(name: str) -> list[str]:
    """``name`` written surname first, with and without a space after the comma; nothing for a
    single word, for more than four words, or for anything that is not words of letters."""
    words = name.split()
    if not 2 <= len(words) <= 4 or not all(_NAME_WORD.fullmatch(w) for w in words):
        return []
    given, surname = " ".join(words[:-1]), words[-1]
    return [f"{surname}, {given}", f"{surname},{given}"]


def known_names(cfg: TiersConfig) -> TermRecognizer | None:
    """The recognizer of every configured name list, or None when none is configured."""
    terms: dict[str, list[str]] = {}
    for entity, files in (
        ("CUSTOMER_NAME", cfg.customer_lists),
        ("SUPPLIER_NAME", cfg.supplier_lists),
        ("EMPLOYEE_NAME", cfg.employee_lists),
    ):
        for path in files:
            try:
                names = read_term_file(path)
            except (OSError, UnicodeDecodeError) as exc:
                raise RecognizerError(f"cannot read name list {path}: {type(exc).__name__}") from None
            bucket = terms.setdefault(entity, [])
            for name in names:
                bucket.append(name)
                bucket.extend(surname_first(name))
    return TermRecognizer(terms, name="KnownNames") if terms else None
