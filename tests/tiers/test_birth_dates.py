"""Dates of birth: the date check against the standard library's calendar (a numeric date is
valid exactly when ``datetime.date`` accepts it, in each order the pattern reads), the word the
table-cell pattern requires, and tables with and without a birth column."""

from __future__ import annotations

import re
from datetime import date

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tiers import Classifier
from tiers.recognizers.birth_dates import _BIRTH, _BIRTH_HEADER, REQUIRED_WORD, DateOfBirthRecognizer

from .conftest import content

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
        text = f"{a}{sep1}{b}{sep2}{year}"
        if a > 31:  # no day: the first number is a year of two digits, ISO's order ("32.1.1")
            want = _real(a + 1900, b, year)
        else:
            want = _real(y, b, a) if b <= 12 else _real(y, a, b)
    assert _CHECK.validate_result(text) is want, text


def test_month_names_are_left_to_the_pattern() -> None:
    assert _CHECK.validate_result("14 March 1962") and _CHECK.validate_result("March 14, 1962")


@settings(max_examples=300)
@given(st.one_of(st.from_regex(_BIRTH, fullmatch=True), st.from_regex(_BIRTH_HEADER, fullmatch=True)))
def test_every_birth_header_holds_the_word_the_cell_pattern_requires(header: str) -> None:
    """The scanner runs the cell pattern only on text where ``REQUIRED_WORD`` occurs: every
    spelling of a birth word, and every header cell the check accepts ("ne_le", "Date of birth:"),
    holds it."""
    assert re.search(REQUIRED_WORD, header), header


@given(st.sampled_from(["Next", "Nested", "network", "Needs", "Nettokosten"]), st.sampled_from([";", ","]))
def test_words_that_start_with_ne_are_no_birth_header(word: str, sep: str) -> None:
    """ "ne" (French "né", normalised) is a birth word alone, not the start of another word."""
    assert not _BIRTH_HEADER.match(word)


_HEADERS = ["born", "DOB", "Geburtsdatum", "geb.", "date de naissance", "Date of birth", "birthdate", "ne le", "ne_le"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.sampled_from(_HEADERS),
    st.sampled_from([",", ";", "\t", "|"]),
    st.lists(st.dates(min_value=date(1930, 1, 1), max_value=date(2005, 12, 31)), min_size=1, max_size=6),
    st.integers(0, 2),
    st.sampled_from(["%d.%m.%Y", "%Y-%m-%d", "%d/%m/%Y"]),
)
def test_dates_in_a_birth_column_are_found_and_others_not(
    clf: Classifier, header: str, sep: str, births: list[date], column: int, fmt: str
) -> None:
    """A table with a birth column: every date under it is found, in any column and separator;
    the same table under another header holds no date of birth (the cell pattern needs a
    birth word in the text, and finds it there)."""
    heads = ["id", "city", "due"]
    heads.insert(column, header)
    rows = []
    for i, born in enumerate(births):
        cells = [str(i), "Ulm", "2026-01-31"]
        cells.insert(column, born.strftime(fmt))
        rows.append(sep.join(cells))
    text = sep.join(heads) + "\n" + "\n".join(rows) + "\n"
    found = {text[f.start : f.end] for f in clf.classify(content(text)).findings if f.entity_type == "DATE_OF_BIRTH"}
    assert found == {b.strftime(fmt) for b in births}, text
    other = text.replace(header, "updated", 1)
    assert not any(f.entity_type == "DATE_OF_BIRTH" for f in clf.classify(content(other)).findings), other
