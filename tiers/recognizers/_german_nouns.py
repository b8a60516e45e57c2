"""German feminine nouns, read once at start-up: what may follow "bei der" / "von der" / "mit der".

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
"""

from __future__ import annotations

import importlib.resources
import re
import unicodedata
from functools import lru_cache

__all__ = ["is_feminine_noun"]

# lemma, part of speech (quoted when it lists several), then the five gender columns
_ROW = re.compile(r'([^,"]+),(?:"([^"]*)"|([^,]*)),([^,]*),([^,]*),([^,]*),([^,]*),([^,]*),')
# a compound's last part must be a word of its own: "Wareneingangsprufung" ends in "prufung";
# shorter tails end surnames as often ("Ammerseder" in "Eder", "Baderschneider" in "Eider")
_MIN_TAIL = 5
_MIN_HEAD = 3


def _fold(word: str) -> str:
    if word.isascii():
        return word.lower()
    # as the normaliser folds text: accents dropped, ß kept
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c)).lower()


@lru_cache(maxsize=1)
def _feminine() -> frozenset[str]:
    data = importlib.resources.files("german_nouns").joinpath("nouns.csv")
    out: set[str] = set()
    with data.open("rb") as fh:
        next(fh)  # the header
        for raw in fh:
            # most lines have no feminine gender: a byte test spares decoding and matching them
            if b",f," not in raw:
                continue
            m = _ROW.match(raw.decode("utf-8"))
            if m is not None and "f" in m.groups()[3:]:
                out.add(_fold(m.group(1)))
    return frozenset(out)


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
