"""Normalisation translates only the text's non-ASCII runs (a speed-up, tiers/normalize.py): the
same result as translating every character, on any text."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tiers.normalize import _get_tables, _translate

_MIXED = st.text(alphabet=st.one_of(st.characters(max_codepoint=0x7F), st.characters()), max_size=300)


def test_the_table_maps_no_ascii_code_point() -> None:
    """What translating runs alone relies on: ASCII is its own normal form."""
    assert min(_get_tables().table) >= 0x80


@settings(max_examples=500, deadline=None)
@given(text=_MIXED)
def test_translating_runs_is_translating_every_character(text: str) -> None:
    table = _get_tables().table
    assert _translate(text, table) == text.translate(table)
