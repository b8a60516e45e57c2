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

The file has no column for most of Africa, for Pakistan, Indonesia, Thailand or Central Asia, and
its India and Turkey columns are thin: "Kwame", "Adebayo", "Wanjiru", "Siddharth" were no given
names, so "Kwame Mensah" passed as Tier 1. The given names of Faker's person providers (MIT, in
its wheel on PyPI) for those countries are added at frequency 1 (:data:`_MORE_LOCALES`): their
source files are read as data (parsed, not imported: none of Faker's code runs, and importing it
cost 0.1 s of a first start). Not its
English, German or French providers: their names are the outside corpus ``bench/outside.py`` and
``tests/tiers/faker_documents.py`` measure recall on, and must stay unseen by the gazetteer.
Left out of the addition: English words ("Comfort", "Safari", "Dev"), proper nouns of the
English dictionary ("Nazi", "Muslim", "Oman", "Turkmen", "Danish"), German nouns ("Saal",
"Salami", "Bett") and common US surnames ("Washington", "Peterson", "Evans": given names in
Nigeria and Kenya, but places and eponyms in most text), and a few that text means as something
else far more often (:data:`_NOT_ADDED`). The added names also vouch for less after them than the
file's (:func:`added_given_names`, ``people.py``).
"""

from __future__ import annotations

import ast
import importlib.resources
import importlib.util
import re
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

from ..normalize import normalize_text
from ..tables import table
from ._english_words import is_english_word, proper_nouns
from ._german_nouns import every_lemma
from ._surnames import is_surname

__all__ = ["added_given_names", "given_names"]

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


# Faker's person providers for the countries nam_dict.txt lacks or holds few names of: Nigeria
# (Yoruba, Igbo, Hausa, English), Ghana (Twi), Kenya, Swahili, South Africa (Zulu), India,
# Pakistan, Indonesia, Thailand (romanised), Turkey, Azerbaijan, Uzbekistan
_MORE_LOCALES = (
    "yo_NG", "ig_NG", "ha_NG", "en_NG", "tw_GH", "en_KE", "sw", "zu_ZA",
    "en_IN", "en_PK", "id_ID", "en_TH", "tr_TR", "az_AZ", "uz_UZ",
)  # fmt: skip
_PROVIDER_LISTS = ("first_names", "first_names_male", "first_names_female")
_COMMON_SURNAME = 10_000  # a census rank: the surnames as common as "Zelaya" or more
# names of those lists that text far more often means as something else: a product ("Okta"), words
# of Italian, Spanish, Portuguese, French and Turkish ("Lega", "Verde", "Dono", "Tira", "Maman",
# "Ozel"), of Swahili ("Harambee", "Jua", "Sauti"), a dish ("Upma"), a city's transit ("Muni")
_NOT_ADDED = frozenset("okta lega verde dono tira maman ozel dadi harambee jua sauti upma muni".split())


def _provider_names(source: str) -> Iterator[str]:
    """The strings of the name lists (:data:`_PROVIDER_LISTS`) assigned in the ``Provider`` class
    of a Faker person provider's source: the names, whether the list is a tuple of them or a
    mapping of each to its share (whose numbers are no strings)."""
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.ClassDef) and node.name == "Provider"):
            continue
        for stmt in node.body:
            if isinstance(stmt, ast.Assign):
                targets, value = stmt.targets, stmt.value
            elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                targets, value = [stmt.target], stmt.value
            else:
                continue
            if any(isinstance(t, ast.Name) and t.id in _PROVIDER_LISTS for t in targets):
                for leaf in ast.walk(value):
                    if isinstance(leaf, ast.Constant) and isinstance(leaf.value, str):
                        yield leaf.value


@table("given-names-more", source="faker")
def _more_names() -> frozenset[str]:
    """The given names of :data:`_MORE_LOCALES` that the main file lacks, in its spelling
    (accents folded, lower case), the words and common surnames of the module's docstring left out."""
    spec = importlib.util.find_spec("faker")  # finds the package without importing it
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("faker is not installed: its person providers are the gazetteer's second source")
    providers = Path(spec.origin).parent / "providers" / "person"
    known = _frequencies()
    words = proper_nouns() | every_lemma()
    out: set[str] = set()
    for locale in _MORE_LOCALES:
        for raw in _provider_names((providers / locale / "__init__.py").read_text(encoding="utf-8")):
            name = normalize_text(raw)
            key = name.lower()
            if (
                _NAME.fullmatch(name)
                and key not in known
                and not is_english_word(name)
                and key not in words
                and key not in _NOT_ADDED
                and not is_surname(name, _COMMON_SURNAME)
            ):
                out.add(key)
    return frozenset(out)


@lru_cache(maxsize=4)
def given_names(min_frequency: int = 3) -> frozenset[str]:
    """Lower-case, accent-folded given names at least ``min_frequency`` common somewhere (the
    added countries' names count as rare: 1)."""
    names = frozenset(name for name, top in _frequencies().items() if top >= min_frequency)
    return names | _more_names() if min_frequency <= 1 else names


def added_given_names() -> frozenset[str]:
    """The given names of the second source only (none of ``nam_dict.txt``'s)."""
    return _more_names()
