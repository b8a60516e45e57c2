"""The given-name gazetteer: first names common in Europe and beyond, read once at start-up.

Source: ``nam_dict.txt`` by Jörg Michael (c't magazine's "gender" program, 2007), as shipped
inside the ``gender-guesser`` wheel on PyPI (0.4.0). The data file is under the GNU Free
Documentation License 1.2; it is read unmodified from the installed package, nothing of it is
copied into this repository, and none of gender-guesser's (GPLv3) code is imported. Offline: the
file is in the wheel, nothing is downloaded.

Each line gives a name and, per country (55 columns: Great Britain, Ireland, USA, Italy …
France … Germany, Austria, Switzerland … Turkey, Arabia, China, India …), a frequency from 1
(rare) to D (extremely common). Names reaching ``min_frequency`` in any country are kept,
spelt as the scanner sees text (accents folded: "Aurélie" -> "aurelie", "Jürgen" -> "jurgen"),
lower-case. Words that are also ordinary capitalised words ("May", "Will", "Paris") are taken out
by the caller with :mod:`._vocabulary`.
"""

from __future__ import annotations

import importlib.resources
import re
from functools import lru_cache

from ..normalize import normalize_text
from ..tables import table

__all__ = ["given_names"]

_NAME = re.compile(r"[A-Za-z][a-z]+(?:-[A-Z][a-z]+)?")
_HEX = "123456789ABCD"


def _top_frequency(columns: str) -> int:
    """The highest frequency (1-13) in a line's country columns, 0 where none is given."""
    # The columns hold spaces and the digits of _HEX, whose order is that of their code points:
    # the largest character is the answer, one C call per line instead of a generator over 55
    # characters (which was most of this file's reading time). Anything else falls back to the check.
    top = max(columns.replace(" ", ""), default="")
    if not top or top in _HEX:
        return _HEX.index(top) + 1 if top else 0
    return max((_HEX.index(c) + 1 for c in columns if c in _HEX), default=0)


@table("given-names", source="gender-guesser")
def _frequencies() -> dict[str, int]:
    """Each usable name with its highest frequency in any country (the file is read once: each
    of its ~48,000 lines is normalised: a tenth of a second of every start-up)."""
    data = importlib.resources.files("gender_guesser").joinpath("data", "nam_dict.txt")
    out: dict[str, int] = {}
    with data.open(encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("#") or len(line) < 31:
                continue
            name = normalize_text(line[3:29].strip())
            if not _NAME.fullmatch(name):
                continue  # "+"-joined variants, abbreviations, names with digits
            top = _top_frequency(line[30:85])
            key = name.lower()
            out[key] = max(top, out.get(key, 0))
    return out


@lru_cache(maxsize=4)
def given_names(min_frequency: int = 3) -> frozenset[str]:
    """Lower-case, accent-folded given names at least ``min_frequency`` common somewhere."""
    return frozenset(name for name, top in _frequencies().items() if top >= min_frequency)
