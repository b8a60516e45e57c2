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

_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyzäöüéß", min_size=12, max_size=30)


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
    assert "Segment(path=('messages', 0, 'content')" in shown  # the shape is still there
