"""Admission decisions at the engine front (pure: no vLLM)."""

from __future__ import annotations

import pytest

from engine.admission import AdmissionError, admit, prepare_body
from engine.counting import tokenize_request

CHAT = {
    "model": "m",
    "messages": [{"role": "user", "content": "hi"}],
    "cache_salt": "s",
}


def test_truncation_params_are_dropped_and_reported() -> None:
    """truncate_prompt_tokens / truncation_side never reach vLLM; the drop is reported."""
    body, dropped = prepare_body(
        {**CHAT, "truncate_prompt_tokens": 5, "truncation_side": "left"},
        chat=True,
        require_salt=True,
        derived_salt=None,
    )
    assert "truncate_prompt_tokens" not in body and "truncation_side" not in body
    admitted = admit(body, dropped, 10, 100)
    assert admitted.headers()["X-Tiergate-Dropped-Params"] == "truncate_prompt_tokens,truncation_side"


def test_salt_required_or_derived() -> None:
    """Without a salt the request is refused; a derived salt overwrites the client's."""
    no_salt = {k: v for k, v in CHAT.items() if k != "cache_salt"}
    with pytest.raises(AdmissionError) as info:
        prepare_body(no_salt, chat=True, require_salt=True, derived_salt=None)
    assert (info.value.status_code, info.value.code) == (400, "cache_salt_required")
    body, _ = prepare_body(
        {**CHAT, "cache_salt": "client-chosen"},
        chat=True,
        require_salt=True,
        derived_salt="derived",
    )
    assert body["cache_salt"] == "derived"


@pytest.mark.parametrize(
    "body",
    [
        [1, 2],
        {"model": "m", "messages": []},
        {"model": "m", "prompt": ["a", "b"], "cache_salt": "s"},
        {"model": "m", "prompt": [], "cache_salt": "s"},
        {**CHAT, "max_tokens": -1},
        {**CHAT, "max_tokens": True},
    ],
)
def test_malformed_bodies_are_400(body: object) -> None:
    """Non-objects, empty messages, batch prompts and bad max_tokens are refused with 400."""
    chat = isinstance(body, dict) and "messages" in body
    with pytest.raises(AdmissionError) as info:
        prepare_body(body, chat=chat, require_salt=True, derived_salt=None)
    assert info.value.status_code == 400


def test_over_long_boundary() -> None:
    """limit-1 prompt tokens pass (one output token fits); the limit itself is refused."""
    assert admit(dict(CHAT), (), 99, 100).prompt_tokens == 99
    with pytest.raises(AdmissionError) as info:
        admit(dict(CHAT), (), 100, 100)
    assert info.value.code == "context_length_exceeded"


def test_max_tokens_clamped_and_reported() -> None:
    """max_tokens above the room left is lowered to fit and the change is in the headers."""
    a = admit({**CHAT, "max_tokens": 500}, (), 90, 100)
    assert a.body["max_tokens"] == 10 and a.clamped
    assert a.headers()["X-Tiergate-Max-Tokens-Clamped"] == "500->10"
    b = admit({**CHAT, "max_completion_tokens": 50, "max_tokens": 40}, (), 90, 100)
    assert (b.body["max_completion_tokens"], b.body["max_tokens"]) == (10, 10)
    c = admit({**CHAT, "max_tokens": 5}, (), 90, 100)
    assert not c.clamped and "X-Tiergate-Max-Tokens-Clamped" not in c.headers()
    with pytest.raises(AdmissionError):
        admit({**CHAT, "min_tokens": 11}, (), 90, 100)


def test_tokenize_request_mirrors_the_prompt() -> None:
    """Chat counts go through messages with the generation prompt; token-id prompts need no call."""
    tok = tokenize_request({**CHAT, "tools": [{"type": "function"}]}, chat=True)
    assert tok is not None and tok["add_generation_prompt"] is True and "tools" in tok
    assert tokenize_request({"model": "m", "prompt": [1, 2, 3]}, chat=False) is None
    assert tokenize_request({"model": "m", "prompt": "abc"}, chat=False) == {
        "model": "m",
        "prompt": "abc",
    }
