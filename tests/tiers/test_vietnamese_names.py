"""Vietnamese names (``tiers/recognizers/people_vietnamese.py``): a family name and the syllables
after it are one person, whole, with tones written or folded; a family name that is an English or
French word too needs a marking middle name.

Generated: syllables from the language's own parts (initials, vowels, finals), so the property is
over the shape, not over names written here.
"""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.tiers.name_checks import person_covers, persons, recognizers_of
from tiers.recognizers._english_words import is_english_word
from tiers.recognizers.people import _PLACEHOLDER_NAMES
from tiers.recognizers.people_vietnamese import (
    _FAMILY,
    _FAMILY_WITH_MARKER,
    _FUNCTION_WORDS,
    _MARKERS,
    _TITLES,
    _WESTERN_FAMILY,
    _WESTERN_TITLES,
    VietnameseWesternOrderRecognizer,
    vietnamese_syllable,
)


_INITIALS = ["", "b", "c", "ch", "d", "g", "gi", "h", "k", "kh", "l", "m", "n", "ng", "nh", "ph", "qu", "r", "s", "t",
             "th", "tr", "v", "x"]  # fmt: skip
_VOWELS = ["a", "e", "i", "o", "u", "y", "ai", "ao", "au", "ay", "oa", "oi", "ua", "ui", "uy", "ie", "uo", "uye"]
_FINALS = ["", "", "c", "ch", "m", "n", "ng", "nh", "p", "t"]
_SYLLABLES = st.builds(lambda a, b, c: (a + b + c).capitalize(), st.sampled_from(_INITIALS),
                       st.sampled_from(_VOWELS), st.sampled_from(_FINALS))  # fmt: skip
_CARRIERS = [
    "Approved by {n} on 12 March.",
    "Meeting notes: {n} agreed to review the deviation report.",
    "Please send the corrected batch record to {n} before Friday.",
    "Operator: {n}",
    "The supplier contact is {n} (Hanoi plant).",
]
# tones as text writes them: the normaliser folds them before the scan
_TONED = {"Nguyen": "Nguyễn", "Tran": "Trần", "Pham": "Phạm", "Thi": "Thị", "Van": "Văn", "Duc": "Đức"}


@settings(max_examples=400, deadline=None)
@given(
    family=st.sampled_from(_FAMILY),
    middle=st.lists(_SYLLABLES, min_size=0, max_size=1),
    given_name=_SYLLABLES,
    upper=st.booleans(),
    toned=st.booleans(),
    carrier=st.sampled_from(_CARRIERS),
)
def test_a_name_after_a_family_name_is_found_whole(
    family: str, middle: list[str], given_name: str, upper: bool, toned: bool, carrier: str
) -> None:
    # in capitals only the family names no acronym spells ("NGUYEN", not "NGO", "VU")
    words = [family.upper() if upper and len(family) > 3 else family, *middle, given_name]
    if toned:
        words = [_TONED.get(w, w) for w in words]
    name = " ".join(words)
    text = carrier.format(n=name)
    assert person_covers(text, name), text


@settings(max_examples=200, deadline=None)
@given(
    family=st.sampled_from(_FAMILY_WITH_MARKER),
    marker=st.sampled_from(_MARKERS),
    given_name=_SYLLABLES,
    carrier=st.sampled_from(_CARRIERS),
)
def test_a_word_family_name_before_a_marker_is_found_whole(
    family: str, marker: str, given_name: str, carrier: str
) -> None:
    name = f"{family} {marker} {given_name}"
    assert person_covers(carrier.format(n=name), name)


@settings(max_examples=200, deadline=None)
@given(
    family=st.sampled_from(_FAMILY),
    marker=st.sampled_from(_MARKERS),
    given_names=st.lists(_SYLLABLES, min_size=1, max_size=2),
    carrier=st.sampled_from(_CARRIERS),
)
def test_a_name_in_capitals_with_a_marker_is_found_whole(
    family: str, marker: str, given_names: list[str], carrier: str
) -> None:
    """As passports and HR exports write them: "NGUYEN VAN AN", "TRAN THI MAI"."""
    name = " ".join([family, marker, *given_names]).upper()
    assume(name.lower() not in _PLACEHOLDER_NAMES)  # "NGUYEN VAN A", the language's "John Doe"
    assert person_covers(carrier.format(n=name), name)


@settings(max_examples=300, deadline=None)
@given(st.text("abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8))
def test_a_syllable_is_one_vowel_run(word: str) -> None:
    if vietnamese_syllable(word):
        vowels = [i for i, c in enumerate(word) if c in "aeiouy"]
        assert vowels and vowels[-1] - vowels[0] == len(vowels) - 1 <= 2  # one run of one to three


@pytest.mark.parametrize(
    "text",
    [
        "We drove to Le Mans for the race.",  # a family name that is a French word, no marker
        "The Ho Chi Minh City office opens in May.",
        "Le Monde reported the recall.",
        "Mai Tai cocktails at the offsite",
        "Le Van Houtte coffee in the lobby",  # a marker without a given name after it
        "The Tran Sport Utility line",  # no syllable after the family name
        # an adversarial review's inputs: the acronym NGO (a family name in capitals counts only
        # where no acronym is spelt so), title-case phrases of the language, the placeholder name
        "How An NGO Can Help Your Community",
        "Join The NGO Team Today",
        "The NGO Main Office is in Nairobi.",
        "VU Main Campus map",
        "Sản Phẩm Mới",
        "Họ và tên: Nguyễn Văn A",
        "PHAN TICH DU LIEU",  # a heading in capitals: no marking middle name
        "TRAN SET UP",
        "NEXT: LAM VAN BAN",  # in capitals, a family name that is a word elsewhere: a phrase
        "WARNING: TO VAN GO PLAN",
        "LE DUC DE BOURGOGNE",
    ],
)
def test_words_and_places_are_no_name(text: str) -> None:
    assert not persons(text), text


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Ông Nguyễn Văn An đã ký biên bản.", "Nguyễn Văn An"),
        ("Dear Nguyen Van An,", "Nguyen Van An"),
        ("Yesterday Nguyen Thi Mai approved the change.", "Nguyen Thi Mai"),
        ("Ms. Tran Thu Ha, QA lead", "Tran Thu Ha"),
        ("Reviewed by: NGUYEN Van An", "NGUYEN Van An"),
        ("cc: Đỗ Thị Hà; Hồ Văn Cường", "Đỗ Thị Hà"),
        ("cc: Đỗ Thị Hà; Hồ Văn Cường", "Hồ Văn Cường"),
    ],
)
def test_after_a_title_a_greeting_or_a_capitalised_english_word_the_name_stays(text: str, name: str) -> None:
    assert person_covers(text, name), text


@settings(max_examples=400, deadline=None)
@given(
    given_names=st.lists(_SYLLABLES, min_size=1, max_size=2),
    family=st.sampled_from(_WESTERN_FAMILY),
    toned=st.booleans(),
    carrier=st.sampled_from(_CARRIERS),
)
def test_a_name_in_western_order_is_found_whole(given_names: list[str], family: str, toned: bool, carrier: str) -> None:
    """ "Mai Nguyen", "Thu Trang Pham": as Vietnamese abroad and English text write them. A first
    syllable that is an English word and no given name may be left out ("See Vo"), never the
    family name or the syllables after it."""

    def english(word: str) -> bool:  # or a title ("Cô", "Thầy", "Ông"), left out as well
        return is_english_word(word) or word.lower() in _FUNCTION_WORDS | _WESTERN_TITLES | _TITLES

    assume(not english(given_names[-1]))  # "A Nguyen", "The Nguyen": below
    words = [*given_names, family]
    if toned:
        words = [_TONED.get(w, w) for w in words]
    name = " ".join(words)
    text = carrier.format(n=name)
    found = persons(text)
    assert any(p.endswith(" ".join(words[-2:])) for p in found), (text, found)
    if not english(given_names[0]):
        assert person_covers(text, name), (text, found)


@pytest.mark.parametrize(
    "text",
    ["The Nguyen family runs the plant.", "In Tran we trust", "See Vo et al. for the proof.", "San Pham Moi",
     "Sản Phẩm Mới ra mắt", "To Pham, the manager"],
)  # fmt: skip
def test_words_before_a_family_name_are_no_given_name(text: str) -> None:
    assert not persons(text), (text, persons(text))


def test_a_greeting_before_the_western_order_is_left_out() -> None:
    assert persons("Hi Lan Pham, thanks for the report.") == ["Lan Pham"]


def test_a_province_named_as_a_person_is_none() -> None:
    """ "Thái Nguyên" is a province (ISO 3166-2:VN), shaped as "Mai Nguyen" is."""
    assert not persons("Thái Nguyên province, Viet Nam")
    assert not persons("Thai Nguyen")


@pytest.mark.parametrize(
    "text",
    [
        "Bảo vệ Môi Trường là trách nhiệm của mọi người.",  # an adversarial review's (2026-12-06)
        "Tàu đang ở giữa Thái Bình Dương.",
        "Anh ấy bị bắt vì Vi Phạm luật.",
        "Chính sách về Mức Lương tối thiểu",
        # a second review's: places and a brand in English text
        "We met at Tan Dinh market.",
        "I bought Trung Nguyen coffee at the airport.",
        "Walk along Hung Vuong to the market.",
        "Our hotel was on Dinh Tien Hoang street.",
    ],
)
def test_vietnamese_words_in_vietnamese_sentences_are_no_western_order_name(text: str) -> None:
    """Vietnamese writes names family first: in its sentences a family name's spelling after
    capitalised syllables is a word of it. (Other recognizers may still read a given name and a
    surname there, as they would anywhere.)"""
    assert VietnameseWesternOrderRecognizer.__name__ not in recognizers_of(text)
