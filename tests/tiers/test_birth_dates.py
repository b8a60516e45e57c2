"""The date check of the birth-date recognizer against the standard library's calendar: a numeric
date is valid exactly when ``datetime.date`` accepts it, in each order the pattern reads."""

from __future__ import annotations

from datetime import date

from hypothesis import given
from hypothesis import strategies as st

from tiers.recognizers.birth_dates import DateOfBirthRecognizer

_CHECK = DateOfBirthRecognizer()


def _real(y: int, m: int, d: int) -> bool:
    try:
        date(y, m, d)
    except ValueError:
        return False
    return 1880 <= y


@given(
    st.integers(0, 40),
    st.integers(0, 40),
    st.one_of(st.integers(0, 99), st.integers(1000, 9999)),
    st.sampled_from("./-"),
    st.sampled_from("./-"),
    st.booleans(),
)
def test_numeric_dates_are_checked_as_the_calendar_does(
    a: int, b: int, year: int, sep1: str, sep2: str, iso: bool
) -> None:
    if iso and year >= 1000:  # 1962-03-14
        text, want = f"{year}{sep1}{b:02d}{sep2}{a:02d}", _real(year, b, a)
    else:  # 14.03.1962, 3/14/62: the day and month in either order, a two-digit year in the 1900s
        y = year + 1900 if year < 100 else year
        text, want = f"{a}{sep1}{b}{sep2}{year}", (_real(y, b, a) if b <= 12 else _real(y, a, b))
    assert _CHECK.validate_result(text) is want, text


def test_month_names_are_left_to_the_pattern() -> None:
    assert _CHECK.validate_result("14 March 1962") and _CHECK.validate_result("March 14, 1962")
