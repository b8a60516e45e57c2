"""International phone numbers checked against their calling code's main region without parsing
(``PhoneNumberRecognizer.valid_in_main_region``): a shortcut that may only say "valid" where
phonenumbers' full parse and check say so, and never changes a verdict of the recognizer."""

from __future__ import annotations

import copy

import phonenumbers
from hypothesis import given, settings
from hypothesis import strategies as st

from tiers.recognizers.contact import PhoneNumberRecognizer

REGIONS = ("US", "GB", "DE", "FR", "IN", "CA", "AU", "BR", "IL")  # the shipped default
FAST = PhoneNumberRecognizer(REGIONS)
FULL = copy.copy(FAST)
FULL._main = {}  # every "+" number parsed and checked in full, as before the shortcut
FULL._valid = FULL._check  # no cache shared with FAST
CODES = sorted({c for c in FAST._main} | {"7", "39", "86", "353", "1"})  # configured and others


def _full_check(international: str) -> bool:
    try:
        return phonenumbers.is_valid_number(phonenumbers.parse("+" + international))
    except phonenumbers.NumberParseException:
        return False


def test_the_main_regions_are_the_calling_codes_first() -> None:
    assert set(FAST._main) == {"1", "44", "49", "33", "91", "61", "55", "972"}  # CA is +1's second


@settings(max_examples=3000, deadline=None)
@given(code=st.sampled_from(CODES), number=st.text("0123456789", min_size=3, max_size=14))
def test_the_shortcut_says_valid_only_where_the_full_check_does(code: str, number: str) -> None:
    if FAST.valid_in_main_region(code + number):
        assert _full_check(code + number)


@settings(max_examples=2000, deadline=None)
@given(
    code=st.sampled_from(CODES),
    number=st.text("0123456789", min_size=6, max_size=12),
    style=st.sampled_from(["+{c} {n}", "+{c}{n}", "00{c} {n}", "+{c} ({a}) {b}", "+{c}-{a}-{b}"]),
)
def test_no_verdict_changes(code: str, number: str, style: str) -> None:
    text = style.format(c=code, n=number, a=number[:3], b=number[3:])
    assert FAST._check(text) == FULL._check(text), text


def test_valid_numbers_of_each_main_region_take_the_shortcut() -> None:
    """Every configured main region's example numbers (the library's own) are known valid here."""
    for region in ("US", "GB", "DE", "FR", "IN", "AU", "BR", "IL"):
        example = phonenumbers.example_number(region)
        assert example is not None
        digits = f"{example.country_code}{phonenumbers.national_significant_number(example)}"
        assert FAST.valid_in_main_region(digits), region
