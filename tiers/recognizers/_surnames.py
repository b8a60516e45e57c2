"""The surname gazetteer: family names by how common they are, read once at start-up.

Source: ``dist.all.last``, the 88,799 surnames of the 1990 United States census (a work of the
US government, public domain), as shipped inside the ``names`` package on PyPI (0.3.0, MIT
licence, by Trey Hunner). The file is read unmodified from the installed package and nothing of
it is copied into this repository. Offline: the file is in the package, nothing is downloaded.

Each line gives a surname (upper case, without apostrophes or spaces: "OBRIEN", "DELACRUZ"),
its share of the population, the cumulative share and its rank (1 = Smith). The census counts
the descendants of English, Irish, German, French, Spanish, Italian, Polish, African, Asian …
families, so it holds most common European surnames too ("MULLER", "SCHMIDT", "LEFEBVRE"), but
fewer of the rarer German and French ones. Many surnames are ordinary words as well ("Black",
"Client", "Hand"): the callers keep those out with :mod:`._vocabulary`.
"""

from __future__ import annotations

import importlib.resources
from ..tables import table
from ._vocabulary import NOT_SURNAMES, SURNAME_WORDS, is_common

__all__ = ["is_plain_surname", "is_surname", "surname_rank"]


@table("surnames", source="names")
def _ranks() -> dict[str, int]:
    data = importlib.resources.files("names").joinpath("dist.all.last")
    out: dict[str, int] = {}
    with data.open(encoding="ascii") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) == 4 and parts[0].isalpha() and parts[3].isdigit():
                out[parts[0].lower()] = int(parts[3])
    return out


def _key(word: str) -> str:
    # the census writes "O'Brien" as "OBRIEN" and "Müller" (folded by the normaliser) as "MULLER"
    return word.lower().replace("'", "").replace("’", "")


def surname_rank(word: str) -> int | None:
    """The census rank of ``word`` as a surname (1 = most common), or None when it is none."""
    return _ranks().get(_key(word))


def is_surname(word: str, max_rank: int = 88_799) -> bool:
    """Whether ``word`` (any case, accents folded) is a census surname of at most ``max_rank``."""
    rank = _ranks().get(_key(word))
    return rank is not None and rank <= max_rank


def is_plain_surname(word: str) -> bool:
    """A census surname that is no ordinary word, place or term of code here (:mod:`._vocabulary`):
    where nothing but a name's shape decides ("Parsons-Moran", "Dawn Brennan")."""
    w = word.lower()
    return is_surname(word) and not is_common(word) and w not in NOT_SURNAMES and w not in SURNAME_WORDS
