"""A scripted fake OpenAI-compatible upstream that keeps a ledger of every request it received.

Plain ASGI (no framework) so it is fast enough to be the baseline of ``bench/overhead.py``.
Behaviour per request comes from ``script`` (a callable taking the :class:`Received` request and
returning a :class:`Scripted` answer); the default answers ``"ok"``. ``usage.prompt_tokens`` is
counted like a real engine: the upstream's tokenizer (``count_tokens``) over every message string,
plus a small chat-template overhead per message.

    fake = FakeUpstream(kind="onprem")          # on-prem: serves a hardened engine manifest
    with serve(fake.app) as server:
        base_url = server.url + "/v1"
        ...
        fake.ledger.bodies()                   # every JSON body it received, in order
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.support.fake_protocols import PROTOCOL_PATHS, answer_protocol

__all__ = ["HARDENED_MANIFEST", "FakeUpstream", "Ledger", "Received", "Scripted", "byte_tokens"]

HARDENED_MANIFEST: dict[str, Any] = {
    "schema": 1,
    "vllm_version": "0.32.0",
    "plugin_version": "1.0",
    "model": "fake",
    "max_model_len": 32768,
    "block_size": 16,
    "num_blocks": 4097,
    "pool_tokens": 65536,
    "kv_zeroing": True,
    "zeroing_processes": 1,
    "version_override": False,
    "prefix_caching": True,
    "cache_salt_required": True,
    "over_long_rejected": True,
    "truncation_dropped": True,
    "disaggregated": False,
    "preflight_ok": True,
    "started_at": "2026-01-01T00:00:00Z",
}


def byte_tokens(text: str) -> int:
    """A tokenizer with one token per UTF-8 byte: exact-length tests need no model."""
    return len(text.encode("utf-8"))


@dataclass(frozen=True)
class Received:
    """One request as the upstream saw it."""

    seq: int
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    raw: bytes
    at: float  # time.time() when the request arrived

    @property
    def text(self) -> str:
        return self.raw.decode("utf-8", "replace")


@dataclass
class Scripted:
    """The answer to one request. ``chunks`` is used for streams (default: ``content`` whole)."""

    content: str = "ok"
    chunks: list[str] | None = None
    tool_calls: list[dict[str, Any]] | None = None
    finish_reason: str = "stop"
    status: int = 200
    error_body: dict[str, Any] | None = None
    prompt_tokens: int | None = None  # override the counted value (the one-token-placeholder case)
    omit_usage: bool = False
    delay_s: float = 0.0  # before the response head
    chunk_delay_s: float = 0.0
    cut_after_chunks: int | None = None  # stream: close the connection after N chunks, no [DONE]
    completion_tokens: int = 1
    cached_tokens: int | None = None  # reported as usage.prompt_tokens_details.cached_tokens when set
    # Anthropic Messages / OpenAI Responses only (tests/support/fake_protocols.py):
    thinking: str | None = None  # a thinking block (with a signature) before the text
    encrypted_reasoning: str | None = None  # a Responses reasoning item's encrypted_content
    cache_read_tokens: int = 0  # Anthropic: this share of the prompt reported as cache reads
    stream_error_after: int | None = None  # Anthropic stream: `event: error` after N events
    extra_events: list[dict[str, Any]] = field(default_factory=list)  # Anthropic: unknown event types


class Ledger:
    """Thread-safe record of every request, in arrival order."""

    def __init__(self, *, keep: bool = True) -> None:
        self._lock = threading.Lock()
        self._items: list[Received] = []
        self._keep = keep  # False: count only (benchmarks must not grow without bound)
        self._count = 0
        self.incomplete = 0  # bodies cut off by a client that went away: never processed

    def add(self, path: str, headers: dict[str, str], raw: bytes) -> Received:
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {"_unparsed": True}
        with self._lock:
            item = Received(self._count, path, headers, body, raw, time.time())
            self._count += 1
            if self._keep:
                self._items.append(item)
        return item

    def __len__(self) -> int:
        with self._lock:
            return self._count

    def items(self) -> list[Received]:
        with self._lock:
            return list(self._items)

    def bodies(self) -> list[dict[str, Any]]:
        return [i.body for i in self.items()]

    def raw_text(self) -> str:
        """Everything received, concatenated: for 'never appears in the ledger' assertions."""
        return "\n".join(i.text for i in self.items())

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._count = 0


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, dict):
        if value.get("type") in (None, "text", "input_text") and isinstance(value.get("text"), str):
            return [value["text"]]
        return []
    return []


class FakeUpstream:
    def __init__(
        self,
        *,
        name: str = "fake",
        kind: str = "shared",
        count_tokens: Callable[[str], int] | None = None,
        script: Callable[[Received], Scripted] | None = None,
        manifest: dict[str, Any] | None = None,
        keep_ledger: bool = True,
    ) -> None:
        self.name = name
        self.kind = kind
        self.ledger = Ledger(keep=keep_ledger)
        self.tokenized = Ledger(keep=keep_ledger)  # POST /tokenize bodies (they carry prompts too)
        self.tokenize_status = 200
        self.on_tokenize: Callable[[Received], None] | None = None  # sees each /tokenize as it arrives
        self.count_tokens = count_tokens or (lambda t: max(1, (len(t.encode()) + 3) // 4) if t else 0)
        self.script: Callable[[Received], Scripted] = script or (lambda r: Scripted())
        self.manifest = manifest if manifest is not None else (HARDENED_MANIFEST if kind == "onprem" else None)
        self.manifest_requests = 0

    # ---- token accounting, like an engine ----------------------------------------------------

    def prompt_tokens(self, path: str, body: dict[str, Any]) -> int:
        if path.endswith("/chat/completions"):
            total = 3
            for msg in body.get("messages") or ():
                total += 3 + sum(self.count_tokens(s) for s in _strings(msg.get("content")))
                for call in msg.get("tool_calls") or ():
                    total += self.count_tokens(call.get("function", {}).get("arguments", ""))
                if isinstance(msg.get("name"), str):
                    total += self.count_tokens(msg["name"])
            return total
        key = "prompt" if path.endswith("/completions") else "input"
        value = body.get(key)
        ids = 0
        if isinstance(value, list):  # prompts given as token ids
            ids = (
                len(value)
                if value and all(isinstance(v, int) for v in value)
                else sum(len(v) for v in value if isinstance(v, list))
            )
        return ids + sum(self.count_tokens(s) for s in _strings(value))

    async def _tokenize(self, r: Received, send: Any) -> None:
        """vLLM's /tokenize: the same accounting as ``usage.prompt_tokens`` of the real request."""
        if self.tokenize_status != 200:
            await _json(send, self.tokenize_status, {"error": {"message": "scripted", "code": "scripted"}})
            return
        path = "/v1/chat/completions" if "messages" in r.body else "/v1/completions"
        await _json(send, 200, {"count": self.prompt_tokens(path, r.body), "max_model_len": 1_000_000})

    # ---- ASGI -----------------------------------------------------------------------------

    async def app(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        path = scope["path"]
        if scope["method"] == "GET":
            await self._get(path, send)
            return
        chunks = []
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                # The client died mid-body (kill -9 tests): no request was received, so the
                # ledger, which stands for "what the engine processed", does not count it.
                self.ledger.incomplete += 1
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        raw = b"".join(chunks)
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        if path == "/tokenize":  # vLLM's counting route: no generation, so its own ledger
            counted = self.tokenized.add(path, headers, raw)
            if self.on_tokenize is not None:
                self.on_tokenize(counted)
            await self._tokenize(counted, send)
            return
        received = self.ledger.add(path, headers, raw)
        answer = self.script(received)
        if answer.delay_s:
            await asyncio.sleep(answer.delay_s)
        if answer.status != 200:
            body = answer.error_body or {"error": {"message": "scripted failure", "type": "server_error",
                                                    "code": "scripted"}}  # fmt: skip
            await _json(send, answer.status, body)
            return
        if path.endswith(PROTOCOL_PATHS):
            await answer_protocol(self, path, received, answer, send)
            return
        usage = self._usage(path, received.body, answer)
        if path.endswith("/embeddings"):
            inputs = received.body.get("input")
            n = len(inputs) if isinstance(inputs, list) else 1
            data = [{"object": "embedding", "index": i, "embedding": [0.0, 0.1, 0.2]} for i in range(n)]
            body = {"object": "list", "data": data, "model": received.body.get("model")}
            if usage is not None:
                body["usage"] = {"prompt_tokens": usage["prompt_tokens"], "total_tokens": usage["prompt_tokens"]}
            await _json(send, 200, body)
            return
        if received.body.get("stream"):
            await self._stream(send, path, received, answer, usage)
            return
        await _json(send, 200, self._completion(path, received, answer, usage))

    async def _get(self, path: str, send: Any) -> None:
        if path == "/tiergate/manifest" and self.manifest is not None:
            self.manifest_requests += 1
            await _json(send, 200, self.manifest)
        elif path.endswith("/models"):
            await _json(send, 200, {"object": "list", "data": []})
        else:
            await _json(send, 404, {"error": {"message": "not found", "type": "invalid_request_error"}})

    def _usage(self, path: str, body: dict[str, Any], answer: Scripted) -> dict[str, Any] | None:
        if answer.omit_usage:
            return None
        prompt = answer.prompt_tokens if answer.prompt_tokens is not None else self.prompt_tokens(path, body)
        usage: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": answer.completion_tokens,
                                 "total_tokens": prompt + answer.completion_tokens}  # fmt: skip
        if answer.cached_tokens is not None:
            usage["prompt_tokens_details"] = {"cached_tokens": answer.cached_tokens}
        return usage

    def _completion(self, path: str, r: Received, a: Scripted, usage: dict[str, int] | None) -> dict[str, Any]:
        base = {"id": f"cmpl-{r.seq}", "created": int(r.at), "model": r.body.get("model")}
        if path.endswith("/chat/completions"):
            message: dict[str, Any] = {"role": "assistant", "content": a.content}
            if a.tool_calls:
                message["tool_calls"] = a.tool_calls
                message["content"] = a.content or None
            choice = {"index": 0, "message": message, "finish_reason": a.finish_reason}
            out = {**base, "object": "chat.completion", "choices": [choice]}
        else:
            choice = {"index": 0, "text": a.content, "finish_reason": a.finish_reason, "logprobs": None}
            out = {**base, "object": "text_completion", "choices": [choice]}
        if usage is not None:
            out["usage"] = usage
        return out

    async def _stream(self, send: Any, path: str, r: Received, a: Scripted, usage: dict[str, int] | None) -> None:
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream")]})  # fmt: skip
        chat = path.endswith("/chat/completions")
        base = {"id": f"cmpl-{r.seq}", "created": int(r.at), "model": r.body.get("model"),
                "object": "chat.completion.chunk" if chat else "text_completion"}  # fmt: skip
        pieces = a.chunks if a.chunks is not None else ([a.content] if a.content else [])
        events: list[dict[str, Any]] = []
        if chat:
            events.append({**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                                "finish_reason": None}]})  # fmt: skip
        for piece in pieces:
            delta = {"content": piece} if chat else None
            choice = (
                {"index": 0, "delta": delta, "finish_reason": None}
                if chat
                else {"index": 0, "text": piece, "finish_reason": None}
            )
            events.append({**base, "choices": [choice]})
        for i, call in enumerate(a.tool_calls or ()):
            args = call["function"]["arguments"]
            half = len(args) // 2
            head = {"index": i, "id": call.get("id", f"call_{i}"), "type": "function",
                    "function": {"name": call["function"]["name"], "arguments": args[:half]}}  # fmt: skip
            events.append({**base, "choices": [{"index": 0, "delta": {"tool_calls": [head]}, "finish_reason": None}]})
            tail = {"index": i, "function": {"arguments": args[half:]}}
            events.append({**base, "choices": [{"index": 0, "delta": {"tool_calls": [tail]}, "finish_reason": None}]})
        final = (
            {"index": 0, "delta": {}, "finish_reason": a.finish_reason}
            if chat
            else {"index": 0, "text": "", "finish_reason": a.finish_reason}
        )
        events.append({**base, "choices": [final]})
        options = r.body.get("stream_options") or {}
        if usage is not None and options.get("include_usage"):
            events.append({**base, "choices": [], "usage": usage})
        for n, event in enumerate(events):
            if a.cut_after_chunks is not None and n >= a.cut_after_chunks:
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                return
            if a.chunk_delay_s:
                await asyncio.sleep(a.chunk_delay_s)
            data = b"data: " + json.dumps(event).encode() + b"\n\n"
            await send({"type": "http.response.body", "body": data, "more_body": True})
        await send({"type": "http.response.body", "body": b"data: [DONE]\n\n", "more_body": False})


async def _json(send: Any, status: int, body: dict[str, Any]) -> None:
    data = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(data)).encode())]})  # fmt: skip
    await send({"type": "http.response.body", "body": data})
