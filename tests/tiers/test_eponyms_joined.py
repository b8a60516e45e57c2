"""Hyphenated eponyms' search (``tiers/recognizers/_eponyms.py``): the boundary checks on each
match give exactly the spans of the definition with look-arounds, on texts built of the
characters that decide it (letters of both cases, hyphens, the refused neighbours, spaces,
non-ASCII letters) and of real names."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from tiers.recognizers._eponyms import joined_names

# the definition: a name not preceded by a word's, a path's or a compound's character, nor followed by one
_DEFINITION = re.compile(r"(?<![A-Za-z0-9_.'’/-])[A-Z][a-z]{1,30}(?:-[A-Z][a-z]{1,30}){1,3}(?![A-Za-z0-9_-])")

# every character whose place next to a name decides, and some that do not
_NEIGHBOURS = "ABZabz09_.'’/- \n(),;:é"
_WORD = st.builds(
    lambda first, rest: first + rest,
    st.sampled_from("AHKZ"),
    st.text(alphabet="abkz", min_size=0, max_size=32),
)
_NAME = st.lists(_WORD, min_size=1, max_size=5).map("-".join)
_PIECES = st.one_of(
    st.tuples(st.text(alphabet=_NEIGHBOURS, max_size=2), _NAME).map("".join),
    st.text(alphabet=_NEIGHBOURS, max_size=3),
)


@settings(max_examples=2000)
@given(st.lists(_PIECES, max_size=30).map("".join))
def test_the_same_spans_as_the_definition(text: str) -> None:
    assert list(joined_names(text)) == [m.span() for m in _DEFINITION.finditer(text)]


def test_names_at_the_edges_and_inside_words() -> None:
    text = "Held-Karp x.Held-Karp Held-Karp- aHeld-Karp Aa-Bb-Cc-Dd-Ee Denman-Beavers"
    assert [text[s:e] for s, e in joined_names(text)] == ["Held-Karp", "Denman-Beavers"]
