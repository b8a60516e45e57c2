"""The engine front's Anthropic Messages route against a scripted engine: the same admission as
the chat routes (length with vLLM's own count, truncation params, cache salt), the integrity check
on ``input_tokens`` (whole answers and ``message_start``), errors in Anthropic's shape."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from engine.salt import derive_cache_salt
from tests.engine.test_front import _client as _front_client

BODY = {"model": "tiny", "max_tokens": 4000, "messages": [{"role": "user", "content": "hello"}], "cache_salt": "s",
        "truncate_prompt_tokens": 5}  # fmt: skip


@dataclass
class MessagesEngine:
    count: int = 30
    usage_prompt: int = 30
    late_usage: bool = False  # vLLM: 0 in message_start, the real usage in message_delta
    seen: list[tuple[str, dict]] = field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content or b"{}")
        self.seen.append((request.url.path, body))
        if request.url.path == "/v1/messages/count_tokens":
            return httpx.Response(200, json={"input_tokens": self.count})
        usage = {"input_tokens": self.usage_prompt - 10, "cache_read_input_tokens": 10, "output_tokens": 1}
        message = {"type": "message", "role": "assistant", "content": [{"type": "text", "text": "x"}],
                   "stop_reason": "end_turn", "usage": usage}  # fmt: skip
        if body.get("stream"):
            start = {
                "type": "message_start",
                "message": {**message, "content": [], "usage": {"input_tokens": 0} if self.late_usage else usage},
            }
            delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "x"}}
            end = {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": usage}
            sse = "".join(
                f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in (start, delta, end, {"type": "message_stop"})
            )
            return httpx.Response(200, content=sse.encode(), headers={"content-type": "text/event-stream"})
        return httpx.Response(200, json=message)


def _client(tmp_path: Path, engine: MessagesEngine, **salt: object):  # type: ignore[no-untyped-def]  # a test helper; its parameters say enough
    return _front_client(tmp_path, engine, **salt)  # type: ignore[arg-type]  # a test fake standing in for the real class


def test_messages_admitted_counted_and_clamped(tmp_path: Path) -> None:
    """Counted by vLLM's count_tokens (without the fields it does not count), truncation dropped,
    max_tokens lowered to the room left, cached tokens added back for the integrity check."""
    engine = MessagesEngine()
    with _client(tmp_path, engine) as client:
        r = client.post("/v1/messages", json=BODY)
        counted = client.post("/v1/messages/count_tokens", json={k: v for k, v in BODY.items() if k != "max_tokens"})
    assert r.status_code == 200 and r.json()["content"][0]["text"] == "x"
    assert r.headers["x-tiergate-max-tokens-clamped"] == "4000->2018"
    assert r.headers["x-tiergate-dropped-params"] == "truncate_prompt_tokens"
    (path, asked), (_, sent) = engine.seen[:2]
    assert path == "/v1/messages/count_tokens" and "max_tokens" not in asked and "cache_salt" not in asked
    assert sent["max_tokens"] == 2018 and "truncate_prompt_tokens" not in sent
    assert counted.status_code == 200 and counted.json() == {"input_tokens": 30}


def test_messages_placeholder_answer_withheld_whole_and_streamed(tmp_path: Path) -> None:
    engine = MessagesEngine(count=30, usage_prompt=11)
    with _client(tmp_path, engine) as client:
        whole = client.post("/v1/messages", json=BODY)
        streamed = client.post("/v1/messages", json={**BODY, "stream": True})
    assert whole.status_code == 502 and whole.json()["type"] == "error"
    assert whole.json()["error"]["type"] == "api_error" and "x" not in whole.json()["error"]["message"]
    assert streamed.status_code == 200 and "event: error" in streamed.text
    assert "text_delta" not in streamed.text


def test_messages_too_long_is_413_in_anthropic_shape(tmp_path: Path) -> None:
    engine = MessagesEngine(count=5000)
    with _client(tmp_path, engine) as client:
        r = client.post("/v1/messages", json=BODY)
    assert r.status_code == 413 and r.json()["error"]["type"] == "request_too_large"
    assert [p for p, _ in engine.seen] == ["/v1/messages/count_tokens"]


def test_messages_salt_from_the_tenant(tmp_path: Path) -> None:
    key = b"k" * 32
    (tmp_path / "salt.key").write_bytes(key)
    engine = MessagesEngine()
    with _client(tmp_path, engine, secret_file=tmp_path / "salt.key") as client:
        missing = client.post("/v1/messages", json=BODY)
        r = client.post("/v1/messages", json=BODY, headers={"X-Tiergate-Tenant": "acme"})
    assert missing.status_code == 400 and missing.json()["error"]["type"] == "invalid_request_error"
    assert r.status_code == 200 and engine.seen[-1][1]["cache_salt"] == derive_cache_salt(key, "acme")


def test_vllm_late_usage_is_checked_at_message_delta(tmp_path: Path) -> None:
    """vLLM reports input_tokens 0 in message_start: the check waits for message_delta."""
    with _client(tmp_path, MessagesEngine(late_usage=True)) as client:
        ok = client.post("/v1/messages", json={**BODY, "stream": True})
    with _client(tmp_path, MessagesEngine(late_usage=True, usage_prompt=11)) as client:
        bad = client.post("/v1/messages", json={**BODY, "stream": True})
    assert "message_stop" in ok.text and "event: error" not in ok.text
    assert "event: error" in bad.text and "message_stop" not in bad.text


def test_count_tokens_needs_no_salt(tmp_path: Path) -> None:
    """Counting touches no prefix cache: no salt required, none forwarded."""
    engine = MessagesEngine()
    with _client(tmp_path, engine) as client:
        r = client.post("/v1/messages/count_tokens", json={"model": "tiny", "messages": BODY["messages"]})
    assert r.status_code == 200 and r.json() == {"input_tokens": 30}
    assert all("cache_salt" not in body for _, body in engine.seen)


@dataclass
class ResponsesEngine:
    count: int = 300
    usage_prompt: int = 300
    seen: list[tuple[str, dict]] = field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content or b"{}")
        self.seen.append((request.url.path, body))
        if request.url.path == "/tokenize":
            return httpx.Response(200, json={"count": self.count, "max_model_len": 2048})
        final = {"status": "completed", "output": [], "usage": {"input_tokens": self.usage_prompt, "output_tokens": 1}}
        if body.get("stream"):
            events = [
                {"type": "response.output_text.delta", "delta": "x"},
                {"type": "response.completed", "response": final},
            ]
            sse = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
            return httpx.Response(200, content=sse.encode(), headers={"content-type": "text/event-stream"})
        return httpx.Response(200, json=final)


R_BODY = {"model": "tiny", "instructions": "be brief", "truncation": "auto", "max_output_tokens": 4000, "cache_salt": "s",
          "input": [{"role": "user", "content": [{"type": "input_text", "text": "hel"}, {"type": "input_text", "text": "lo"}]},
                    {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
                    {"type": "function_call_output", "call_id": "c1", "output": "done"}],
          "tools": [{"type": "function", "name": "f", "parameters": {"type": "object"}}]}  # fmt: skip


def test_responses_admitted_counted_as_chat_and_clamped(tmp_path: Path) -> None:
    engine = ResponsesEngine()
    with _client(tmp_path, engine) as client:
        r = client.post("/v1/responses", json=R_BODY)
    assert r.status_code == 200 and r.headers["x-tiergate-max-tokens-clamped"] == "4000->1748"
    (_, tok), (path, sent) = engine.seen
    assert tok["messages"] == [
        {"role": "system", "content": "be brief"}, {"role": "user", "content": "hello"},
        {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "content": "done", "tool_call_id": "c1"}]  # fmt: skip
    assert tok["tools"] == [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    assert path == "/v1/responses" and "truncation" not in sent and sent["max_output_tokens"] == 1748


def test_responses_placeholder_answer_withheld_and_vendor_history_refused(tmp_path: Path) -> None:
    with _client(tmp_path, ResponsesEngine(usage_prompt=1)) as client:
        whole = client.post("/v1/responses", json=R_BODY)
        streamed = client.post("/v1/responses", json={**R_BODY, "stream": True})
        history = client.post("/v1/responses", json={**R_BODY, "previous_response_id": "resp_1"})
    assert whole.status_code == 502 and whole.json()["error"]["code"] == "engine_integrity"
    assert "event: error" in streamed.text and "response.completed" not in streamed.text
    assert history.status_code == 400
