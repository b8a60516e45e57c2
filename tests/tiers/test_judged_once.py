"""A value's own checks are made once per recognizer and scan, its surroundings at every place.

A table repeats its cells: a column of 300,000 judged one by one cost 40 times plain prose. The
scanner keeps what a recognizer's ``refine_span``, ``validate_result`` and ``invalidate_result``
said of a value for the rest of the scan; ``reject_at`` still looks at every place, since whether
a value counts there depends on what is around it.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st
from presidio_analyzer import Pattern

from tiers.recognizers._base import TiersPatternRecognizer
from tiers.scanner import Scanner


class _Counting(TiersPatternRecognizer):
    ENTITY = "CODE"
    PATTERNS = [Pattern("code", r"\b[A-Z]{2}-[0-9]{3}\b", 0.9)]

    def __init__(self) -> None:
        super().__init__()
        self.values: Counter[str] = Counter()
        self.places = 0

    def validate_result(self, pattern_text: str) -> bool | None:
        self.values[pattern_text] += 1
        return not pattern_text.endswith("000")  # "AB-000" is none

    def reject_at(self, text: str, start: int, end: int) -> bool:
        self.places += 1
        return text[max(0, start - 6) : start].rstrip(" [").endswith("not")  # "not AB-123" is none


class _Narrowing(_Counting):
    PATTERNS = [Pattern("code", r"\[[A-Z]{2}-[0-9]{3}\]", 0.9)]

    def refine_span(self, text: str) -> tuple[int, int] | None:
        self.values[text] += 1
        return None if text.endswith("000]") else (1, len(text) - 1)


_codes = st.sampled_from(["AB-123", "AB-000", "XY-987", "QQ-555"])
_items = st.lists(st.tuples(st.sampled_from(["", "not ", "see ", "\n"]), _codes), min_size=1, max_size=60)


@settings(max_examples=100, deadline=None)
@given(items=_items, bracketed=st.booleans())
def test_each_value_is_judged_once_and_each_place_looked_at(items: list[tuple[str, str]], bracketed: bool) -> None:
    rec = _Narrowing() if bracketed else _Counting()
    scanner = Scanner([rec], min_score=0.5, context_window=50)
    text = " ".join(lead + (f"[{code}]" if bracketed else code) for lead, code in items)
    hits = scanner.scan(text, lambda: None)
    # what it finds is what judging every place anew finds
    expected = [
        (text.index(code, at), text.index(code, at) + len(code))
        for at, (lead, code) in _places(text, items, bracketed)
        if not code.endswith("000") and lead != "not "
    ]
    assert [(h.start, h.end) for h in hits] == expected
    # each distinct value judged once; every place whose value passed looked around once
    assert rec.values == Counter({(f"[{c}]" if bracketed else c): 1 for _, c in items})
    assert rec.places == sum(1 for _, c in items if not c.endswith("000"))


def _places(text: str, items: list[tuple[str, str]], bracketed: bool) -> list[tuple[int, tuple[str, str]]]:
    out = []
    at = 0
    for lead, code in items:
        written = lead + (f"[{code}]" if bracketed else code)
        at = text.index(written, at)
        out.append((at + len(lead), (lead, code)))
        at += len(written)
    return out
