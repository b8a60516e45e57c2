"""Every stream reader of the gateway reads through the shared SSE reader (formats.sse).

A real HTTP server on 127.0.0.1 writes each stream the way a server may and a line reader
misreads: bare CR line ends, comments, an event's JSON spread over several ``data:`` lines
(joined by the reader), cut into small writes. Each reader must see the same answer it sees in
the plain form: the OpenAI relay, the typed-event relay (Anthropic), the isolation probe, the
ladder probe and the prefix-cache probe.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from gateway.probe import _read_stream
from gateway.probes.ladder import _from_stream
from gateway.probes.prefix_cache import _timed
from gateway.protocols import MESSAGES
from gateway.settings import UpstreamSettings
from gateway.streaming import StreamResult, relay_sse
from gateway.tokens import PromptCount
from gateway.upstream import UpstreamClient, UpstreamResponse
from tests.gateway.test_upstream_client import _chunked
from tests.support import serve
from tests.support.sse import spread

T = TypeVar("T")
COUNT = PromptCount(tokens=20, lower=5, upper=400, exact=False)
MARKER = "TGPROBE-0123456789ABCDEF0123"[:28]


def _spread(events: list[tuple[str | None, Any]]) -> list[bytes]:
    raw = spread(events)
    return [raw[i : i + 9] for i in range(0, len(raw), 9)]  # small writes: events cut anywhere


def _openai(text: str) -> list[tuple[str | None, Any]]:
    usage = {"prompt_tokens": 20, "completion_tokens": 2, "prompt_tokens_details": {"cached_tokens": 7}}
    return [(None, {"choices": [{"index": 0, "delta": {"content": text[:12]}}]}),
            (None, {"choices": [{"index": 0, "delta": {"content": text[12:]}, "finish_reason": "stop"}]}),
            (None, {"choices": [], "usage": usage}), (None, "[DONE]")]  # fmt: skip


def _with_response(chunks: list[bytes], read: Callable[[UpstreamResponse], Awaitable[T]]) -> T:
    async def go(url: str) -> T:
        client = UpstreamClient(UpstreamSettings(name="u", base_url=url + "/v1", kind="shared"))
        try:
            opened = await client.open("/chat/completions", b"{}")
            try:
                return await read(opened.response)
            finally:
                await opened.response.aclose()
        finally:
            await client.aclose()

    with serve(_chunked(chunks, delay_s=0.001), lifespan="off") as server:
        return asyncio.run(go(server.url))


async def _collect(stream: Any) -> bytes:
    return b"".join([chunk async for chunk in stream])


def test_openai_relay() -> None:
    results: list[StreamResult] = []
    out = _with_response(
        _spread(_openai("hello there, friend")),
        lambda r: _collect(
            relay_sse(
                r, restorers=None, count=COUNT, promised_usage=True, client_wants_usage=False, on_done=results.append
            )
        ),
    )
    text = "".join(json.loads(line[6:])["choices"][0]["delta"].get("content", "")
                   for line in out.decode().split("\n\n") if line.startswith("data: {"))  # fmt: skip
    assert text == "hello there, friend" and out.endswith(b"data: [DONE]\n\n")
    assert results[0].status == "ok" and results[0].usage is not None


def test_typed_event_relay() -> None:
    usage = {"input_tokens": 20, "output_tokens": 1}
    events: list[tuple[str | None, Any]] = [
        ("message_start", {"type": "message_start", "message": {"model": "m", "content": [], "usage": usage}}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": "hi"}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}}),
        ("message_stop", {"type": "message_stop"})]  # fmt: skip
    results: list[StreamResult] = []
    out = _with_response(
        _spread(events),
        lambda r: _collect(
            MESSAGES.relay(
                r, mapping={}, count=COUNT, promised_usage=True, body={}, client_model="public", on_done=results.append
            )
        ),
    )
    names = [block.split("\n", 1)[0] for block in out.decode().strip().split("\n\n")]
    assert names == [f"event: {n}" for n, _ in events]
    assert results[0].status == "ok"


def test_isolation_probe_reader() -> None:
    answer = _with_response(_spread(_openai(f"Sure: {MARKER} done")), lambda r: _read_stream(3, r))
    assert answer.error is None and answer.markers == frozenset({MARKER})


def test_ladder_probe_reader() -> None:
    answer = _with_response(_spread(_openai(f"Sure: {MARKER} done")), _from_stream)
    assert answer.error is None and answer.finish == "stop"
    assert answer.usage["prompt_tokens"] == 20 and MARKER in answer.found and MARKER in answer.text


def test_prefix_cache_probe_reader() -> None:
    async def go(url: str) -> Any:
        client = UpstreamClient(UpstreamSettings(name="u", base_url=url + "/v1", kind="shared"))
        try:
            return await _timed(client, b"{}", 1, "warm", lambda: 0.0)
        finally:
            await client.aclose()

    with serve(_chunked(_spread(_openai("some answer text")), delay_s=0.001), lifespan="off") as server:
        sample = asyncio.run(go(server.url))
    assert sample.error is None and sample.cached_tokens == 7 and sample.ttft_s == 0.0
