"""The engine front reads vLLM's streams with the shared SSE reader (formats.sse), not line by line.

The scripted engine writes its events the way a server may and a line reader misreads: bare CR
line ends, comments, and each event's JSON spread over several ``data:`` lines (the reader joins
them). The usage sits on a line of its own, so a line-based check never sees it whole.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from formats.sse import Event, iter_events
from tests.engine.test_front import _client
from tests.support.sse import spread


@dataclass
class SpreadEngine:
    count: int = 30
    usage_prompt: int = 30

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == "/tokenize":
            return httpx.Response(200, json={"count": self.count, "max_model_len": 2048})
        if request.url.path == "/v1/messages/count_tokens":
            return httpx.Response(200, json={"input_tokens": self.count})
        if request.url.path == "/v1/messages":
            usage = {"input_tokens": self.usage_prompt, "output_tokens": 1}
            events: list[tuple[str | None, dict[str, Any] | str]] = [
                ("message_start", {"type": "message_start", "message": {"content": [], "usage": usage}}),
                ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                         "delta": {"type": "text_delta", "text": "x"}}),
                ("message_stop", {"type": "message_stop"})]  # fmt: skip
        else:
            usage = {"prompt_tokens": self.usage_prompt, "completion_tokens": 1, "total_tokens": 31}
            events = [(None, {"choices": [{"index": 0, "text": "x"}], "usage": None}),
                      (None, {"choices": [], "usage": usage}), (None, "[DONE]")]  # fmt: skip
        return httpx.Response(200, content=spread(events), headers={"content-type": "text/event-stream"})


COMPLETION = {"model": "tiny", "prompt": "hello", "max_tokens": 1, "cache_salt": "s", "stream": True}
MESSAGE = {"model": "tiny", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}], "cache_salt": "s",
           "stream": True}  # fmt: skip


def test_an_honest_spread_stream_is_relayed_event_for_event(tmp_path: Path) -> None:
    with _client(tmp_path, SpreadEngine()) as client:  # type: ignore[arg-type]  # a test fake standing in for the real class
        text = client.post("/v1/completions", json=COMPLETION).text
        anthropic = client.post("/v1/messages", json=MESSAGE).text
    events = iter_events([text.encode()])
    assert [json.loads(e.data) if e.data != "[DONE]" else e.data for e in events] == [
        {"choices": [{"index": 0, "text": "x"}], "usage": None},
        {"choices": [], "usage": {"prompt_tokens": 30, "completion_tokens": 1, "total_tokens": 31}},
        "[DONE]",
    ]
    assert "\r" not in text and ": vllm" not in text  # written again from what was read and checked
    assert [e.event for e in iter_events([anthropic.encode()])] == ["message_start", "content_block_delta",
                                                                     "message_stop"]  # fmt: skip


def test_a_placeholder_usage_spread_over_lines_is_caught(tmp_path: Path) -> None:
    with _client(tmp_path, SpreadEngine(usage_prompt=1)) as client:  # type: ignore[arg-type]  # a test fake standing in for the real class
        text = client.post("/v1/completions", json=COMPLETION).text
        anthropic = client.post("/v1/messages", json=MESSAGE).text
    events = iter_events([text.encode()])
    assert json.loads(events[-1].data)["error"]["code"] == "engine_integrity"
    assert "[DONE]" not in text and not any('"prompt_tokens": 1' in e.data for e in events)
    assert iter_events([anthropic.encode()]) == [Event(json.dumps({"type": "error", "error": {
        "type": "api_error", "message": "engine answer failed the integrity check"}}), "error")]  # fmt: skip
