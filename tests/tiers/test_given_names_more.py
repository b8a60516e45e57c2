"""The gazetteer's second source (``tiers/recognizers/_given_names.py``): the given names of Faker's
person providers for countries ``nam_dict.txt`` lacks, read from their source files as data.

What could go wrong: the source reading misses a list's form (a tuple, a mapping of name to
share, an annotated assignment) or takes strings that are no names; the reading drifts from what
Faker itself holds; an English, German or French provider (the outside corpus recall is measured
on) leaks in; and, the point of it all, a person of those countries still passes unfound.
"""

from __future__ import annotations

import importlib
import keyword

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.tiers.faker_documents import LOCALES as OUTSIDE_CORPUS_LOCALES
from tests.tiers.name_checks import person_covers, persons
from tiers.normalize import normalize_text
from tiers.recognizers._english_words import _words, is_english_word, proper_nouns
from tiers.recognizers._german_nouns import every_lemma
from tiers.recognizers._given_names import (
    _COMMON_SURNAME,
    _MORE_LOCALES,
    _NAME,
    _NOT_ADDED,
    _PROVIDER_LISTS,
    _frequencies,
    _more_names,
    _provider_names,
    added_given_names,
    given_names,
)
from tiers.recognizers._surnames import is_surname
from tiers.recognizers._vocabulary import NOT_GIVEN_NAMES

_NAMES = st.lists(st.text("abcdefghijklmnopqrstuvwxyzé-' ", min_size=1, max_size=12), max_size=8)


def _source(lists: dict[str, tuple[list[str], str]], decoys: list[str]) -> str:
    """A provider module: each list in the form given ("tuple", "weighted", "annotated"), and
    assignments of other names holding strings that are no given names."""
    lines = ["from collections import OrderedDict", "from .. import Provider as PersonProvider", "",
             "", "class Provider(PersonProvider):", "    formats = ('{{first_name}} {{last_name}}',)"]  # fmt: skip
    for name, (values, form) in lists.items():
        if form == "weighted":
            pairs = ", ".join(f"({v!r}, {i + 1}.5)" for i, v in enumerate(values))
            lines.append(f"    {name} = OrderedDict(({pairs}{',' if len(values) == 1 else ''}))")
        elif form == "annotated":
            lines.append(f"    {name}: tuple[str, ...] = {tuple(values)!r}")
        else:
            lines.append(f"    {name} = {tuple(values)!r}")
    lines.append(f"    last_names = {tuple(decoys)!r}")
    lines.append(f"    prefixes_female = {tuple(decoys)!r}")
    lines.append("    first_names = first_names_male + first_names_female")
    return "\n".join(lines) + "\n"


@settings(max_examples=200, deadline=None)
@given(
    male=_NAMES,
    female=_NAMES,
    forms=st.tuples(*[st.sampled_from(["tuple", "weighted", "annotated"])] * 2),
    decoys=st.lists(st.text("XYZ!?", min_size=1, max_size=6), max_size=5),
)
def test_a_provider_source_gives_exactly_its_lists_strings(
    male: list[str], female: list[str], forms: tuple[str, str], decoys: list[str]
) -> None:
    source = _source({"first_names_male": (male, forms[0]), "first_names_female": (female, forms[1])}, decoys)
    assert set(_provider_names(source)) == set(male) | set(female)


def test_the_reading_equals_what_faker_itself_holds() -> None:
    """The installed Faker's own objects (imported here, in the test only) are the oracle."""
    expected: set[str] = set()
    for locale in _MORE_LOCALES:
        provider = importlib.import_module(f"faker.providers.person.{locale}").Provider
        for attr in _PROVIDER_LISTS:
            values = getattr(provider, attr, ())
            for raw in values.keys() if isinstance(values, dict) else values:
                name = normalize_text(raw)
                if _NAME.fullmatch(name) and not is_english_word(name) and not is_surname(name, _COMMON_SURNAME):
                    expected.add(name.lower())
    expected -= set(_frequencies()) | proper_nouns() | every_lemma() | _NOT_ADDED
    assert set(_more_names()) == expected
    assert len(expected) > 3000  # the lists are there at all


def test_no_outside_corpus_provider_is_read() -> None:
    assert not set(_MORE_LOCALES) & set(OUTSIDE_CORPUS_LOCALES)
    assert not {locale.split("_")[0] for locale in _MORE_LOCALES} & {"de", "fr"}


def test_the_added_names_are_rare_given_names_and_no_words() -> None:
    more = set(_more_names())
    assert more <= given_names(1)
    assert not more & given_names(2)  # rare: too weak before an upper-case surname, as the file's rare ones
    assert {
        "kwame",
        "adekunle",
        "wanjiru",
        "siddharth",
        "oluwafemi",
        "thandiwe",
        "ifeoma",
        "budi",
    } <= more | given_names(1)
    assert not {n for n in more if is_english_word(n) or keyword.iskeyword(n)}
    assert not {n for n in more if is_surname(n.capitalize(), _COMMON_SURNAME)}  # "washington", "peterson"
    assert not more & (proper_nouns() | every_lemma())  # "nazi", "muslim", "oman"; "saal", "salami"
    assert added_given_names() == more


_SURNAMES = ["Okafor", "Mensah", "Kamau", "Patel", "Sharma", "Wijaya", "Yilmaz", "Adeyemi", "Nkosi", "Otieno",
             "Aliyev", "Karimov", "Smith", "Garcia", "Osei", "Mwangi", "Hussain", "Gunawardena"]  # fmt: skip
_CARRIERS = [
    "Please send the signed contract to {n} before Friday.",
    "Meeting notes: {n} agreed to review the deviation report.",
    "Hi team, {n} will take over the supplier audit for line 3.",
    "Approved by {n} on 12 March.",
    "Contact person: {n}\nPhone extension 4411",
]


def _display(name: str) -> str:
    return "-".join(part.capitalize() for part in name.split("-"))


@settings(max_examples=300, deadline=None)
@given(
    given_name=st.sampled_from(sorted(set(_more_names()) - NOT_GIVEN_NAMES)),
    surname=st.sampled_from(_SURNAMES),
    carrier=st.sampled_from(_CARRIERS),
)
def test_a_person_of_the_added_countries_is_found(given_name: str, surname: str, carrier: str) -> None:
    name = f"{_display(given_name)} {surname}"
    text = carrier.format(n=name)
    assert person_covers(text, name), (text, persons(text))


# an added given name vouches for a census surname of the first 10,000 or a word of no dictionary
# here: English words (web2's lower-case entries, from 4 to 10 letters) are no surname after one
_WORDS = sorted(w for w in _words() if w.islower() and w.isalpha() and 4 <= len(w) <= 10 and not is_surname(w, 10_000))


@settings(max_examples=300, deadline=None)
@given(given_name=st.sampled_from(sorted(set(_more_names()) - NOT_GIVEN_NAMES)), word=st.sampled_from(_WORDS))
def test_an_added_given_name_before_a_word_is_no_person(given_name: str, word: str) -> None:
    text = f"We discussed the {_display(given_name)} {word.capitalize()} in the meeting."
    assert not [p for p in persons(text) if word.capitalize() in p], text


# An adversarial review's inputs: the added lists hold words of prose (proper nouns, German and
# Romance nouns, a product); each was a PERSON in a first version of the addition.
@pytest.mark.parametrize(
    "text",
    [
        "Seattle, Washington is where the team sits.",  # a common US surname is no added given name
        "See the Peterson Graph in the appendix.",
        "The run used Dev Tools and a Safari build.",  # English words are none either
        "The museum covers Nazi Germany and the Holocaust in three galleries.",
        "Members of the Muslim Brotherhood were arrested, the report says.",
        "The Muslim Council of Britain issued a statement.",
        "Login via Okta Verify is now mandatory for all staff.",
        "We migrated SSO from Azure AD to Okta Workflows last sprint.",
        "Morada: Rua Garrett 45, 1200-203 Lisboa",
        "Zum Mittagessen gibt es Salami Pizza und Döner Kebab.",
        "Deviation DEV-2024-017: Salami Slicer blade found damaged during line clearance.",
        "Die Schulung findet im Saal Europa statt.",
        "Oman Air will resume flights to Zanzibar in June.",
        "Our supplier in Novi Sad shipped the castings late.",
        "The Lega Nord won 17% in the 2018 elections.",
        "Turkmen Gas exports rose again.",
        "The Javan Rhinoceros is critically endangered.",
        "Residencial Verde Vale, Rua das Flores 12",
        "Maman Cuisine propose des plats à emporter.",
        "Kelapa Gading Mall is crowded on weekends.",
        "Karama Market in Dubai sells textiles.",
        "Harambee Stars beat Uganda 2-1 in Nairobi.",
        "Momsregistreringsnummer, Danish VAT number",
    ],
)
def test_places_eponyms_and_words_stay_unfound(text: str) -> None:
    assert not persons(text), text


def _azerbaijani(attrs: tuple[str, ...]) -> list[str]:
    """Names of Faker's az_AZ provider written with "ə" (Faker imported here, in the test only)."""
    provider = importlib.import_module("faker.providers.person.az_AZ").Provider
    return sorted({n for attr in attrs for n in getattr(provider, attr, ()) if "ə" in n.lower() and n.isalpha()})


@settings(max_examples=150, deadline=None)
@given(
    # the ones the gazetteer holds ("Rəis" is none: "rais" is an English word)
    given_name=st.sampled_from(
        [
            n
            for n in _azerbaijani(("first_names_male", "first_names_female"))
            if normalize_text(n).lower() in given_names(1)
        ]
    ),
    surname=st.sampled_from(_azerbaijani(("last_names_male", "last_names_female", "last_names_unisex"))),
    carrier=st.sampled_from(_CARRIERS),
)
def test_a_name_written_with_schwa_is_found(given_name: str, surname: str, carrier: str) -> None:
    """Azerbaijani "ə" folds to its transliteration as the gazetteer's names do ("Məmməd" is read
    as "Mammad"), so a name written with it is found whole."""
    name = f"{given_name} {surname}"
    text = carrier.format(n=name)
    assert person_covers(text, name), (text, persons(text))
