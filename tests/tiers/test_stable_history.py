"""Byte-stable history: stripping is a pure function of the conversation read in order, so a
conversation that only grows keeps every placeholder it already had."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tiers import Classifier, Content, Restorer, Segment

from .conftest import content

PEOPLE = [
    "maria.gonzalez@example.com",
    "olga.petrova@example.org",
    "wei.zhang@example.net",
    "(415) 555-2671",
    "10.20.30.40",
]
WORDS = ["see", "mail", "and", "<EMAIL_1>", "<EMAIL_2>", "<PHONE_1>", "the log", "x<y"]
turn_texts = st.lists(st.one_of(st.sampled_from(PEOPLE), st.sampled_from(WORDS)), min_size=1, max_size=6).map(" ".join)


def _strip(clf: Classifier, c: Content) -> tuple[list[str], dict[str, str]]:
    d = clf.classify(c)
    if not d.findings:
        return [s.text for s in c.segments], {}
    s = clf.strip(c, d)
    return [seg.text for seg in s.content.segments], s.mapping


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(turn_texts, min_size=2, max_size=10))
def test_a_prefix_strips_the_same_alone_and_within_the_longer_conversation(clf: Classifier, turns: list[str]) -> None:
    """What segment i becomes depends on segments 0..i only; restore stays exact, literals too."""
    whole, mapping = _strip(clf, content(*turns))
    for n in range(1, len(turns)):
        prefix, _ = _strip(clf, content(*turns[:n]))
        assert prefix == whole[:n]
    restorer = Restorer(mapping)
    assert [restorer.restore(t) for t in whole] == turns


def test_ten_turns_keep_their_placeholders_with_a_new_identifier_from_the_model(clf: Classifier) -> None:
    """Ten turns of a conversation resent whole: each turn's stripped history equals the previous
    turn's stripped request; the identifier the model itself brought up at turn 4 gets the next
    number and keeps it; a literal placeholder typed later never restores to a value."""
    history: list[str] = []
    seen: list[list[str]] = []
    for turn in range(10):
        history.append(
            f"turn {turn}: write to maria.gonzalez@example.com" + (" and olga.petrova@example.org" if turn > 1 else "")
        )
        if turn == 7:
            history[-1] += " (template <EMAIL_1>)"
        stripped, mapping = _strip(clf, content(*history))
        if seen:
            assert stripped[: len(seen[-1])] == seen[-1]
        seen.append(stripped)
        # The model's answer, restored for the client and resent next turn.
        answer = "noted <EMAIL_1>" + (" and also wei.zhang@example.net" if turn == 4 else "")
        history.append(Restorer(mapping).restore(answer))
    final, mapping = _strip(clf, content(*history))
    assert final[0] == "turn 0: write to <EMAIL_1>"
    assert "<EMAIL_2>" in final[4] and final[9].endswith("and also <EMAIL_3>")
    assert mapping["<EMAIL_3>"] == "wei.zhang@example.net"
    typed = next(t for t in final if "template" in t)
    assert "template <LITERAL_1>" in typed and mapping["<LITERAL_1>"] == "<EMAIL_1>"


def test_vendor_state_takes_no_number_and_is_never_rewritten(clf: Classifier) -> None:
    """A thinking block holding the vendor's copy of <EMAIL_1> does not push the identifier to
    <EMAIL_2> (which would rewrite the history the vendor signed)."""
    c = Content((Segment(("messages", 0, "content"), "mail maria.gonzalez@example.com"),
                 Segment(("messages", 1, "content", 0, "thinking"), "they mean <EMAIL_1>", False, kind="state"),
                 Segment(("messages", 2, "content"), "again maria.gonzalez@example.com")))  # fmt: skip
    texts, _ = _strip(clf, c)
    assert texts == ["mail <EMAIL_1>", "they mean <EMAIL_1>", "again <EMAIL_1>"]
