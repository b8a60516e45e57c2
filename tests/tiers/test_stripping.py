"""strip / Restorer / StreamRestorer: consistent placeholders, exact restore, streaming parity."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tiers import Classifier, Content, Decision, Finding, Restorer, StreamRestorer, StripError, Tier

from .conftest import content

TIER2_VALUES = [
    "maria.gonzalez@example.com",
    "ops@corp.example.com",
    "(415) 555-2671",
    "+44 20 7946 0958",
    "10.20.30.40",
    "build-01.corp.example.com",
    "AKIAIOSFODNN7EXAMPLE",
    "ghp_" + "a1B2c3D4e5" * 3 + "f6G7h8",
    "Globex",
    "Wei Zhang",
    "Vandelay Industries",
    "ma\u200bria@exa\u00admple.com",
]
WORDS = ["the", "report", "is", "ready", "ask", "and", "then", "call", "<EMAIL_1>", "x<y", "a > b", "\n", "—", "é"]

tier2_texts = st.lists(st.one_of(st.sampled_from(WORDS), st.sampled_from(TIER2_VALUES)), min_size=1, max_size=14).map(
    " ".join
)


def test_same_value_same_placeholder_across_segments(clf: Classifier) -> None:
    """Within a request, one value gets one placeholder everywhere; different values differ."""
    c = content("mail maria.gonzalez@example.com", "again maria.gonzalez@example.com or olga.petrova@example.org")
    s = clf.strip(c, clf.classify(c))
    assert [seg.text for seg in s.content.segments] == ["mail <EMAIL_1>", "again <EMAIL_1> or <EMAIL_2>"]
    assert s.mapping == {"<EMAIL_1>": "maria.gonzalez@example.com", "<EMAIL_2>": "olga.petrova@example.org"}
    assert [seg.path for seg in s.content.segments] == [seg.path for seg in c.segments]


def test_overlapping_findings_become_one_placeholder(clf: Classifier) -> None:
    """An e-mail on an internal host is one placeholder, not two nested ones."""
    c = content("write to ops@build.corp.example.com now")
    d = clf.classify(c)
    assert {f.entity_type for f in d.findings} == {"EMAIL_ADDRESS", "INTERNAL_HOST"}
    s = clf.strip(c, d)
    assert s.content.segments[0].text == "write to <EMAIL_1> now"


def test_placeholders_already_in_the_text_are_skipped(clf: Classifier) -> None:
    """A literal <EMAIL_1> typed by the user is never reused, so restore cannot change it."""
    text = "template <EMAIL_1> for maria.gonzalez@example.com"
    c = content(text)
    s = clf.strip(c, clf.classify(c))
    assert s.content.segments[0].text == "template <EMAIL_1> for <EMAIL_2>"
    assert Restorer(s.mapping).restore(s.content.segments[0].text) == text


def test_strip_refuses_failed_closed_and_bad_findings(clf: Classifier) -> None:
    """A failed-closed decision or findings outside the content raise StripError."""
    c = content("hello")
    with pytest.raises(StripError):
        clf.strip(c, Decision(Tier.RESTRICTED, failed_closed=True))
    with pytest.raises(StripError):
        clf.strip(c, Decision(Tier.INTERNAL, (Finding("EMAIL_ADDRESS", 0, 3, 99, "x"),)))
    with pytest.raises(StripError):
        clf.strip(c, Decision(Tier.INTERNAL, (Finding("EMAIL_ADDRESS", 4, 0, 1, "x"),)))


def test_stream_restorer_holds_back_only_a_possible_placeholder() -> None:
    """Text is released as soon as it cannot be part of a placeholder; a cut one waits."""
    sr = StreamRestorer({"<EMAIL_1>": "a@b.co"})
    assert sr.feed("Hello <EM") == "Hello "
    assert sr.feed("AIL_1> and <b>") == "a@b.co and <b>"
    assert sr.feed(" x <") == " x "
    assert sr.flush() == "<"
    assert StreamRestorer({}).feed("<EMAIL_1") == "<EMAIL_1"


_settings = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@_settings
@given(tier2_texts)
def test_restore_of_strip_is_identity(clf: Classifier, text: str) -> None:
    """restore(strip(x)) == x when the model echoes the placeholders."""
    c = content(text)
    s = clf.strip(c, clf.classify(c))
    assert Restorer(s.mapping).restore(s.content.segments[0].text) == text


@_settings
@given(tier2_texts)
def test_strip_is_idempotent_and_lowers_tier2_to_tier1(clf: Classifier, text: str) -> None:
    """Stripped Tier-2 text classifies as Tier 1, and stripping it again changes nothing."""
    c = content(text)
    d = clf.classify(c)
    assert d.tier <= Tier.INTERNAL
    once = clf.strip(c, d)
    d2 = clf.classify(once.content)
    assert d2.tier == Tier.GENERAL, d2.reasons
    twice = clf.strip(once.content, d2)
    assert twice.content == once.content and twice.mapping == {}


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(st.sampled_from(["<EMAIL_1>", "<PHONE_12>", "<", "<EMAIL_", ">", "_1>"]), st.text(max_size=6)),
        max_size=12,
    ).map("".join),
    st.lists(st.integers(min_value=0, max_value=80), max_size=8),
)
def test_stream_restorer_matches_whole_text_restorer(answer: str, cuts: list[int]) -> None:
    """For every chunking, concatenated streamed output equals restoring the whole answer."""
    mapping = {"<EMAIL_1>": "maria@example.com", "<PHONE_12>": "(415) 555-2671"}
    points = sorted({min(c, len(answer)) for c in cuts})
    chunks = [answer[a:b] for a, b in zip([0, *points], [*points, len(answer)])]
    sr = StreamRestorer(mapping)
    out = "".join(sr.feed(ch) for ch in chunks) + sr.flush()
    assert out == Restorer(mapping).restore(answer)


def test_stripped_content_applies_back_to_the_body(clf: Classifier) -> None:
    """The stripped content written back with apply_content leaves no identifier in the body."""
    from tiers import apply_content, extract_content

    body = {"messages": [{"role": "user", "content": [{"type": "text", "text": "mail maria.gonzalez@example.com"}]}]}
    c = extract_content("chat", body)
    s = clf.strip(c, clf.classify(c))
    new = apply_content(body, s.content)
    assert new["messages"][0]["content"][0]["text"] == "mail <EMAIL_1>"
    assert isinstance(s.content, Content)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.one_of(st.text(max_size=30), st.sampled_from(TIER2_VALUES + ["4556 0172 8390 6414"])), max_size=8).map(
        "".join
    )
)
def test_arbitrary_unicode_never_crashes(clf: Classifier, text: str) -> None:
    """Any text (random Unicode around identifiers) classifies without failing closed, and the
    strip/restore round trip is exact."""
    c = content(text)
    d = clf.classify(c)
    assert not d.failed_closed, d.reasons
    s = clf.strip(c, d)
    assert Restorer(s.mapping).restore(s.content.segments[0].text) == text
