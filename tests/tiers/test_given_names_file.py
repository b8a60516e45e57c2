"""Reading the given-name file (``tiers/recognizers/_given_names.py``): a line's frequency is the
highest of its country columns, whatever characters they hold."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tiers.recognizers._given_names import _HEX, _top_frequency, given_names

_COLUMN = st.sampled_from(" " * 8 + _HEX) | st.characters(codec="utf-8", exclude_categories=("Cs",))


def _by_definition(columns: str) -> int:
    return max((_HEX.index(c) + 1 for c in columns if c in _HEX), default=0)


@settings(max_examples=500, deadline=None)
@given(st.lists(_COLUMN, max_size=55).map("".join))
def test_top_frequency_is_the_highest_column(columns: str) -> None:
    assert _top_frequency(columns) == _by_definition(columns)


def test_the_installed_file_gives_common_names_by_frequency() -> None:
    common = given_names(8)
    assert {"maria", "john", "jurgen"} <= given_names(3)
    assert "maria" in common and common < given_names(3)
