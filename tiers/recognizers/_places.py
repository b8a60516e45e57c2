"""Names of countries, their subdivisions, currencies, languages and scripts, read once, on first use.

A place is no person, though many read like one: "Viet Nam" is a given name and a census surname,
"Ali Sabieh", "Ben Arous" and "Alto Paraná" are regions, "Hong Kong Dollar" and "Yuan Renminbi"
currencies, "Hanifi Rohingya" a script. In business prose ("our supplier in Ben Arous") and in
data that lists them (country tables, locale files) the name recognizers took one multi-word
subdivision in ten for a person. A person candidate that lies inside such a name is dropped.

Source: the ISO 3166-1/-2/-3, 4217, 639-3/-5 and 15924 tables and their German and French
translations, from Debian's iso-codes as shipped inside the ``pycountry`` package on PyPI
(26.2.16, LGPL-2.1; the data files ``databases/*.json`` and ``locales/{de,fr}/LC_MESSAGES/*.mo``).
They are read unmodified from the installed package, nothing of them is copied into this
repository, and none of the package's code is imported. Offline: the files are in the wheel.

Kept: names of two words or more, spelt as the scanner sees text (accents folded by the
normaliser: "Abū Z̧aby" -> "Abu Zaby"). One-word names are left out, because a given name alone is
a place as often ("Georgia", "Chad", "Victoria") and the recognizers judge a single word by
other means. What is given up: a person whose whole name is a region's ("Francisco Morazán", a
Honduran department and its namesake) is dropped too, outside a title's or a sign-off's reach
(:class:`.people.TitledPersonRecognizer` keeps "Dr. Francisco Morazán").
"""

from __future__ import annotations

import gettext
import importlib.resources
import json
import re
import threading

from tiers.normalize import normalize_text

__all__ = ["inside_place_name"]

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
_TRANSLATED = ("iso3166-1", "iso3166-2", "iso3166-3", "iso4217")
_LANGUAGES = ("de", "fr")
_MAX_WORDS = 12  # "Géorgie du Sud et les îles Sandwich du Sud" has nine
_REACH = 120  # characters read each side of a candidate for the place around it
# a word of a name as data writes it: quotes, "=", ":", separators and brackets end it ('"name":
# "Viet Nam"', 'name="Viet Nam"', "12,Ben Arous,region"); a name that holds a comma or a
# parenthesis ("Korea, Republic of") is still read whole, as the text between its first and last word
_WORD = re.compile(r"[^\s\"=:,;\[\]{}<>|`]+")
_EDGE = "\"'()[]{},.;:!?«»“”‘’"  # around a name in prose or data, never part of it

_SEVERAL_WORDS = re.compile(r"[^ -][ -]+[^ -]")

_lock = threading.Lock()
_names: frozenset[str] | None = None


def _load() -> frozenset[str]:
    root = importlib.resources.files("pycountry")
    raw: set[str] = set()
    for table, fields in _TABLES:
        entries = json.loads(root.joinpath("databases", f"{table}.json").read_bytes())
        for rows in entries.values():
            for row in rows:
                raw.update(row[f] for f in fields if f in row)
        if table in _TRANSLATED:
            for language in _LANGUAGES:
                mo = root.joinpath("locales", language, "LC_MESSAGES", f"{table}.mo")
                if mo.is_file():
                    with mo.open("rb") as fh:
                        catalog = gettext.GNUTranslations(fh)._catalog  # type: ignore[attr-defined]  # the parsed .mo
                    # the empty msgid is the file's header (its translators), no name
                    raw.update(v for k, v in catalog.items() if k and isinstance(v, str))
    # folded as one string: one call instead of one per name
    folded = normalize_text("\n".join(" ".join(name.split()) for name in raw)).split("\n")
    return frozenset(key for name in folded if _SEVERAL_WORDS.search(key := name.strip(_EDGE)))


def place_names() -> frozenset[str]:
    global _names
    if _names is None:
        with _lock:  # two scan threads may meet the first use at once
            if _names is None:
                _names = _load()
    return _names


def inside_place_name(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` lies inside a name of :func:`place_names` as written around it
    on its line: "Viet Nam" in "Socialist Republic of Viet Nam", "Kong Dollar" in "Hong Kong
    Dollar"."""
    lo = max(text.rfind("\n", max(0, start - _REACH), start) + 1, start - _REACH)
    hi = text.find("\n", end, end + _REACH)
    hi = min(end + _REACH, len(text)) if hi < 0 else hi
    words = [(m.start(), m.end()) for m in _WORD.finditer(text, lo, hi)]
    first = next((i for i, (s, e) in enumerate(words) if e > start), None)
    last = next((i for i in range(len(words) - 1, -1, -1) if words[i][0] < end), None)
    if first is None or last is None or last < first:
        return False
    names = place_names()
    for i in range(max(0, last - _MAX_WORDS + 1), first + 1):
        for j in range(last, min(len(words), i + _MAX_WORDS)):
            candidate = text[words[i][0] : words[j][1]].strip(_EDGE)
            if " ".join(candidate.split()) in names:
                return True
    return False
