"""The scanner maps RE2's byte offsets back to character offsets (tiers/scanner.py, _CharIndex):
every character boundary of any UTF-8 text, wherever the chunks' ends fall."""

from __future__ import annotations

from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from tiers import scanner

_TEXT = st.text(alphabet=st.one_of(st.characters(max_codepoint=0x7F), st.characters(exclude_categories=("Cs",))))


@settings(max_examples=400, deadline=None)
@given(text=_TEXT, chunk=st.integers(1, 9))
def test_every_characters_byte_offset_maps_to_its_index(text: str, chunk: int) -> None:
    data = text.encode("utf-8")
    with mock.patch.object(scanner, "_CHUNK", chunk):
        to_char = scanner._CharIndex(data)
    offset = 0
    for i, ch in enumerate(text):
        assert to_char(offset) == i
        offset += len(ch.encode("utf-8"))
    assert to_char(len(data)) == len(text)


@settings(max_examples=300, deadline=None)
@given(
    ascii_text=st.text(alphabet=st.characters(max_codepoint=0x7F), min_size=200, max_size=600),
    others=st.lists(
        st.tuples(st.integers(0, 600), st.characters(min_codepoint=0x80, exclude_categories=("Cs",))), max_size=3
    ),
    chunk=st.integers(1, 64),
)
def test_a_few_non_ascii_characters_are_counted_by_their_list(
    ascii_text: str, others: list[tuple[int, str]], chunk: int
) -> None:
    """Mostly ASCII text, the common case, takes the sparse path and maps the same."""
    text = ascii_text
    for at, ch in others:
        text = text[:at] + ch + text[at:]
    with mock.patch.object(scanner, "_CHUNK", chunk):
        to_char = scanner._CharIndex(text.encode("utf-8"))
    assert to_char._continuations is not None
    offset = 0
    for i, ch in enumerate(text):
        assert to_char(offset) == i
        offset += len(ch.encode("utf-8"))
    assert to_char(offset) == len(text)
