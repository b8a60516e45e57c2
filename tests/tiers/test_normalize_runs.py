"""Normalisation looks up only the text's non-ASCII runs, found a chunk at a time (a speed-up,
tiers/normalize.py): the same result as translating every character, on any text, wherever the
chunks' ends fall."""

from __future__ import annotations

from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from tiers import normalize
from tiers.normalize import _get_tables, _non_ascii_runs, _translate, _translate_between, normalize_with_map

# Mostly ASCII with runs of anything, resizing characters (ligatures, format characters, astral
# letters) among them.
_MIXED = st.text(
    alphabet=st.one_of(st.characters(max_codepoint=0x7F), st.characters(), st.sampled_from("ﬁ\u200b\u00adé𝐀٣ｃ")),
    max_size=300,
)


def test_the_table_maps_no_ascii_code_point() -> None:
    """What translating runs alone relies on: ASCII is its own normal form."""
    assert min(_get_tables().table) >= 0x80


@settings(max_examples=300, deadline=None)
@given(text=_MIXED, chunk=st.integers(1, 9))
def test_runs_are_the_maximal_non_ascii_runs_whatever_the_chunk(text: str, chunk: int) -> None:
    with mock.patch.object(normalize, "_CHUNK", chunk):
        runs = _non_ascii_runs(text)
    assert runs == [m.span() for m in normalize._NON_ASCII.finditer(text)]


@settings(max_examples=500, deadline=None)
@given(text=_MIXED)
def test_translating_runs_is_translating_every_character(text: str) -> None:
    table = _get_tables().table
    assert _translate(text, table) == text.translate(table)


@settings(max_examples=300, deadline=None)
@given(text=_MIXED, data=st.data())
def test_translating_a_slice_by_the_runs_is_translating_the_slice(text: str, data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    table = _get_tables().table
    assert _translate_between(text, start, end, _non_ascii_runs(text), table) == text[start:end].translate(table)


@settings(max_examples=300, deadline=None)
@given(text=_MIXED, chunk=st.integers(1, 9))
def test_the_literal_reading_is_the_table_applied_to_every_character(text: str, chunk: int) -> None:
    """Without escapes to decode, the normal form is the per-code-point table, resizing
    characters included, and the map sends every character of it back into the text."""
    with mock.patch.object(normalize, "_CHUNK", chunk):
        norm, offsets = normalize_with_map(text, percent=False)
    assert norm == text.translate(_get_tables().table)
    for i in range(len(norm)):
        s, e = offsets.span(i, i + 1)
        assert 0 <= s < e <= len(text)
