"""German feminine nouns, read once, on first use: what may follow "bei der" / "von der" / "mit der".

A dative "der" after a preposition ("bei der", "von der", "mit der") stands only before a
feminine noun, so a capitalised word there that is no feminine noun names something feminine by
gender of its kind: "die Firma", "die GmbH" ("bei der Lehmann", "von der Bolander"). Telling the
two apart needs the nouns' genders, which no rule of spelling gives.

Source: ``nouns.csv`` of the ``german-nouns`` package on PyPI (1.2.5, by Gregor Weichbrodt),
about 100,000 nouns with their grammatical gender compiled from the German Wiktionary; the data
is under CC BY-SA 4.0. The file is read unmodified from the installed package, nothing of it is
copied into this repository, and none of the package's code is imported. Offline: the file is in
the wheel, nothing is downloaded. It is a list of common nouns, places and a few names with their
genders, not of surnames: recall measured on generated surnames (Faker's) does not test the list
against itself.

Kept: every lemma with a feminine gender. The list's surnames carry no gender ("Lehmann" is not
kept); a word that is a surname and a feminine noun as well stays a noun ("Steuer", the tax).
Spelt as the scanner sees text (accents folded: "Prüfung" -> "prufung"), lower-case.

Read on first use, once per process under a lock (two scan threads may meet it at once): the
20 MB file costs ≈ 0.1 s of CPU. It is read as one ``bytes`` and searched by one regular
expression rather than line by line, and the lemmas are folded as one string (bench/RESULTS.md:
≈ 0.12 -> 0.09 s); a test compares the set with the line-by-line reading.
"""

from __future__ import annotations

import importlib.resources
import re
import unicodedata

from .. import tables
from ..tables import table

__all__ = ["every_lemma", "is_feminine_noun", "loaded"]

# a row whose lemma has a feminine gender: lemma (unquoted), part of speech (quoted when it lists
# several), then "f" in one of the five gender columns; every row starts after a newline (the
# header is the first line)
_FEMININE_ROW = re.compile(rb'\n([^,"\n]+),(?:"[^"\n]*"|[^,\n]*),(?:[^,\n]*,){0,4}f,')
# a compound's last part must be a word of its own: "Wareneingangsprufung" ends in "prufung";
# shorter tails end surnames as often ("Ammerseder" in "Eder", "Baderschneider" in "Eider")
_MIN_TAIL = 5
_MIN_HEAD = 3


def _fold(word: str) -> str:
    if word.isascii():
        return word.lower()
    # as the normaliser folds text: accents dropped, ß kept
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c)).lower()


def _fold_all(text: str) -> str:
    """``_fold`` of every line of ``text`` at once: NFKD and lower-casing act per character, and a
    newline separates words as a string's end does (casing's context included)."""
    if text.isascii():
        return text.lower()
    text = unicodedata.normalize("NFKD", text)
    marks = "".join(sorted(c for c in set(text) if unicodedata.combining(c)))
    if marks:
        text = re.sub("[" + re.escape(marks) + "]", "", text)
    return text.lower()


def _read() -> frozenset[str]:
    data = importlib.resources.files("german_nouns").joinpath("nouns.csv").read_bytes()
    lemmas = b"\n".join(_FEMININE_ROW.findall(data)).decode("utf-8")
    return frozenset(_fold_all(lemmas).split("\n"))


_LEMMA = re.compile(rb"\n([^,\"\n]+),")


def every_lemma() -> frozenset[str]:
    """Every noun of the file, whatever its gender ("Saal", "Bett", "Salami"), folded as the
    scanner sees text. Not kept: read where a table is built (≈ 0.1 s)."""
    data = importlib.resources.files("german_nouns").joinpath("nouns.csv").read_bytes()
    return frozenset(_fold_all(b"\n".join(_LEMMA.findall(data)).decode("utf-8")).split("\n"))


@table("german-feminine-nouns", source="german-nouns")
def _feminine() -> frozenset[str]:
    return _read()  # looked up at the call: a test counts the reads


def loaded() -> bool:
    """Whether this process holds the list (tests: it is read on first use only)."""
    return tables.loaded("german-feminine-nouns")


# endings that make a feminine noun of any stem, so nominalisations the list lacks count too
# ("Legitimierung", "Synchronisierung", "Verfügbarkeit"; loans: "Compliance", "Performance");
# a surname with one of them ("Hartung") is given up
_FEMININE_ENDINGS = ("ung", "heit", "keit", "schaft", "tion", "sion", "itat", "enz", "anz", "ance", "ence")


def is_feminine_noun(word: str) -> bool:
    """Whether ``word`` (any case, accents folded or not) is a German feminine noun, a compound
    ending in one or a noun of a feminine ending ("Prüfung", "Wareneingangsprüfung", "Bahn",
    "Skalierung"), also in the weak form of nouns declined as adjectives ("der Variablen")."""
    w = _fold(word)
    if w.endswith(_FEMININE_ENDINGS):
        return True
    nouns = _feminine()
    for form in (w, w[:-1]) if w.endswith("n") else (w,):
        if form in nouns or any(form[i:] in nouns for i in range(_MIN_HEAD, len(form) - _MIN_TAIL + 1)):
            return True
    return False
