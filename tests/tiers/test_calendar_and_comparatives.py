"""Words that read as names only out of place: the days of a calendar's header ("Mo Tu We Th Fr
Sa Su": "Fr" is a priest's title and "Sa Su" has the shape of a Korean name) and "than" after a
comparative ("Test Using Larger Than Block-Size Key", the HMAC test vectors; "Than" is a Burmese
given name). Both were read from the Python standard library's tests (issue 12, 2026-12-07);
the names they resemble are still found where they are names."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tiers import Classifier

from .conftest import content

_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
_SHORT = ["Mo", "Tu", "We", "Th", "Fr", "Sa", "Su"]
_LONG = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
_PEOPLE = ["Anna Kowalski", "Jean Dupont-Rioux", "Maria Gonzalez", "Kim Min-jun", "Than Shwe"]


def _people(clf: Classifier, text: str) -> set[str]:
    decision = clf.classify(content(text))
    assert not decision.failed_closed
    return {text[f.start : f.end] for f in decision.findings if f.entity_type == "PERSON"}


def _header(days: list[str], first: int, gaps: list[int]) -> str:
    """A week's header starting on day ``first``, once per month column, joined by ``gaps`` spaces."""
    week = " ".join(days[(first + i) % 7] for i in range(7))
    return "".join(week + (" " * g if k < len(gaps) - 1 else "") for k, g in enumerate(gaps))


@_SETTINGS
@given(
    days=st.sampled_from([_SHORT, _LONG]),
    first=st.integers(0, 6),
    gaps=st.lists(st.integers(2, 8), min_size=1, max_size=3),
    person=st.sampled_from(_PEOPLE),
)
def test_a_calendar_header_is_nobody_and_a_name_under_it_is(
    clf: Classifier, days: list[str], first: int, gaps: list[int], person: str
) -> None:
    header = _header(days, first, gaps)
    assert not _people(clf, f"     February 2026\n{header}\n 1  2  3  4  5  6  7\n"), header
    text = f"{header}\n 1  2  3\nOn call this week: {person}, pager 2\n"
    assert person in _people(clf, text), text


def test_two_days_alone_may_still_be_somebody(clf: Classifier) -> None:
    """Only a row of days is a header: "Sa Su" after a greeting stays a name."""
    assert "Sa Su" in _people(clf, "Dear Sa Su, thank you for the report.")


_COMPARATIVE = ["Larger", "Smaller", "Greater", "Longer", "More", "Less", "Rather", "Other", "Better", "Fewer"]
_AFTER = ["Block-Size", "One Block-Size", "Expected", "Zero", "Usual", "Before", "Average"]


@_SETTINGS
@given(st.sampled_from(_COMPARATIVE), st.sampled_from(_AFTER), st.sampled_from(["Test Using ", "Key ", "", "Be "]))
def test_than_after_a_comparative_is_no_name(clf: Classifier, comparative: str, after: str, lead: str) -> None:
    text = f'b"{lead}{comparative} Than {after} Key - Hash Key First"'
    assert not any(p.startswith("Than") for p in _people(clf, text)), text


@_SETTINGS
@given(st.sampled_from(["the general", "President", "the minister", "Senior General", "met with"]))
def test_than_after_anything_else_stays_a_name(clf: Classifier, before: str) -> None:
    text = f"Yesterday {before} Than Shwe spoke to the envoy."
    assert "Than Shwe" in _people(clf, text), text
