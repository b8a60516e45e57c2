"""A line of code, told without a regex search over the whole line: the same answers as the one
search it replaced (kept here as the definition), over lines built from code's own pieces."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from tiers.recognizers._code import _LINE_WINDOW, code_line

# the definition: a keyword or decorator starting a line, or "self." / "cls." after a word's start
_DEFINITION = re.compile(
    r"(?m)^[ \t]*(?:(?:async[ \t]+)?def|class|import|return)\b|^[ \t]*from[ \t]+[\w.]+[ \t]+import\b|^[ \t]*@[a-z]"
    r"|\bself\.|\bcls\."
)
_PIECES = st.sampled_from(
    ["def", "async ", "class", "import", "return", "from", " ", "\t", "\n", "@", "a", "x.y", "self.", "cls.",
     "myself.", "_self.", "self", ".", "Anna Berg", "é", "²", "_", "defs", "returned", "(", ":", "=", "1"]
)  # fmt: skip


@settings(max_examples=3000)
@given(lead=st.sampled_from(["", "a" * 600, " " * 600, "def" * 200, "def " * 150, " " * 600 + "def "]), pieces=st.lists(_PIECES, max_size=24),
       data=st.data())  # fmt: skip
def test_code_line_answers_as_the_search_did(lead: str, pieces: list[str], data: st.DataObject) -> None:
    """Lines short and longer than the window read back from a candidate (then no line start)."""
    text = lead + "".join(pieces)
    start = data.draw(st.integers(0, len(text)))
    # where the scanner reads a line from: after its last break, or a window's length back
    low = max(0, start - _LINE_WINDOW)
    line_start = text.rfind("\n", low, start) + 1 or low
    assert code_line(text, line_start, start) == (_DEFINITION.search(text, line_start, start) is not None)
