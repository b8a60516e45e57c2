"""Relaying a stream of typed SSE events (Anthropic Messages, OpenAI Responses).

:func:`sse_events` reads whole events (``event:`` name and joined ``data:`` lines) however the
network split them; :func:`drive` runs one protocol's :class:`EventRelay` over them with the rules
every stream follows here: restored text goes out as it arrives, the events that say "finished"
are held back until the stream is whole and the integrity check passed, and a stream that fails
ends with the protocol's own error event, never with a fake finish. ``on_done`` is called exactly
once with how it ended (before the client sees the end).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import Any

import msgspec

from audit.types import OutcomeKind
from gateway.errors import UpstreamError, UpstreamTimeout
from gateway.integrity import check_usage
from gateway.restore import Restorers
from gateway.streaming import StreamResult
from gateway.tokens import PromptCount
from gateway.upstream import StreamTooLong, UpstreamResponse
from tiers import Restorer

__all__ = ["EventRelay", "StreamFailure", "drive", "restore_strings", "sse_events"]

_decode = msgspec.json.Decoder()
_encode = msgspec.json.Encoder().encode


class StreamFailure(Exception):
    """The upstream's stream says it failed (an error event after the 200)."""

    def __init__(self, code: str, vendor_type: str | None = None) -> None:
        super().__init__(code)
        self.code = code
        self.vendor_type = vendor_type  # the vendor's error type, relayed (e.g. overloaded_error)


async def sse_events(response: UpstreamResponse) -> AsyncIterator[tuple[str | None, str]]:
    """(event name, data) per event, as :mod:`formats.sse` reads them."""
    async for event in response.aiter_events():
        yield event.event, event.data


def sse(name: str, payload: dict[str, Any]) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + _encode(payload) + b"\n\n"


_SKIP = frozenset({"type", "id", "call_id", "item_id", "signature", "encrypted_content", "status", "role"})


def restore_strings(value: Any, restorer: Restorer) -> Any:
    """Every string of a JSON value restored (except ids, types and vendor state), in place where
    it can be; returns the value."""
    if isinstance(value, str):
        return restorer.restore(value)
    if isinstance(value, list):
        for i, v in enumerate(value):
            value[i] = restore_strings(v, restorer)
    elif isinstance(value, dict):
        for k, v in value.items():
            if k not in _SKIP:
                value[k] = restore_strings(v, restorer)
    return value


class EventRelay:
    """One protocol's view of its events; :func:`drive` calls it."""

    def __init__(self, mapping: dict[str, str], client_model: str) -> None:
        self.restorer = Restorer(mapping) if mapping else None
        self.streams = Restorers(mapping) if mapping else None
        self.client_model = client_model
        self.terminal = False  # the upstream's last event arrived
        self.usage: dict[str, Any] | None = None  # in OpenAI's names
        self.usage_early = False  # usage is known before any text (checked before relaying it)
        self.state: list[str] = []  # vendor state values seen (gateway/vendor_state.py)

    def feed(self, name: str | None, event: dict[str, Any]) -> list[bytes]:
        """The client's bytes for one upstream event (possibly none, when held)."""
        raise NotImplementedError

    def finish(self) -> list[bytes]:
        """What was held back, once the stream is whole and checked."""
        return []

    def answer_check(self, count: PromptCount) -> str | None:
        return None

    def error_event(self, status: OutcomeKind, code: str, vendor_type: str | None) -> bytes:
        raise NotImplementedError


async def drive(
    response: UpstreamResponse,
    relay: EventRelay,
    *,
    count: PromptCount,
    promised_usage: bool,
    on_done: Callable[[StreamResult], Awaitable[None] | None],
    on_state: Callable[[list[str]], None] | None = None,
) -> AsyncGenerator[bytes, None]:
    result: StreamResult | None = StreamResult(OutcomeKind.CLIENT_CLOSED, "client_closed")
    first = False
    vendor_type: str | None = None
    try:
        failure: tuple[OutcomeKind, str] | None = None
        checked_early = False
        try:
            async for name, data in sse_events(response):
                try:
                    event = _decode.decode(data)
                except msgspec.DecodeError:
                    failure = (OutcomeKind.UPSTREAM_ERROR, "malformed_stream")
                    break
                if not isinstance(event, dict):
                    failure = (OutcomeKind.UPSTREAM_ERROR, "malformed_stream")
                    break
                try:
                    out = relay.feed(name, event)
                except StreamFailure as exc:
                    failure, vendor_type = (OutcomeKind.UPSTREAM_ERROR, exc.code), exc.vendor_type
                    break
                if relay.usage_early and not checked_early:
                    # A truncated or replaced prompt shows before any text: nothing of it goes out.
                    checked_early = True
                    reason = check_usage(count, relay.usage, promised=promised_usage)
                    if reason is not None:
                        failure = (OutcomeKind.INTEGRITY_ERROR, reason)
                        break
                for chunk in out:
                    first = True
                    yield chunk
                if relay.terminal:
                    break
        except StreamTooLong:  # the upstream's timeouts.stream: closed already, ended like a timeout
            failure = (OutcomeKind.TIMEOUT, StreamTooLong.default_code)
        except UpstreamTimeout:
            failure = (OutcomeKind.TIMEOUT, "upstream_timeout")
        except UpstreamError:
            failure = (OutcomeKind.UPSTREAM_ERROR, "upstream_reset")
        if failure is None and not relay.terminal:
            failure = (OutcomeKind.UPSTREAM_ERROR, "upstream_incomplete")
        if failure is None:
            reason = check_usage(count, relay.usage, promised=promised_usage) or relay.answer_check(count)
            if reason is not None:
                failure = (OutcomeKind.INTEGRITY_ERROR, reason)
        if failure is not None:
            status, code = failure
            result = StreamResult(status, code, relay.usage, first)
            await _finish(on_done, result)  # the audit log hears of it before the client does
            result = None
            yield relay.error_event(status, code, vendor_type)
            return
        await _finish(on_done, StreamResult(OutcomeKind.OK, None, relay.usage, True))
        result = None
        held = relay.finish()
        if on_state is not None and relay.state:
            on_state(relay.state)
        for chunk in held:
            yield chunk
    finally:
        await response.aclose()
        if result is not None:  # the client went away (or something broke) before the end
            await _finish(on_done, result)


async def _finish(on_done: Callable[[StreamResult], Awaitable[None] | None], result: StreamResult) -> None:
    maybe = on_done(result)
    if maybe is not None:
        await maybe
