"""The scanner's raw RE2 matcher: on for the tested google-re2, equal to the public path."""

from __future__ import annotations

import types

import re2
from hypothesis import given, settings
from hypothesis import strategies as st

from tiers import _re2_raw


def test_the_installed_google_re2_is_the_tested_minor_and_the_raw_path_is_on() -> None:
    """An upgrade past the pin, or a binding that changed, shows here, not as a slower scanner."""
    assert _re2_raw.RAW_UNAVAILABLE is None


def test_a_binding_without_the_private_matcher_is_refused() -> None:
    assert "not there" in (_re2_raw._probe(types.SimpleNamespace(compile=re2.compile)) or "")
    wrong = types.SimpleNamespace(
        _Anchor=re2._Anchor,
        compile=lambda _p: types.SimpleNamespace(_regexp=types.SimpleNamespace(Match=lambda *a: [(0, 0)] * 3)),
    )
    assert "answered" in (_re2_raw._probe(wrong) or "")


_ATOMS = st.sampled_from(["a", "b", "é", "ß", "1", r"\d", r"\w", ".", "[ab]", "x?", "(a)", "(é+)", "(b|1)"])
_PATTERNS = st.lists(_ATOMS, min_size=1, max_size=5).map("".join)
_TEXT = st.text(alphabet="ab1éß x", max_size=30)


@settings(max_examples=300, deadline=None)
@given(pattern=_PATTERNS, text=_TEXT, data=st.data())
def test_raw_and_public_matchers_give_the_same_spans(pattern: str, text: str, data: st.DataObject) -> None:
    rx = re2.compile(pattern)
    subject = text.encode("utf-8")
    pos = data.draw(st.integers(0, len(subject)))
    endpos = data.draw(st.integers(pos, len(subject)))
    raw = _re2_raw.spans_of(rx, raw=True)(subject, pos, endpos)
    public = _re2_raw.spans_of(rx, raw=False)(subject, pos, endpos)
    assert [tuple(s) for s in raw] == [tuple(s) for s in public]
