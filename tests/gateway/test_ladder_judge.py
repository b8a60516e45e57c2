"""How one rung answer is judged, as a property over answers built from markers and usages."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.probe import new_marker
from gateway.probes.ladder import _judge
from gateway.probes.synthetic import ladder_prompt
from gateway.tokens import EstimateCounter

PROMPT, _ = ladder_prompt(EstimateCounter(), 2000)
OTHER = [new_marker() for _ in range(3)]


@settings(max_examples=300, deadline=None)
@given(own=st.sets(st.sampled_from(["start", "middle", "end"])), others=st.sets(st.sampled_from(OTHER)),
       elsewhere=st.booleans(), usage=st.one_of(st.none(), st.integers(0, 10_000)),
       finish=st.sampled_from(["stop", "length"]), chatter=st.booleans())  # fmt: skip
def test_reasons_follow_from_the_answer(own: set[str], others: set[str], elsewhere: bool, usage: int | None,
                                        finish: str, chatter: bool) -> None:  # fmt: skip
    """crossed iff another marker appears anywhere; echo_missing iff start or end is absent from a
    non-empty answer; the usage band as in production; empty answers named by finish_reason."""
    markers = [getattr(PROMPT, m) for m in sorted(own)]
    content = " ".join(markers + ([] if elsewhere else sorted(others)) + (["sure"] if chatter else []))
    body: dict = {"choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                               "finish_reason": finish}]}  # fmt: skip
    if usage is not None:
        body["usage"] = {"prompt_tokens": usage}
    if elsewhere and others:
        body["system_fingerprint"] = " ".join(sorted(others))  # a leak outside the message counts too
    result = _judge(0, 0, PROMPT, json.dumps(body).encode(), promised=True, require_echo=True)
    reasons = set(result.reasons)
    assert ("crossed" in reasons) == bool(others)
    count = PROMPT.count
    if usage is None:
        assert "usage_missing" in reasons
    else:
        assert ("prompt_tokens_low" in reasons) == (usage < count.lower)
        assert ("prompt_tokens_high" in reasons) == (usage > count.upper)
    if not content.strip():
        assert reasons & {"empty", "empty_length"} == {"empty_length" if finish == "length" else "empty"}
        assert "echo_missing" not in reasons
    else:
        assert ("echo_missing" in reasons) == (not {"start", "end"} <= own)
    assert (result.outcome == "passed") == (not reasons)
    assert result.reported_tokens == usage


def test_a_malformed_answer_is_an_error() -> None:
    result = _judge(0, 0, PROMPT, b"{not json " + PROMPT.start.encode(), promised=True, require_echo=False)
    assert result.outcome == "failed" and result.reasons == ("error",) and result.error == "MalformedAnswer"
