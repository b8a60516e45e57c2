"""Korean names in Latin letters (``tiers/recognizers/people_korean.py``): a Korean surname and a
hyphenated two-syllable given name, either order, are a person whole; English compounds and
reduplications next to a surname-like word are not.

Generated: syllables from the romanisation's own parts (initials, vowels, endings), so the
property is over the shape, not over a list of names written here.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.tiers.name_checks import person_covers, persons
from tiers.recognizers.people_korean import _SURNAMES, _english_compound, _reduplicated, korean_syllable


_INITIALS = ["", "g", "k", "kk", "n", "d", "t", "r", "m", "b", "p", "s", "ss", "j", "ch", "h", "y", "w"]
_VOWELS = ["a", "ae", "ya", "eo", "e", "yeo", "ye", "o", "wa", "oe", "yo", "u", "wo", "wi", "yu", "eu", "ui", "i", "oo",
           "ee", "ou"]  # fmt: skip
_ENDINGS = ["", "", "", "k", "n", "l", "m", "p", "ng"]
_SYLLABLES = st.builds(lambda a, b, c: a + b + c, st.sampled_from(_INITIALS), st.sampled_from(_VOWELS),
                       st.sampled_from(_ENDINGS))  # fmt: skip
_CARRIERS = [
    "Meeting notes: {n} agreed to review the deviation report.",
    "Please send the signed contract to {n} before Friday.",
    "Reviewer: {n}",
    "cc: {n}, quality assurance",
    "The supplier contact is {n} (Seoul office).",
]


@settings(max_examples=400, deadline=None)
@given(
    first=_SYLLABLES,
    second=_SYLLABLES,
    surname=st.sampled_from(_SURNAMES),
    surname_first=st.booleans(),
    upper=st.booleans(),
    capital_second=st.booleans(),
    carrier=st.sampled_from(_CARRIERS),
)
def test_a_korean_name_is_found_whole(
    first: str,
    second: str,
    surname: str,
    surname_first: bool,
    upper: bool,
    capital_second: bool,
    carrier: str,
) -> None:
    if _reduplicated(first, second) or _english_compound(first, second):
        return  # "Yo-yo", "Hip-hop", "A-to", "Pop-up": English's, below
    given_name = first.capitalize() + "-" + (second.capitalize() if capital_second else second)
    family = surname.upper() if upper else surname
    if upper and capital_second:  # in capitals throughout, as passports write it: "KIM MIN-JUN"
        given_name = given_name.upper()
    name = f"{family} {given_name}" if surname_first else f"{given_name} {family}"
    text = carrier.format(n=name)
    assert person_covers(text, name), text


@settings(max_examples=300, deadline=None)
@given(st.text("abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8))
def test_a_syllable_has_one_vowel_sound(word: str) -> None:
    """Anything the check takes is one initial, one vowel of the list, one ending."""
    if korean_syllable(word):
        vowels = [i for i, c in enumerate(word) if c in "aeiou"]
        assert vowels and vowels[-1] - vowels[0] <= 2  # "yeo", "wae": one vowel sound, one run
        assert word[vowels[-1] + 1 :] in ("", "ng", "k", "n", "t", "l", "m", "p", "g", "b", "h")


@pytest.mark.parametrize(
    "text",
    [
        "The Follow-up Kim mentioned is in the appendix.",  # English compounds: no two syllables
        "We use Built-in Park features.",
        "Mark-up Lee template",
        "Hip-hop Song list for the party",  # English reduplications
        "Ping-pong Park is open on Sundays.",
        "Sing-song Lee rhyme",
        "Yo-yo Ma played.",
        "Use the Read-only Han mode.",
        # an adversarial review's inputs: a pair inside a longer hyphenated word (German's "Im",
        # "Um", "An" open sentences), English compounds of a verb and a particle, day and month ranges
        "Im Pop-up-Store gibt es Rabatte.",
        "Um Log-in-Probleme zu vermeiden, bitte neu starten.",
        "An Sit-in-Aktionen nahmen viele teil.",
        "An Up-to-Date Guide to Kubernetes",
        "a new Pop-up Park on Main Street",
        "- Fix Log-in Ban for admins",
        "Student Sit-In Won Concessions",
        "Top-up Min 10 GBP",
        "# TODO: Sun Set-up job runs at 9pm",
        "Tickets: Sat-Sun Jun 21-22",
        "Revenue Jan-Jun Won 3.2 trillion",
        "Season Jun-Sep Min 3 nights",
        "PARK SET-UP GUIDE",  # in capitals: the same refusals
        "SONG HIP-HOP",
    ],
)
def test_english_compounds_beside_a_surname_word_are_no_name(text: str) -> None:
    assert not persons(text), text


@pytest.mark.parametrize(
    "name",
    ["Kim Min-jun", "Min-jun Kim", "Park Ji-hoon", "LEE Seo-yeon", "Ban Ki-moon", "Moon Jae-in", "Song Hye-kyo",
     "Ji-ho Kim", "Kim Jong-un", "Choi Dong-hyun", "Jung Hae-in", "Yoon Seok-yeol", "Moon Jae-in", "Lee Soo-ah",
     "Shin Hyun-shik", "Kim Kyoung-hee", "Chung Eui-sun", "Chung Kyung-wha", "Bong Joon-ho", "Joon-ho Bong"],
)  # fmt: skip
def test_known_shapes_are_found_whole(name: str) -> None:
    assert person_covers(f"Meeting notes: {name} agreed to review the report.", name)
