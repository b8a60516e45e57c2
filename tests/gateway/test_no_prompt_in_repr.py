"""No prompt text in a repr: reprs land in logs and tracebacks (asyncio writes a finished task's
result into the task's own repr, and a failed task's repr is logged), and building one of a whole
3 MB prompt cost the gateway ≈ 0.1 s per request in a benchmark. Every value object a request's
text passes through — the parsed body, its segments, the stripped copy and the values it
replaced — shows its shape, never the text."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.classify import ClassifyStep
from tiers.types import Tier

# a letter outside ASCII in every word: hypothesis also draws the code's own string constants, and
# "authorizatio" (of the settings' ``auth_header='authorization'``) is in a repr as a field's name
_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyzäöüéß", min_size=12, max_size=30).filter(lambda w: not w.isascii())


@settings(max_examples=60, deadline=None)
@given(word=_WORD, user=st.from_regex(r"[a-z]{6,12}", fullmatch=True))
def test_no_repr_on_the_way_holds_the_prompt_or_a_stripped_value(classifier: Any, word: str, user: str) -> None:
    email = f"{user}@customer-{user}.com"
    text = f"Please review {word} and reply to {email} before Friday."
    raw = json.dumps({"model": "m", "messages": [{"role": "user", "content": text}], "user": word}).encode()
    step = ClassifyStep(classifier, fingerprint_key=b"k" * 32, offload_bytes=1 << 30, timeout_s=10, processes=False)
    done = step.work("chat", raw, "acme", Tier.GENERAL, strip=True)
    assert done.stripped is not None and email in done.stripped.mapping.values()  # it was found
    shown = repr(done)
    assert word not in shown and email not in shown
    assert "Segment(prompt=True, kind='text')" in shown  # the shape is still there


@settings(max_examples=40, deadline=None)
@given(word=_WORD, user=st.from_regex(r"[a-z]{6,12}", fullmatch=True))
def test_no_repr_holds_an_object_key_or_a_data_uri_header(classifier: Any, word: str, user: str) -> None:
    """An object's keys are request text too (read and stripped like any value), and every path
    below one holds it, as a data-URI's header holds its parameters: a path's repr is text."""
    email = f"{user}@customer-{user}.com"
    part = f"data:text/plain;name={word};base64,aGVsbG8gd29ybGQ="
    body = {"model": "m", "messages": [{"role": "user", "content": part}], "metadata": {email: {word: "x"}}}
    step = ClassifyStep(classifier, fingerprint_key=b"k" * 32, offload_bytes=1 << 30, timeout_s=10, processes=False)
    done = step.work("chat", json.dumps(body).encode(), "acme", Tier.GENERAL, strip=True)
    assert done.stripped is not None and email in done.stripped.mapping.values()  # it was found
    shown = repr(done)
    assert word not in shown and email not in shown
    assert "Segment(prompt=False, kind='key')" in shown  # the shape is still there


@settings(max_examples=30, deadline=None)
@given(word=_WORD, user=st.from_regex(r"[a-z]{6,12}", fullmatch=True))
def test_no_repr_of_what_is_sent_or_answered_holds_the_prompt(classifier: Any, word: str, user: str) -> None:
    """The request context carries the inbound body, the outbound one and the values stripped from
    it (``Outbound.mapping``), and a reply's body is the answer with those values put back."""
    from datetime import UTC, datetime

    from gateway.outbound import build_outbound
    from gateway.pipeline import Inbound, Reply
    from gateway.protocols import PROTOCOLS
    from gateway.routing import Candidate
    from gateway.settings import UpstreamSettings
    from gateway.tokens import EstimateCounter

    email = f"{user}@customer-{user}.com"
    text = f"Please review {word} and reply to {email} before Friday."
    body = {"model": "m", "messages": [{"role": "user", "content": text}]}
    step = ClassifyStep(classifier, fingerprint_key=b"k" * 32, offload_bytes=1 << 30, timeout_s=10, processes=False)
    done = step.work("chat", json.dumps(body).encode(), "acme", Tier.GENERAL, strip=True)
    upstream = UpstreamSettings(name="vendor", base_url="http://vendor.test", kind="shared", models={"m": "m"})
    out = build_outbound(
        Candidate(upstream, "m", must_strip=True), endpoint="chat", body=done.parsed.body, content=done.content,
        decision=done.decision, strip=None, counter=EstimateCounter(), tenant="acme", salt_key=b"s" * 32,
        stream=False, stripped=done.stripped,
    )  # fmt: skip
    assert email in out.mapping.values() and word.encode() in out.body  # stripped, and sent
    inbound = Inbound("r1", "chat", body, "m", False, datetime.now(UTC), 0.0, PROTOCOLS["chat"], {})
    shown = repr((out, inbound, Reply(200, {"choices": [{"message": {"content": text}}]})))
    assert word not in shown and email not in shown
