"""Names in capitals throughout (``tiers/recognizers/people_capitals.py``): a common given name and
a census surname in capitals are one person, in both orders of a passport or an export; given
names that are words and surnames that are code's words are none."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.tiers.name_checks import person_covers, persons
from tiers.recognizers._english_words import _words, is_english_word
from tiers.recognizers._given_names import given_names
from tiers.recognizers._surnames import _ranks, is_surname
from tiers.recognizers._vocabulary import (
    AMBIGUOUS_GIVEN_NAMES,
    NOT_GIVEN_NAMES,
    WEAK_GIVEN_NAMES,
    is_common,
)

_GIVEN = sorted(
    n
    for n in given_names(2) - NOT_GIVEN_NAMES - AMBIGUOUS_GIVEN_NAMES - WEAK_GIVEN_NAMES
    if n.isalpha() and 3 <= len(n) <= 15
)
_SURNAMES = sorted(
    s
    for s, rank in _ranks().items()
    if rank <= 20_000 and s.isalpha() and 3 <= len(s) <= 15 and not is_common(s)
    and (not is_english_word(s) or rank <= 1_000)
)  # fmt: skip
_CARRIERS = ["Passenger: {n}\nSeat 14C", "NAME OF HOLDER: {n}", "{n}\nDate of birth: see file", "Payee: {n}, net 30"]


@settings(max_examples=300, deadline=None)
@given(
    given_name=st.sampled_from(_GIVEN),
    surname=st.sampled_from(_SURNAMES),
    listed=st.booleans(),
    carrier=st.sampled_from(_CARRIERS),
)
def test_a_name_in_capitals_is_found_whole(given_name: str, surname: str, listed: bool, carrier: str) -> None:
    assume(not (given_name in _words() and surname in _words()))  # "JET BLACK": below
    name = f"{surname.upper()}, {given_name.upper()}" if listed else f"{given_name.upper()} {surname.upper()}"
    text = carrier.format(n=name)
    assert person_covers(text, name), (text, persons(text))


# given names that are words too, before English words: headings and commands in capitals
_WORD_GIVEN = sorted(n for n in AMBIGUOUS_GIVEN_NAMES | WEAK_GIVEN_NAMES if n.isalpha() and len(n) >= 3)
_ENGLISH = ["REPORT", "STATUS", "UPDATE", "ALL", "PRIVILEGES", "GOLD", "AS", "READ", "FIELD", "SUMMARY", "LOG"]


@settings(max_examples=200, deadline=None)
@given(first=st.sampled_from(_WORD_GIVEN), second=st.sampled_from(_ENGLISH))
def test_a_given_name_that_is_a_word_starts_no_name_in_capitals(first: str, second: str) -> None:
    assert not persons(f"SECTION 4: {first.upper()} {second}\nSee below."), (first, second)


@pytest.mark.parametrize(
    "text",
    [
        "MARK AS READ",
        "GRANT ALL PRIVILEGES ON audit TO tiergate;",
        "ROSE GOLD finish",
        "NOTE TO SELF",
        "SELECT DISTINCT NAME FROM USERS",
        "ERROR HANDLING GUIDE",
        "features = {'PIL CORE': 'PIL._imaging'}",  # real code the first version took
        "Opcode.CLOSE, PING and PONG are control frames",
        # an adversarial review's inputs: two English words (colours, labels, churches, phrases),
        # the spelling alphabet, an enumeration in the list form, labels and a greeting
        "COLOR: JET BLACK",
        "SKU 4471 SILVER GRAY XL",
        "AVAILABLE COLORS: BLACK, SILVER, GOLD",
        "SIZES: S, M, L, XL. COLORS: BROWN, TAN, WHITE.",
        '{"label": "EDIT FIELDS"}',
        "<button>EDIT KEY</button>",
        "GRANT KEY",
        "CHARLIE ROMEO, CLEARED TO LAND",
        "GRACE CHURCH",
        "SILVER FOX",
        "NOW PLAYING: HEY JUDE",
    ],
)
def test_headings_commands_and_code_are_no_name(text: str) -> None:
    assert not persons(text), text


@pytest.mark.parametrize("surname", ["SMITH", "BROWN", "YOUNG", "WHITE"])
def test_the_commonest_surnames_that_are_words_still_count(surname: str) -> None:
    assert is_surname(surname, 1_000)
    assert person_covers(f"Passenger: JAMES {surname}", f"JAMES {surname}")


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("MRS MARIA GONZALEZ", "MARIA GONZALEZ"),  # inside a longer run of capitals
        ("EMPLOYEE JOHN SMITH WAS TERMINATED", "JOHN SMITH"),
        ("PASSENGER NAME JAMES WILSON SEAT 14C", "JAMES WILSON"),
        ("NAME: DAVID DAVIES", "DAVID DAVIES"),  # no plural of "davy"
        ("JAMES T. WILSON", "JAMES T. WILSON"),
    ],
)
def test_the_name_inside_a_run_of_capitals_is_found(text: str, name: str) -> None:
    assert person_covers(text, name), (text, persons(text))
