"""The Anthropic and Responses stream relays on their own, fed event by event and cut anywhere:
placeholders restored across every split, tool arguments JSON-escaped, the stream's end held
until it is whole."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from formats.sse import SSEDecoder
from gateway.protocols import MESSAGES, RESPONSES
from gateway.streaming import StreamResult
from gateway.tokens import PromptCount

MAPPING = {"<EMAIL_1>": 'o"hara\\x@example.org', "<NAME_1>": "Zoë Dupont"}
COUNT = PromptCount(tokens=20, lower=5, upper=400, exact=False)


class _Lines:
    """An upstream response whose body arrives in the given pieces (any split of the bytes)."""

    def __init__(self, data: bytes, cuts: list[int]) -> None:
        points = sorted({c % (len(data) + 1) for c in cuts})
        self.pieces = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
        self.status_code = 200

    async def aiter_events(self) -> Any:
        decoder = SSEDecoder()
        for piece in self.pieces:
            for event in decoder.feed(piece):
                yield event
        for event in decoder.close():
            yield event

    async def aclose(self) -> None:
        pass


def _sse(events: list[dict[str, Any]]) -> bytes:
    return b"".join(b"event: " + e["type"].encode() + b"\ndata: " + json.dumps(e).encode() + b"\n\n" for e in events)


def _run(protocol: Any, data: bytes, cuts: list[int]) -> tuple[list[tuple[str, dict[str, Any]]], list[StreamResult]]:
    results: list[StreamResult] = []

    async def go() -> bytes:
        out = b""
        async for chunk in protocol.relay(_Lines(data, cuts), mapping=MAPPING, count=COUNT, promised_usage=True,
                                          body={}, client_model="public", on_done=results.append):  # fmt: skip
            out += chunk
        return out

    raw = asyncio.run(go()).decode()
    events = []
    for block in raw.strip().split("\n\n"):
        name, data_line = block.split("\n", 1)
        events.append((name.removeprefix("event: "), json.loads(data_line.removeprefix("data: "))))
    return events, results


def _anthropic(text_pieces: list[str], json_pieces: list[str]) -> list[dict[str, Any]]:
    return [
        {"type": "message_start", "message": {"model": "vendor-x", "content": [], "usage": {
            "input_tokens": 10, "cache_read_input_tokens": 10, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "<EMAIL_1>?"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
        *[{"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": p}} for p in text_pieces],
        {"type": "content_block_delta", "index": 1, "delta": {"type": "citations_delta", "citation": {
            "type": "char_location", "cited_text": "by <NAME_1>", "document_index": 0}}},
        {"type": "content_block_stop", "index": 1},
        {"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "t", "name": "n",
                                                                        "input": {}}},
        *[{"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": p}}
          for p in json_pieces],
        {"type": "content_block_stop", "index": 2},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    ]  # fmt: skip


def _split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts})
    return [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 200), max_size=6), st.lists(st.integers(0, 200), max_size=6),
       st.lists(st.integers(0, 4000), max_size=12))  # fmt: skip
def test_anthropic_stream_restored_at_every_split(
    text_cuts: list[int], json_cuts: list[int], byte_cuts: list[int]
) -> None:
    text = "Write to <EMAIL_1> for <NAME_1>."
    args = '{"to": "<EMAIL_1>", "who": ["<NAME_1>"]}'
    data = _sse(_anthropic(_split(text, text_cuts), _split(args, json_cuts)))
    events, (result,) = _run(MESSAGES, data, byte_cuts)
    deltas = [e["delta"] for n, e in events if n == "content_block_delta"]
    assert "".join(d.get("text", "") for d in deltas if d["type"] == "text_delta") == Restore(text)
    tool = "".join(d["partial_json"] for d in deltas if d["type"] == "input_json_delta")
    assert json.loads(tool) == {"to": MAPPING["<EMAIL_1>"], "who": ["Zoë Dupont"]}
    assert [d["thinking"] for d in deltas if d["type"] == "thinking_delta"] == ["<EMAIL_1>?"]  # untouched
    assert [d["citation"]["cited_text"] for d in deltas if d["type"] == "citations_delta"] == ["by Zoë Dupont"]
    assert [n for n, _ in events][-2:] == ["message_delta", "message_stop"]
    assert events[0][1]["message"]["model"] == "public"
    assert result.status == "ok" and result.usage == {"prompt_tokens": 20, "completion_tokens": 9}


def Restore(text: str) -> str:  # noqa: N802 - reads like the thing it checks
    for k, v in MAPPING.items():
        text = text.replace(k, v)
    return text


def test_anthropic_low_usage_stops_before_any_text() -> None:
    """A prompt the vendor says it read 1 token of: nothing of the answer goes out."""
    events = _anthropic(["secret answer"], ["{}"])
    events[0]["message"]["usage"] = {"input_tokens": 1, "output_tokens": 1}
    out, (result,) = _run(MESSAGES, _sse(events), [])
    assert [n for n, _ in out] == ["error"] and result.status == "integrity_error"
    assert result.error_class == "prompt_tokens_low"


def _responses(text_pieces: list[str]) -> list[dict[str, Any]]:
    text = "".join(text_pieces)
    item = {"type": "message", "id": "m", "role": "assistant", "content": [{"type": "output_text", "text": text}]}
    final = {
        "model": "vendor-x",
        "status": "completed",
        "output": [item],
        "usage": {"input_tokens": 20, "output_tokens": 3},
    }
    events = [{"type": "response.created", "response": {**final, "status": "in_progress", "output": []}},
              *[{"type": "response.output_text.delta", "item_id": "m", "output_index": 0, "content_index": 0,
                 "delta": p} for p in text_pieces],
              {"type": "response.output_text.done", "item_id": "m", "output_index": 0, "content_index": 0, "text": text},
              {"type": "response.output_item.done", "output_index": 0, "item": item},
              {"type": "response.completed", "response": final}]  # fmt: skip
    for n, e in enumerate(events):
        e["sequence_number"] = n
    return events


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 200), max_size=6), st.lists(st.integers(0, 3000), max_size=10))
def test_responses_stream_restored_in_every_place(text_cuts: list[int], byte_cuts: list[int]) -> None:
    text = "Hi <NAME_1>, mail <EMAIL_1> or <EMAIL_"  # the last one never completes
    events, (result,) = _run(RESPONSES, _sse(_responses(_split(text, text_cuts))), byte_cuts)
    want = Restore(text)
    assert "".join(e["delta"] for n, e in events if n == "response.output_text.delta") == want
    (done,) = [e for n, e in events if n == "response.output_text.done"]
    (item,) = [e for n, e in events if n == "response.output_item.done"]
    name, completed = events[-1]
    assert done["text"] == want and item["item"]["content"][0]["text"] == want
    assert name == "response.completed" and completed["response"]["output"][0]["content"][0]["text"] == want
    assert completed["response"]["model"] == "public"
    assert [e["sequence_number"] for _, e in events] == list(range(len(events)))
    assert result.status == "ok"


def test_responses_stream_cut_before_completed_is_an_error() -> None:
    events = _responses(["Hi <NAME_1>"])[:-1]
    out, (result,) = _run(RESPONSES, _sse(events), [])
    assert out[-1][0] == "error" and result.error_class == "upstream_incomplete"
    assert all(n != "response.completed" for n, _ in out)


def test_anthropic_late_usage_is_checked_at_the_end() -> None:
    """vLLM's Messages stream says input_tokens 0 in message_start and the real figure in
    message_delta: not an early failure; a low final figure still withholds the end."""
    events = _anthropic(["fine"], ["{}"])
    events[0]["message"]["usage"] = {"input_tokens": 0, "output_tokens": 0}
    events[-2]["usage"] = {"input_tokens": 20, "output_tokens": 9}
    out, (result,) = _run(MESSAGES, _sse(events), [])
    assert result.status == "ok" and [n for n, _ in out][-1] == "message_stop"
    events[-2]["usage"] = {"input_tokens": 1, "output_tokens": 9}
    out, (result,) = _run(MESSAGES, _sse(events), [])
    assert result.error_class == "prompt_tokens_low" and out[-1][0] == "error"
    assert all(n != "message_stop" for n, _ in out)
