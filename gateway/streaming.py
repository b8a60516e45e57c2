"""SSE relay: restore placeholders chunk by chunk, check usage at the end, never fake a finish.

The relay passes content deltas on as they arrive (placeholders split across chunks are held only
as long as a prefix of one could still be forming). Events carrying a ``finish_reason`` and the
usage event are held back until the upstream's ``[DONE]``: only when the stream is whole and the
integrity check passes does the client get them and its own ``[DONE]``. Otherwise the client's
stream ends with an error event, so no client ever sees a stream that looks complete when it is not.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import msgspec

from audit.types import OutcomeKind
from gateway.errors import UpstreamError, UpstreamTimeout
from gateway.integrity import check_answer, check_usage, reported_prompt_tokens
from gateway.restore import Restorers
from gateway.tokens import PromptCount
from gateway.upstream import StreamTooLong, UpstreamResponse

__all__ = ["StreamResult", "relay_sse"]

_json = msgspec.json.Encoder()
_decode = msgspec.json.Decoder()


@dataclass(frozen=True, slots=True)
class StreamResult:
    """How the relay ended; the pipeline records it as the request's outcome."""

    status: OutcomeKind  # OK, INTEGRITY_ERROR, UPSTREAM_ERROR, TIMEOUT or CLIENT_CLOSED
    # error_class "stream_max_duration" (status TIMEOUT): cut at the upstream's timeouts.stream
    error_class: str | None = None
    usage: dict[str, Any] | None = None
    first_byte: bool = False
    finish_reasons: tuple[str, ...] = ()  # per choice, as the upstream sent them (for traces)

    @property
    def prompt_tokens(self) -> int | None:
        return reported_prompt_tokens(self.usage)

    @property
    def completion_tokens(self) -> int | None:
        value = (self.usage or {}).get("completion_tokens")
        return value if isinstance(value, int) and not isinstance(value, bool) else None


def _event(payload: dict[str, Any]) -> bytes:
    return b"data: " + _json.encode(payload) + b"\n\n"


def error_event(message: str, type_: str, code: str) -> bytes:
    return _event({"error": {"message": message, "type": type_, "param": None, "code": code}})


async def _event_data(response: UpstreamResponse) -> AsyncIterator[str]:
    """The data of each event of an SSE stream, as :mod:`formats.sse` reads it."""
    async for event in response.aiter_events():
        yield event.data


class _Choices:
    """Per-choice state: whether any content arrived, and its finish reason."""

    def __init__(self) -> None:
        self.content: dict[int, bool] = {}
        self.finish: dict[int, str] = {}

    def as_choices(self) -> list[dict[str, Any]]:
        return [
            {"finish_reason": self.finish.get(i), "delta": {"content": "x" if self.content.get(i) else ""}}
            for i in sorted(set(self.content) | set(self.finish))
        ]


def _restore_choice(choice: dict[str, Any], restorers: Restorers | None, state: _Choices) -> None:
    index = choice.get("index", 0)
    state.content.setdefault(index, False)
    delta = choice.get("delta")
    if isinstance(delta, dict):
        text = delta.get("content")
        if isinstance(text, str) and text:
            state.content[index] = True
            if restorers is not None:
                delta["content"] = restorers.feed((index, "content"), text)
        for call in delta.get("tool_calls") or ():
            state.content[index] = True
            fn = call.get("function") if isinstance(call, dict) else None
            args = fn.get("arguments") if isinstance(fn, dict) else None
            if restorers is not None and isinstance(fn, dict) and isinstance(args, str) and args:
                fn["arguments"] = restorers.feed((index, "tool", call.get("index", 0)), args)
    if "text" in choice and isinstance(choice["text"], str):  # /v1/completions streams
        if choice["text"]:
            state.content[index] = True
            if restorers is not None:
                choice["text"] = restorers.feed((index, "text"), choice["text"])
    if choice.get("finish_reason"):
        state.finish[index] = choice["finish_reason"]
        if restorers is not None:
            _flush_into(choice, index, restorers)


def _flush_into(choice: dict[str, Any], index: int, restorers: Restorers) -> None:
    """Before a choice finishes, whatever the restorers still hold goes out with it."""
    for key, rest in restorers.flush_choice(index):
        if not rest:
            continue
        if key[1] == "text":
            choice["text"] = (choice.get("text") or "") + rest
        elif key[1] == "content":
            delta = choice.setdefault("delta", {})
            delta["content"] = (delta.get("content") or "") + rest
        else:  # a tool call's arguments
            delta = choice.setdefault("delta", {})
            delta.setdefault("tool_calls", []).append({"index": key[2], "function": {"arguments": rest}})


async def relay_sse(
    response: UpstreamResponse,
    *,
    restorers: Restorers | None,
    count: PromptCount,
    promised_usage: bool,
    client_wants_usage: bool,
    client_model: str | None = None,
    on_done: Callable[[StreamResult], Awaitable[None] | None],
) -> AsyncGenerator[bytes, None]:
    """Yield the client's SSE bytes; call ``on_done`` exactly once with how it ended."""
    state = _Choices()
    held: list[dict[str, Any]] = []
    usage: dict[str, Any] | None = None
    result: StreamResult | None = StreamResult(OutcomeKind.CLIENT_CLOSED, "client_closed")
    first = False
    try:
        failure: tuple[OutcomeKind, str] | None = None
        done = False
        try:
            async for data in _event_data(response):
                if data.strip() == "[DONE]":
                    done = True
                    break
                try:
                    event = _decode.decode(data)
                except msgspec.DecodeError:
                    failure = (OutcomeKind.UPSTREAM_ERROR, "malformed_stream")
                    break
                if not isinstance(event, dict) or "error" in event:
                    failure = (OutcomeKind.UPSTREAM_ERROR, "upstream_stream_error")
                    break
                if isinstance(event.get("usage"), dict):
                    usage = event["usage"]
                if not client_wants_usage:
                    event.pop("usage", None)
                if client_model is not None and "model" in event:
                    event["model"] = client_model
                choices = event.get("choices") or []
                for choice in choices:
                    if isinstance(choice, dict):
                        _restore_choice(choice, restorers, state)
                if not choices or any(isinstance(c, dict) and c.get("finish_reason") for c in choices):
                    if choices or client_wants_usage:
                        held.append(event)
                    continue
                first = True
                yield _event(event)
        except StreamTooLong:  # the upstream's timeouts.stream: closed already, ended like a timeout
            failure = (OutcomeKind.TIMEOUT, StreamTooLong.default_code)
        except UpstreamTimeout:
            failure = (OutcomeKind.TIMEOUT, "upstream_timeout")
        except UpstreamError:
            failure = (OutcomeKind.UPSTREAM_ERROR, "upstream_reset")
        if failure is None and not done:
            failure = (OutcomeKind.UPSTREAM_ERROR, "upstream_incomplete")
        if failure is None:
            reason = check_usage(count, usage, promised=promised_usage) or check_answer(count, state.as_choices())
            if reason is not None:
                failure = (OutcomeKind.INTEGRITY_ERROR, reason)
        if failure is not None:
            status, code = failure
            integrity = status is OutcomeKind.INTEGRITY_ERROR
            result = StreamResult(status, code, usage, first)
            # Handed to the audit log before the client sees the end of its stream.
            await _finish(on_done, result)
            result = None
            if code == StreamTooLong.default_code:
                yield error_event(StreamTooLong.default_message, StreamTooLong.error_type, code)
                return
            yield error_event(
                "the upstream's stream failed the gateway's checks and was ended",
                "upstream_integrity_error" if integrity else "upstream_error",
                "upstream_integrity_error" if integrity else code,
            )
            return
        reasons = tuple(str(state.finish[i]) for i in sorted(state.finish))
        await _finish(on_done, StreamResult(OutcomeKind.OK, None, usage, True, reasons))
        result = None
        if restorers is not None:  # text still held for a choice that never sent finish_reason
            for index in restorers.pending_choices():
                tail: dict[str, Any] = {"index": index, "delta": {}}
                _flush_into(tail, index, restorers)
                held.insert(0, {"object": "chat.completion.chunk", "choices": [tail]})
        for event in held:
            yield _event(event)
        yield b"data: [DONE]\n\n"
    finally:
        await response.aclose()
        if result is not None:  # the client went away (or something broke) before the end
            await _finish(on_done, result)


async def _finish(on_done: Callable[[StreamResult], Awaitable[None] | None], result: StreamResult) -> None:
    maybe = on_done(result)
    if maybe is not None:
        await maybe
