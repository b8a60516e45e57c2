"""Names of countries, their subdivisions, currencies, languages and scripts, read once per process.

A place is no person, though many read like one: "Viet Nam" is a given name and a census surname,
"Ali Sabieh", "Ben Arous" and "Alto Paraná" are regions, "Hong Kong Dollar" and "Yuan Renminbi"
currencies, "Hanifi Rohingya" a script. In business prose ("our supplier in Ben Arous") and in
data that lists them (country tables, locale files) the name recognizers took one multi-word
subdivision in ten for a person. A person candidate that lies inside such a name is dropped.

Source: the ISO 3166-1/-2/-3, 4217, 639-3/-5 and 15924 tables, their German and French
translations and the country names (3166-1) in every Latin-script language the package has, from Debian's iso-codes as shipped inside the ``pycountry`` package on PyPI
(26.2.16, LGPL-2.1; the data files ``databases/*.json`` and ``locales/*/LC_MESSAGES/*.mo``).
They are read unmodified from the installed package when the recognizers are built (≈ 0.1 s), nothing of them is copied into this
repository, and none of the package's code is imported. Offline: the files are in the wheel.

Kept: names of two words or more, spelt as the scanner sees text (accents folded by the
normaliser: "Abū Z̧aby" -> "Abu Zaby"). One-word names are left out, because a given name alone is
a place as often ("Georgia", "Chad", "Victoria") and the recognizers judge a single word by
other means. A candidate that is a region's whole name and reads as a common given name and
surname stays a person ("Diego Martin", "Santiago Rodriguez"). What is given up: a person whose
whole name is a region's with a rarer surname ("Quang Nam", "Thanh Hoa") is dropped too, outside a
title's or a sign-off's reach (:class:`.people.TitledPersonRecognizer` keeps "Dr. Thanh Hoa").
"""

from __future__ import annotations

import gettext
import importlib.resources
import json
import re
from dataclasses import dataclass

from tiers.normalize import normalize_text
from tiers.tables import table

from ._given_names import given_names
from ._surnames import surname_rank

__all__ = ["inside_place_name", "place_names"]

# (table, fields): the names each table gives an entry
_TABLES = (
    ("iso3166-1", ("name", "official_name", "common_name")),
    ("iso3166-2", ("name",)),
    ("iso3166-3", ("name",)),
    ("iso4217", ("name",)),
    ("iso639-3", ("name", "inverted_name")),
    ("iso639-5", ("name",)),
    ("iso15924", ("name",)),
)
# the tables read with their German and French translations; a country's name in every language
# the package has ("Reino Unido", "Stati Uniti": sentences in other languages name countries)
_TRANSLATED = ("iso3166-1", "iso3166-2", "iso3166-3", "iso4217")
_LANGUAGES = ("de", "fr")
_EVERY_LANGUAGE = "iso3166-1"
# the languages written in the Latin script that the package translates country names to (the
# name rules read Latin letters only; the other scripts' translations would cost load time for
# nothing)
_LATIN_LANGUAGES = tuple(
    """af ast bs ca cs cy da de eo es et eu fi fo fr fur fy ga gl ha hr hu id ig is it kab lt lv ms mt
    nb_NO nl nn oc pl pt pt_BR ro sc sk sl sq sr@latin sv sw tk tl tr uz vi wa yo zu fil ht br""".split()
)
_MAX_WORDS = 12  # "Géorgie du Sud et les îles Sandwich du Sud" has nine
_REACH = 120  # characters read each side of a candidate for the place around it
# a word of a name as data writes it: quotes, "=", ":", separators and brackets end it ('"name":
# "Viet Nam"', 'name="Viet Nam"', "12,Ben Arous,region"); a name that holds a comma or a
# parenthesis ("Korea, Republic of") is still read whole, as the text between its first and last word
_WORD = re.compile(r"[^\s\"=:,;\[\]{}<>|`]+")
_EDGE = "\"'()[]{},.;:!?«»“”‘’"  # around a name in prose or data, never part of it

_SEVERAL_WORDS = re.compile(r"[^ -][ -]+[^ -]")
_PARTS = re.compile(r"[\s\"=:,;\[\]{}<>|`-]+")  # a name's words and a hyphenated word's parts


def _load() -> frozenset[str]:
    root = importlib.resources.files("pycountry")
    raw: set[str] = set()
    for iso, fields in _TABLES:
        entries = json.loads(root.joinpath("databases", f"{iso}.json").read_bytes())
        for rows in entries.values():
            for row in rows:
                raw.update(row[f] for f in fields if f in row)
        if iso in _TRANSLATED:
            languages = _LATIN_LANGUAGES if iso == _EVERY_LANGUAGE else _LANGUAGES
            for language in languages:
                mo = root.joinpath("locales", language, "LC_MESSAGES", f"{iso}.mo")
                if mo.is_file():
                    with mo.open("rb") as fh:
                        catalog = gettext.GNUTranslations(fh)._catalog  # type: ignore[attr-defined]  # the parsed .mo
                    # the empty msgid is the file's header (its translators), no name
                    raw.update(v for k, v in catalog.items() if k and isinstance(v, str))
    # folded as one string: one call instead of one per name
    folded = normalize_text("\n".join(" ".join(name.split()) for name in raw)).split("\n")
    return frozenset(key for name in folded if _SEVERAL_WORDS.search(key := name.strip(_EDGE)))


@dataclass(frozen=True, slots=True)
class _Places:
    """The names and what a candidate is checked against before any window is built: the words
    a name starts and ends with, and every word of every name."""

    names: frozenset[str]
    firsts: frozenset[str]
    lasts: frozenset[str]
    vocabulary: frozenset[str]

    @classmethod
    def of(cls, names: frozenset[str]) -> _Places:
        words = [w for w in map(_WORD.findall, names) if w]
        return cls(
            names,
            frozenset(w[0].strip(_EDGE) for w in words),
            frozenset(w[-1].strip(_EDGE) for w in words),
            frozenset(x.strip(_EDGE) for n in names for x in _PARTS.split(n)),
        )


# a region named as people are ("Diego Martin", "Santiago Rodriguez", "Hai Duong"): where the whole
# name is a given name and a surname of the census's first 10,000, it stays a person's (a rarer
# surname, "Viet Nam", "Quang Nam", "Ali Sabieh", reads as the place)
_COMMON_SURNAME = 10_000


@table("place-names", source="pycountry")
def _index_sets() -> tuple[frozenset[str], frozenset[str], frozenset[str], frozenset[str]]:
    places = _Places.of(_load())
    return places.names, places.firsts, places.lasts, places.vocabulary


_places: _Places | None = None


def _index() -> _Places:
    global _places
    if _places is None:  # two threads may both build it: the same value, from one table
        _places = _Places(*_index_sets())
    return _places


def place_names() -> frozenset[str]:
    return _index().names


def _person_shaped(value: str) -> bool:
    words = value.split()
    if len(words) < 2:
        return False
    rank = surname_rank(words[-1])
    return rank is not None and rank <= _COMMON_SURNAME and words[0].lower() in given_names(1)


def inside_place_name(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` lies inside a name of :func:`place_names` as written around it
    on its line: "Viet Nam" in "Socialist Republic of Viet Nam", "Kong Dollar" in "Hong Kong
    Dollar". A candidate that is the whole name and reads as a common given name and surname
    stays a person ("Diego Martin")."""
    places = _index()
    value = text[start:end]
    if value.isalpha():  # one word, as a table's cells mostly are: no split needed
        if value not in places.vocabulary:
            return False
    elif not all(w.strip(_EDGE) in places.vocabulary for w in _PARTS.split(value) if w):
        return False  # a word no place's name has: most people's names stop here
    lo = max(text.rfind("\n", max(0, start - _REACH), start) + 1, start - _REACH)
    hi = text.find("\n", end, end + _REACH)
    hi = min(end + _REACH, len(text)) if hi < 0 else hi
    words = [(m.start(), m.end()) for m in _WORD.finditer(text, lo, hi)]
    first = next((i for i, (s, e) in enumerate(words) if e > start), None)
    last = next((i for i in range(len(words) - 1, -1, -1) if words[i][0] < end), None)
    if first is None or last is None or last < first:
        return False
    # a name can only start at a word some name starts with and end at one some name ends with:
    # two set lookups a word before any string is built (name-dense lines stay cheap)
    starts = [
        i
        for i in range(max(0, last - _MAX_WORDS + 1), first + 1)
        if text[slice(*words[i])].strip(_EDGE) in places.firsts
    ]
    if not starts:
        return False
    ends = [
        j
        for j in range(last, min(len(words), first + _MAX_WORDS))
        if text[slice(*words[j])].strip(_EDGE) in places.lasts
    ]
    value = " ".join(value.split())
    for i in starts:
        for j in ends:
            if j - i >= _MAX_WORDS:
                break
            candidate = " ".join(text[words[i][0] : words[j][1]].strip(_EDGE).split())
            if candidate in places.names and not (candidate == value and _person_shaped(value)):
                return True
    return False
