"""Never trust a 200: does the upstream's answer show it processed the prompt it was sent?

Three signals, each cheap and each seen in the field (see ``reliability.md``):

* ``usage.prompt_tokens`` far below our own count — the prompt was truncated or replaced by a
  one-token placeholder, and decoding ran over someone else's KV;
* far above — the answer was computed over more than our prompt;
* an empty answer with ``finish_reason: length`` on a non-trivial prompt.

A missing ``usage`` counts when the upstream promises it. The functions are pure; the pipeline
turns a reason into a 502 ``upstream_integrity_error``, an audit flag and a metric.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gateway.tokens import PromptCount

__all__ = ["TRIVIAL_TOKENS", "check_answer", "check_usage", "reported_prompt_tokens"]

# Below this many tokens of our own count a short answer or odd usage proves nothing.
TRIVIAL_TOKENS = 8


def reported_prompt_tokens(usage: Any) -> int | None:
    if not isinstance(usage, dict):
        return None
    value = usage.get("prompt_tokens")
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value


def check_usage(count: PromptCount, usage: Any, *, promised: bool) -> str | None:
    """Return the failure reason, or None when the reported usage is plausible."""
    reported = reported_prompt_tokens(usage)
    if reported is None:
        return "usage_missing" if promised else None
    if count.tokens >= TRIVIAL_TOKENS and reported < count.lower:
        return "prompt_tokens_low"
    if reported > count.upper:
        return "prompt_tokens_high"
    return None


def _choice_is_empty(choice: dict[str, Any]) -> bool:
    if "text" in choice:  # /v1/completions
        return not choice.get("text")
    message = choice.get("message") or choice.get("delta") or {}
    return not message.get("content") and not message.get("tool_calls") and not message.get("function_call")


def check_answer(count: PromptCount, choices: Iterable[dict[str, Any]]) -> str | None:
    """An empty answer cut off by ``length`` on a real prompt: the vLLM #525 symptom."""
    if count.tokens < TRIVIAL_TOKENS:
        return None
    for choice in choices:
        if choice.get("finish_reason") == "length" and _choice_is_empty(choice):
            return "empty_length"
    return None
