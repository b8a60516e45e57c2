"""Admission of one generation request at the engine front: pure decisions, no I/O.

- Client truncation parameters (``engine.counting.TRUNCATION_KEYS``) are removed: vLLM would
  otherwise keep the *last* N tokens of an over-long prompt and answer 200.
- A prompt that leaves no room for one output token is refused with an explicit 400.
- ``max_tokens`` / ``max_completion_tokens`` beyond the room left are lowered to fit, and the
  change is reported (response header ``X-Tiergate-Max-Tokens-Clamped: requested->effective``).
- ``cache_salt`` is required, or derived from the tenant header, according to the config.
- Batch prompts (a list of prompts) are refused: one request, one prompt, one length check.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.counting import RESPONSES_TRUNCATION_KEY, TRUNCATION_KEYS

__all__ = [
    "AdmissionError",
    "Admitted",
    "admit",
    "completion_prompt_tokens",
    "prepare_body",
    "prepare_messages",
    "prepare_responses",
]


class AdmissionError(Exception):
    """A request the engine front refuses; ``code`` is the OpenAI error code."""

    def __init__(self, message: str, *, status_code: int = 400, code: str = "invalid_request") -> None:
        super().__init__(message)
        self.status_code = status_code
        self.code = code


@dataclass(frozen=True, slots=True)
class Admitted:
    """A request that may go to vLLM, as it will be sent, with what admission changed."""

    body: dict[str, Any]
    prompt_tokens: int
    dropped: tuple[str, ...]  # truncation parameters removed
    max_tokens_requested: int | None
    max_tokens_effective: int | None

    @property
    def clamped(self) -> bool:
        return self.max_tokens_requested != self.max_tokens_effective

    def headers(self) -> dict[str, str]:
        out = {"X-Tiergate-Prompt-Tokens": str(self.prompt_tokens)}
        if self.clamped:
            out["X-Tiergate-Max-Tokens-Clamped"] = f"{self.max_tokens_requested}->{self.max_tokens_effective}"
        if self.dropped:
            out["X-Tiergate-Dropped-Params"] = ",".join(self.dropped)
        return out


def prepare_body(
    body: object, *, chat: bool, require_salt: bool, derived_salt: str | None
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Validate the shape, drop truncation params, apply the salt policy; no token counts yet."""
    if not isinstance(body, dict):
        raise AdmissionError("request body must be a JSON object")
    out = dict(body)
    dropped = tuple(k for k in TRUNCATION_KEYS if k in out)
    for key in dropped:
        del out[key]
    if chat:
        if not isinstance(out.get("messages"), list) or not out["messages"]:
            raise AdmissionError("messages must be a non-empty list")
    else:
        prompt = out.get("prompt")
        if not (isinstance(prompt, str) or _is_token_list(prompt)):
            raise AdmissionError("prompt must be one string or one list of token ids")
    if derived_salt is not None:
        out["cache_salt"] = derived_salt
    elif require_salt and not (isinstance(out.get("cache_salt"), str) and out["cache_salt"]):
        raise AdmissionError("cache_salt is required by this engine", code="cache_salt_required")
    for key in ("max_tokens", "max_completion_tokens", "min_tokens"):
        value = out.get(key)
        if value is not None and (type(value) is not int or value < 0):
            raise AdmissionError(f"{key} must be a non-negative integer")
    return out, dropped


def prepare_messages(
    body: object, *, require_salt: bool, derived_salt: str | None, count_only: bool = False
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The same admission for an Anthropic Messages body (``/v1/messages``, which vLLM 0.32
    serves natively, and its ``count_tokens``): shape, truncation params, salt policy."""
    if not isinstance(body, dict):
        raise AdmissionError("request body must be a JSON object")
    if not isinstance(body.get("messages"), list) or not body["messages"]:
        raise AdmissionError("messages must be a non-empty list")
    tokens = body.get("max_tokens")
    if not count_only and (type(tokens) is not int or tokens < 1):
        raise AdmissionError("max_tokens must be a positive integer")
    out = dict(body)
    dropped = tuple(k for k in TRUNCATION_KEYS if k in out)
    for key in dropped:
        del out[key]
    if count_only:  # counting renders the prompt, it never touches the prefix cache
        out.pop("cache_salt", None)
    elif derived_salt is not None:
        out["cache_salt"] = derived_salt
    elif require_salt and not (isinstance(out.get("cache_salt"), str) and out["cache_salt"]):
        raise AdmissionError("cache_salt is required by this engine", code="cache_salt_required")
    return out, dropped


def prepare_responses(
    body: object, *, require_salt: bool, derived_salt: str | None
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The same admission for an OpenAI Responses body (``/v1/responses``): shape, truncation
    (``truncation: auto`` would let vLLM drop input too), salt policy; ``max_output_tokens`` is
    what :func:`admit` clamps (passed as ``limit_key``)."""
    if not isinstance(body, dict):
        raise AdmissionError("request body must be a JSON object")
    if not (isinstance(body.get("input"), str) or (isinstance(body.get("input"), list) and body["input"])):
        raise AdmissionError("input must be a string or a non-empty list of items")
    if body.get("previous_response_id") is not None or body.get("conversation") is not None:
        raise AdmissionError("previous_response_id is not admitted: the whole conversation must be read and counted")
    out = dict(body)
    dropped = tuple(k for k in (*TRUNCATION_KEYS, RESPONSES_TRUNCATION_KEY) if k in out)
    for key in dropped:
        del out[key]
    if derived_salt is not None:
        out["cache_salt"] = derived_salt
    elif require_salt and not (isinstance(out.get("cache_salt"), str) and out["cache_salt"]):
        raise AdmissionError("cache_salt is required by this engine", code="cache_salt_required")
    value = out.get("max_output_tokens")
    if value is not None and (type(value) is not int or value < 1):
        raise AdmissionError("max_output_tokens must be a positive integer")
    return out, dropped


def _is_token_list(value: object) -> bool:
    return isinstance(value, list) and bool(value) and all(type(t) is int for t in value)


def completion_prompt_tokens(body: dict[str, Any]) -> int | None:
    """Token count of a completions prompt given as token ids; None for text."""
    prompt = body.get("prompt")
    return len(prompt) if isinstance(prompt, list) else None


def admit(
    body: dict[str, Any],
    dropped: tuple[str, ...],
    prompt_tokens: int,
    max_model_len: int,
    limit_key: str | None = None,
) -> Admitted:
    """Length decisions: over-long -> 400; ``max_tokens`` over the room left -> clamped, reported.
    ``limit_key`` names the output limit where it is not max_tokens (Responses: max_output_tokens)."""
    room = max_model_len - prompt_tokens
    if room < 1:
        raise AdmissionError(
            f"prompt is {prompt_tokens} tokens; this engine's context is {max_model_len} tokens "
            "including at least one output token",
            code="context_length_exceeded",
        )
    out = dict(body)
    key = limit_key or ("max_completion_tokens" if out.get("max_completion_tokens") is not None else "max_tokens")
    requested = out.get(key)
    effective = requested
    if requested is not None and requested > room:
        effective = room
        out[key] = room
        if key == "max_completion_tokens" and out.get("max_tokens") is not None:
            out["max_tokens"] = min(out["max_tokens"], room)
    min_tokens = out.get("min_tokens")
    if min_tokens is not None and min_tokens > room:
        raise AdmissionError(
            f"min_tokens {min_tokens} exceeds the {room} tokens left after the prompt",
            code="context_length_exceeded",
        )
    return Admitted(out, prompt_tokens, dropped, requested, effective)
