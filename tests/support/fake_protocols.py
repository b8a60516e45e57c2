"""The fake upstream's Anthropic Messages and OpenAI Responses answers (whole and streamed).

:class:`~tests.support.fake_upstream.FakeUpstream` hands requests on these paths here; the same
:class:`Scripted` answer drives every protocol (``content``/``chunks`` for text, ``tool_calls`` in
OpenAI's shape for tool use, ``thinking`` / ``encrypted_reasoning`` for vendor state). Prompt
tokens are counted like an engine: every string the model reads, plus a little per message, and
Anthropic's cached share reported apart (``cache_read_tokens``).
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.support.fake_upstream import FakeUpstream, Received, Scripted

__all__ = ["PROTOCOL_PATHS", "answer_protocol", "protocol_prompt_tokens"]

PROTOCOL_PATHS = ("/messages", "/messages/count_tokens", "/responses")
_NOT_READ = frozenset({"type", "role", "id", "signature", "tool_use_id", "call_id", "cache_control", "model",
                       "encrypted_content", "status", "media_type"})  # fmt: skip
SIGNATURE = "c2lnbmVkLWJ5LXRoZS1mYWtlLXZlbmRvcg=="


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in _texts(v)]
    if isinstance(value, dict):
        out = []
        for k, v in value.items():
            if k == "input" and isinstance(v, dict):
                out.append(json.dumps(v))
            elif k not in _NOT_READ:
                out.extend(_texts(v))
        return out
    return []


def protocol_prompt_tokens(fake: FakeUpstream, path: str, body: dict[str, Any]) -> int:
    """Like a vendor: the tool schemas are input tokens too (a coding agent's are most of them)."""
    tools = json.dumps(body["tools"]) if body.get("tools") else ""
    if path.endswith("/responses"):
        items = body.get("input")
        n = len(items) if isinstance(items, list) else 1
        return 3 * n + fake.count_tokens(tools) + sum(
            fake.count_tokens(s) for s in _texts([body.get("instructions"), items]))  # fmt: skip
    messages = body.get("messages") or []
    return 3 + 3 * len(messages) + fake.count_tokens(tools) + sum(
        fake.count_tokens(s) for s in _texts([body.get("system"), messages]))  # fmt: skip


def _stop_reason(a: Scripted) -> str:
    if a.tool_calls:
        return "tool_use"
    return {"stop": "end_turn", "length": "max_tokens"}.get(a.finish_reason, a.finish_reason)


async def answer_protocol(fake: FakeUpstream, path: str, r: Received, a: Scripted, send: Any) -> None:
    from tests.support.fake_upstream import _json

    prompt = a.prompt_tokens if a.prompt_tokens is not None else protocol_prompt_tokens(fake, path, r.body)
    if path.endswith("/count_tokens"):
        await _json(send, 200, {"input_tokens": prompt})
    elif path.endswith("/messages"):
        usage = None if a.omit_usage else {
            "input_tokens": prompt - a.cache_read_tokens, "cache_read_input_tokens": a.cache_read_tokens,
            "cache_creation_input_tokens": 0, "output_tokens": a.completion_tokens}  # fmt: skip
        if r.body.get("stream"):
            await _events(send, _anthropic_events(r, a, usage), a)
        else:
            await _json(send, 200, _anthropic_message(r, a, usage))
    else:
        usage = None if a.omit_usage else {
            "input_tokens": prompt, "output_tokens": a.completion_tokens, "total_tokens": prompt + a.completion_tokens,
            "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}  # fmt: skip
        response = _response(r, a, usage)
        if r.body.get("stream"):
            await _events(send, _responses_events(r, a, response), a)
        else:
            await _json(send, 200, response)


# ---- Anthropic ---------------------------------------------------------------------------------


def _blocks(a: Scripted) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if a.thinking is not None:
        blocks.append({"type": "thinking", "thinking": a.thinking, "signature": SIGNATURE})
    text = "".join(a.chunks) if a.chunks is not None else a.content
    if text:
        blocks.append({"type": "text", "text": text})
    for i, call in enumerate(a.tool_calls or ()):
        blocks.append({"type": "tool_use", "id": call.get("id", f"toolu_{i}"), "name": call["function"]["name"],
                       "input": json.loads(call["function"]["arguments"])})  # fmt: skip
    return blocks


def _anthropic_message(r: Received, a: Scripted, usage: dict[str, Any] | None) -> dict[str, Any]:
    out = {"id": f"msg_{r.seq}", "type": "message", "role": "assistant", "model": r.body.get("model"),
           "content": _blocks(a), "stop_reason": _stop_reason(a), "stop_sequence": None}  # fmt: skip
    if usage is not None:
        out["usage"] = usage
    return out


def _anthropic_events(r: Received, a: Scripted, usage: dict[str, Any] | None) -> list[tuple[str, dict[str, Any]]]:
    start_usage = dict(usage or {}, output_tokens=1) if usage is not None else None
    message = {"id": f"msg_{r.seq}", "type": "message", "role": "assistant", "model": r.body.get("model"),
               "content": [], "stop_reason": None, "stop_sequence": None}  # fmt: skip
    if start_usage is not None:
        message["usage"] = start_usage
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": message}),
                                                ("ping", {"type": "ping"})]  # fmt: skip
    index = 0

    def block(start: dict[str, Any], deltas: list[dict[str, Any]]) -> None:
        nonlocal index
        events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": start}))
        for d in deltas:
            events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1

    if a.thinking is not None:
        half = len(a.thinking) // 2
        block({"type": "thinking", "thinking": "", "signature": ""},
              [{"type": "thinking_delta", "thinking": a.thinking[:half]},
               {"type": "thinking_delta", "thinking": a.thinking[half:]},
               {"type": "signature_delta", "signature": SIGNATURE}])  # fmt: skip
    pieces = a.chunks if a.chunks is not None else ([a.content] if a.content else [])
    if pieces:
        block({"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in pieces])
    for i, call in enumerate(a.tool_calls or ()):
        args = call["function"]["arguments"]
        half = len(args) // 2
        block({"type": "tool_use", "id": call.get("id", f"toolu_{i}"), "name": call["function"]["name"], "input": {}},
              [{"type": "input_json_delta", "partial_json": args[:half]},
               {"type": "input_json_delta", "partial_json": args[half:]}])  # fmt: skip
    for extra in a.extra_events:
        events.append((extra["type"], extra))
    delta: dict[str, Any] = {"type": "message_delta", "delta": {"stop_reason": _stop_reason(a), "stop_sequence": None}}
    if usage is not None:
        delta["usage"] = {"output_tokens": a.completion_tokens}
    events += [("message_delta", delta), ("message_stop", {"type": "message_stop"})]
    if a.stream_error_after is not None:
        events = events[: a.stream_error_after] + [
            ("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
        ]
    return events


# ---- Responses ---------------------------------------------------------------------------------


def _output(r: Received, a: Scripted) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if a.encrypted_reasoning is not None:
        out.append({"type": "reasoning", "id": f"rs_{r.seq}", "summary": [],
                    "encrypted_content": a.encrypted_reasoning})  # fmt: skip
    text = "".join(a.chunks) if a.chunks is not None else a.content
    if text:
        out.append({"type": "message", "id": f"msg_{r.seq}", "status": "completed", "role": "assistant",
                    "content": [{"type": "output_text", "text": text, "annotations": []}]})  # fmt: skip
    for i, call in enumerate(a.tool_calls or ()):
        out.append({"type": "function_call", "id": f"fc_{r.seq}_{i}", "call_id": call.get("id", f"call_{i}"),
                    "name": call["function"]["name"], "arguments": call["function"]["arguments"],
                    "status": "completed"})  # fmt: skip
    return out


def _response(r: Received, a: Scripted, usage: dict[str, Any] | None) -> dict[str, Any]:
    incomplete = a.finish_reason == "length"
    out = {"id": f"resp_{r.seq}", "object": "response", "created_at": int(r.at),
           "status": "incomplete" if incomplete else "completed", "model": r.body.get("model"),
           "output": _output(r, a), "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
           "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "error": None,
           "store": r.body.get("store", True)}  # fmt: skip
    if usage is not None:
        out["usage"] = usage
    return out


def _responses_events(r: Received, a: Scripted, final: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    events: list[tuple[str, dict[str, Any]]] = []

    def add(etype: str, **fields: Any) -> None:
        events.append((etype, {"type": etype, "sequence_number": len(events), **fields}))

    add("response.created", response={**final, "status": "in_progress", "output": [], "usage": None})
    add("response.in_progress", response={**final, "status": "in_progress", "output": [], "usage": None})
    for n, item in enumerate(final["output"]):
        if item["type"] == "message":
            empty = {**item, "status": "in_progress", "content": []}
            add("response.output_item.added", output_index=n, item=empty)
            part = {"type": "output_text", "text": "", "annotations": []}
            add("response.content_part.added", item_id=item["id"], output_index=n, content_index=0, part=part)
            pieces = a.chunks if a.chunks is not None else [a.content]
            for p in pieces:
                add("response.output_text.delta", item_id=item["id"], output_index=n, content_index=0, delta=p)
            text = item["content"][0]["text"]
            add("response.output_text.done", item_id=item["id"], output_index=n, content_index=0, text=text)
            add(
                "response.content_part.done",
                item_id=item["id"],
                output_index=n,
                content_index=0,
                part=item["content"][0],
            )
        elif item["type"] == "function_call":
            add("response.output_item.added", output_index=n, item={**item, "arguments": "", "status": "in_progress"})
            args = item["arguments"]
            half = len(args) // 2
            for p in (args[:half], args[half:]):
                add("response.function_call_arguments.delta", item_id=item["id"], output_index=n, delta=p)
            add("response.function_call_arguments.done", item_id=item["id"], output_index=n, arguments=args)
        else:
            add("response.output_item.added", output_index=n, item=item)
        add("response.output_item.done", output_index=n, item=item)
    add("response.incomplete" if final["status"] == "incomplete" else "response.completed", response=final)
    return events


async def _events(send: Any, events: list[tuple[str, dict[str, Any]]], a: Scripted) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
    for n, (name, event) in enumerate(events):
        if a.cut_after_chunks is not None and n >= a.cut_after_chunks:
            break
        if a.chunk_delay_s:
            await asyncio.sleep(a.chunk_delay_s)
        data = b"event: " + name.encode() + b"\ndata: " + json.dumps(event).encode() + b"\n\n"
        await send({"type": "http.response.body", "body": data, "more_body": True})
    await send({"type": "http.response.body", "body": b"", "more_body": False})
