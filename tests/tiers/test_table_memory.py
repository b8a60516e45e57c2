"""A table's header is remembered between the cells of one text, never carried into the next.

The column recognizers (a company column, a birth-date column) read a table's header once and
keep it while the cells below it are judged. A text's ``id`` is no key for that: CPython gives a
freed text's address to a later string, so a request of the same length as the one before could
get that one's header, and its company column went unread ("Name;Firma;Ort" first, then
"Name;Ort;Firma": the firms of the second stayed in the text, its towns were taken for firms;
seen with two texts built one after the other in one process). The property: a text's findings
do not depend on the text read before it, even where every text gets the same address (the
recognizers' modules are given an ``id`` that says so: the allocator's worst case, every time).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tiers import Classifier

from .conftest import content

_ROWS = (
    ("Anna Lehmann", "Lehmann Bau", "Berlin", "14.03.1962"),
    ("Otto Kramer", "Kramer Holz", "Bonn", "02.11.1958"),
    ("Lea Brandt", "Brandt Technik", "Ulm", "30.06.1971"),
)
_HEADERS = {0: "Name", 1: "Firma", 2: "Ort", 3: "Geburtsdatum"}  # the header word of each column
_WIDTH = 4000  # longer than a short segment, so the table is scanned as a text of its own
# the modules whose recognizers remember something of the text they read
_MODULES = ("tiers.recognizers.firms", "tiers.recognizers.birth_dates", "tiers.recognizers._eponyms")


def _found(clf: Classifier, order: tuple[int, ...], sep: str, width: int = _WIDTH) -> list[tuple[str, str]]:
    """The findings, as (entity, value), of a table with the columns in ``order``."""
    lines = [sep.join(_HEADERS[k] for k in order)] + [sep.join(row[k] for k in order) for row in _ROWS]
    text = ("\n".join(lines) + "\n").ljust(width, ".")
    decision = clf.classify(content(text))
    return sorted((f.entity_type, text[f.start : f.end]) for f in decision.findings)


@pytest.fixture
def one_address(monkeypatch: pytest.MonkeyPatch) -> None:
    for module in _MODULES:
        monkeypatch.setattr(f"{module}.id", lambda obj: 1, raising=False)


_orders = st.permutations(range(4)).map(tuple)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=_orders, second=_orders, sep=st.sampled_from([";", ",", "\t"]))
def test_a_tables_findings_do_not_depend_on_the_table_read_before(
    clf: Classifier, one_address: None, first: tuple[int, ...], second: tuple[int, ...], sep: str
) -> None:
    _found(clf, first, sep)
    after_first = _found(clf, second, sep)
    alone = _found(clf, second, sep, _WIDTH + 1)  # one character longer: no other text's length
    assert after_first == alone
    # and each column was read by its own header: every firm, no town, every date of birth
    firms = {v for e, v in after_first if e == "ORGANIZATION"}
    assert {row[1] for row in _ROWS} <= firms
    assert not firms & {row[2] for row in _ROWS}
    assert {row[3] for row in _ROWS} <= {v for e, v in after_first if e == "DATE_OF_BIRTH"}
