"""The split router: one address in front of a prefill and a decode instance, aborting both together.

Routes (what an engine front serves, so the gateway talks to a split as to one engine)::

    POST /v1/completions, /v1/chat/completions   prefill (output limit 1), then decode, stream or not
    POST /v1/messages                            the same for Anthropic Messages (errors in its shape)
    POST /v1/responses                           the same for OpenAI Responses (the prefill leg unstored)
    POST /tokenize, /v1/messages/count_tokens    counted by the prefill half (same model and template)
    GET  /v1/models                              the prefill half's
    GET  /tiergate/manifest                      both halves' manifests, combined (503 if either fails)
    GET  /health                                 200 while both halves answer /health
    GET  /metrics                                tiergate_pd_* counters

Each request gets a fresh transfer id (``kv_transfer_params.tiergate_transfer_id``) that both
halves see, so the KV guard on the decode side checks the blocks against exactly the record the
prefill side wrote. **Paired aborts**: when the client goes away or ``request_timeout_s`` passes,
the router drops whatever half is in flight (closing the connection is how vLLM's server, and the
engine front before it, abort a request) *and* the other: a decode that never started is
acknowledged to the prefill side in the record directory (no consumer will read those blocks, so
the prefill's held blocks drain at once instead of waiting for the guard's timeout); a decode in
flight is aborted, and its guard holds the blocks until the prefill side acknowledged. Nothing is
ever decoded for a client that left, and no half outlives the other by more than the guard's
release timeout.

Errors from the halves are relayed with their status; the router's own are 502 (a half
unreachable) and 504 (the limit), in the API's own error shape.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from litestar import Litestar, Request, get, post
from litestar.datastructures import State
from litestar.response import Response, Stream
from prometheus_client import CollectorRegistry, Counter, generate_latest

from engine.manifest import MANIFEST_PATH, EngineManifest, ManifestError, fetch_manifest
from engine.pd.records import RecordStore
from engine.pd.settings import TRANSFER_ID_KEY

__all__ = ["SplitRouterConfig", "combine_manifests", "create_router"]

# Request headers both halves need: the front derives cache_salt from the tenant when configured to.
_FORWARD_HEADERS = ("x-tiergate-tenant",)


@dataclass(frozen=True, slots=True)
class SplitRouterConfig:
    prefill_url: str  # the prefill instance's front (http://host:port)
    decode_url: str  # the decode instance's front
    record_dir: Path | None = None  # the guard's shared directory: acks for decodes never started
    decode_ranks: int = 1  # tensor-parallel ranks of the decode instance
    request_timeout_s: float = 600.0  # the limit on one request, both halves together


@dataclass(frozen=True, slots=True)
class _Api:
    """One generation API as the two legs see it."""

    path: str
    limit_key: str  # the output limit the prefill leg sets to 1
    shape: str  # error shape: "openai", "anthropic" or "responses"


_COMPLETIONS = _Api("/v1/completions", "max_tokens", "openai")
_CHAT = _Api("/v1/chat/completions", "max_tokens", "openai")
_MESSAGES = _Api("/v1/messages", "max_tokens", "anthropic")
_RESPONSES = _Api("/v1/responses", "max_output_tokens", "responses")
# Never on a prefill leg: other output limits, a lower bound above 1, streaming options.
_PREFILL_DROPS = ("max_completion_tokens", "min_tokens", "stream_options")


class _Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.aborts = Counter("tiergate_pd_paired_aborts", "Requests whose halves were aborted together",
                              ["reason", "stage"], registry=self.registry)  # fmt: skip
        self.requests = Counter("tiergate_pd_requests", "Split requests by outcome", ["outcome"],
                                registry=self.registry)  # fmt: skip


def _error(status: int, message: str, code: str, shape: str = "openai") -> Response[Any]:
    body: dict[str, Any]
    if shape == "anthropic":
        kind = "timeout_error" if status == 504 else "api_error"
        body = {"type": "error", "error": {"type": kind, "message": message}, "code": code}
    else:
        body = {"error": {"message": message, "type": "engine_error", "code": code, "param": None}}
    return Response(body, status_code=status, media_type="application/json")


def _sse_error(message: str, code: str, shape: str) -> bytes:
    """The stream's last event when the router ends it, as the API's clients read an error."""
    data: dict[str, Any]
    if shape == "anthropic":
        data = {"type": "error", "error": {"type": "timeout_error", "message": message}}
        return b"event: error\ndata: " + json.dumps(data).encode() + b"\n\n"
    if shape == "responses":
        data = {"type": "error", "code": code, "message": message, "param": None}
        return b"event: error\ndata: " + json.dumps(data).encode() + b"\n\n"
    return b"data: " + json.dumps({"error": {"message": message, "code": code}}).encode() + b"\n\n"


def _relayed(answer: httpx.Response) -> Response[Any]:
    """A half's answer as it came: status, body, content type and the front's X-Tiergate-* headers."""
    headers = {k: v for k, v in answer.headers.items() if k.lower().startswith("x-tiergate-")}
    return Response(answer.content, status_code=answer.status_code, headers=headers,
                    media_type=answer.headers.get("content-type", "application/json"))  # fmt: skip


def combine_manifests(prefill: EngineManifest, decode: EngineManifest) -> EngineManifest:
    """One manifest for the pair: a protection holds only if it holds on both halves; the pool
    and context are the smaller half's; ``paired_aborts`` is this router's own."""
    small = prefill if prefill.pool_tokens < decode.pool_tokens else decode
    flags = {
        f.name: getattr(prefill, f.name) and getattr(decode, f.name)
        for f in dataclasses.fields(EngineManifest)
        if f.type == "bool"
    }
    flags.update(prefix_caching=prefill.prefix_caching or decode.prefix_caching, disaggregated=True,
                 paired_aborts=True)  # fmt: skip
    return dataclasses.replace(
        decode,
        **flags,
        plugin_version=decode.plugin_version if prefill.plugin_version else None,
        zeroing_processes=min(prefill.zeroing_processes, decode.zeroing_processes),
        max_model_len=min(prefill.max_model_len, decode.max_model_len),
        block_size=small.block_size,
        num_blocks=small.num_blocks,
        pool_tokens=small.pool_tokens,
    )


class _Split:
    """One client request's two halves."""

    def __init__(self, state: State, api: _Api, body: dict[str, Any], headers: dict[str, str]) -> None:
        self.state, self.api, self.body, self.headers = state, api, body, headers
        self.tid = secrets.token_urlsafe(18)
        self.decode_started = False

    @property
    def cfg(self) -> SplitRouterConfig:
        return self.state["config"]  # type: ignore[no-any-return]  # litestar's State holds Any; set at startup

    async def prefill(self) -> httpx.Response:
        params = {**(self.body.get("kv_transfer_params") or {}), TRANSFER_ID_KEY: self.tid, "do_remote_decode": True}
        body = {**self.body, self.api.limit_key: 1, "stream": False, "kv_transfer_params": params}
        for key in _PREFILL_DROPS:
            body.pop(key, None)
        if self.api is _RESPONSES:
            body["store"] = False  # the prefill leg's one-token answer is nobody's conversation
        answer: httpx.Response = await self.state["prefill"].post(self.api.path, json=body, headers=self.headers)
        return answer

    def decode_body(self, prefill_answer: object) -> dict[str, Any]:
        params = prefill_answer.get("kv_transfer_params") if isinstance(prefill_answer, dict) else None
        return {**self.body, "kv_transfer_params": {**(params or {}), TRANSFER_ID_KEY: self.tid}}

    def release_unread(self) -> None:
        """The decode half never started: tell the prefill side nobody will read its blocks."""
        store_dir = self.cfg.record_dir
        if self.decode_started or store_dir is None:
            return
        store = RecordStore(store_dir)
        for rank in range(self.cfg.decode_ranks):
            store.ack(self.tid, "consumer", rank)


async def _disconnected(request: Request[Any, Any, State]) -> None:
    """Returns when the client has gone (the body is already read: only disconnects remain)."""
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


def _forwarded(request: Request[Any, Any, State]) -> dict[str, str]:
    return {name: value for name in _FORWARD_HEADERS if (value := request.headers.get(name)) is not None}


async def _generate(request: Request[Any, Any, State], state: State, api: _Api) -> Response[Any] | Stream:
    metrics: _Metrics = state["metrics"]
    try:
        body = json.loads(await request.body())
    except ValueError:
        return _error(400, "request body is not JSON", "invalid_json", api.shape)
    if not isinstance(body, dict):
        return _error(400, "request body is not a JSON object", "invalid_json", api.shape)
    split = _Split(state, api, body, _forwarded(request))
    cfg = split.cfg
    loop = asyncio.get_running_loop()
    deadline = loop.time() + cfg.request_timeout_s
    work = asyncio.ensure_future(split.prefill())
    gone = asyncio.ensure_future(_disconnected(request))
    try:
        done, _ = await asyncio.wait({work, gone}, timeout=cfg.request_timeout_s, return_when=asyncio.FIRST_COMPLETED)
        if work not in done:
            reason = "client_gone" if gone in done else "timeout"
            work.cancel()  # closes the prefill connection: the front and vLLM abort the request
            split.release_unread()
            metrics.aborts.labels(reason, "prefill").inc()
            return _error(504, "split request exceeded its time limit", "timeout", api.shape)
        try:
            first = work.result()
        except httpx.HTTPError as exc:
            split.release_unread()
            return _error(502, f"prefill instance unreachable: {type(exc).__name__}", "engine_unreachable", api.shape)
        if first.status_code != 200:
            split.release_unread()
            metrics.requests.labels("prefill_error").inc()
            return _relayed(first)
        decode_body = split.decode_body(first.json())
        split.decode_started = True
        if decode_body.get("stream"):
            return await _stream_decode(state, split, decode_body, deadline, gone)
        work = asyncio.ensure_future(state["decode"].post(api.path, json=decode_body, headers=split.headers))
        done, _ = await asyncio.wait({work, gone}, timeout=max(0.0, deadline - loop.time()),
                                     return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
        if work not in done:
            work.cancel()
            metrics.aborts.labels("client_gone" if gone in done else "timeout", "decode").inc()
            return _error(504, "split request exceeded its time limit", "timeout", api.shape)
        try:
            answer = work.result()
        except httpx.HTTPError as exc:
            return _error(502, f"decode instance unreachable: {type(exc).__name__}", "engine_unreachable", api.shape)
        metrics.requests.labels("ok" if answer.status_code == 200 else "decode_error").inc()
        return _relayed(answer)
    finally:
        gone.cancel()
        work.cancel()


async def _stream_decode(state: State, split: _Split, body: dict[str, Any], deadline: float,
                         gone: asyncio.Future[None]) -> Response[Any] | Stream:  # fmt: skip
    metrics: _Metrics = state["metrics"]
    shape = split.api.shape
    client: httpx.AsyncClient = state["decode"]
    loop = asyncio.get_running_loop()
    upstream: httpx.Response | None = None

    async def first_chunk() -> tuple[httpx.Response, AsyncIterator[bytes], bytes | None]:
        """The half's headers, then its first chunk (None: it ended with none). vLLM sends its
        headers before the request is even scheduled: a decode waiting in its queue has sent
        nothing else yet, so until then the client can still get a 504 in the API's shape."""
        nonlocal upstream
        request = client.build_request("POST", split.api.path, json=body, headers=split.headers)
        upstream = answer = await client.send(request, stream=True)
        chunks = answer.aiter_bytes()
        if answer.status_code != 200:
            await answer.aread()
            return answer, chunks, None
        with contextlib.suppress(StopAsyncIteration):
            return answer, chunks, await chunks.__anext__()
        return answer, chunks, None

    opening = asyncio.ensure_future(first_chunk())
    waiters: set[asyncio.Future[Any]] = {opening, gone}
    done, _ = await asyncio.wait(waiters, timeout=max(0.0, deadline - loop.time()),
                                 return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
    if opening not in done:
        opening.cancel()
        with contextlib.suppress(asyncio.CancelledError, httpx.HTTPError):
            await opening
        if upstream is not None:
            await upstream.aclose()  # closing the stream is the abort the front and vLLM understand
        metrics.aborts.labels("client_gone" if gone in done else "timeout", "decode").inc()
        return _error(504, "split request exceeded its time limit", "timeout", shape)
    try:
        live, chunks, first = opening.result()
    except httpx.HTTPError as exc:
        if upstream is not None:
            await upstream.aclose()
        return _error(502, f"decode instance unreachable: {type(exc).__name__}", "engine_unreachable", shape)
    if live.status_code != 200:
        await live.aclose()
        return _relayed(live)
    headers = {k: v for k, v in live.headers.items() if k.lower().startswith("x-tiergate-")}

    async def relay() -> AsyncIterator[bytes]:
        finished = timed_out = False
        try:
            if first is None:
                finished = True
                metrics.requests.labels("ok").inc()
                return
            yield first
            while True:
                left = deadline - loop.time()
                if left <= 0:
                    timed_out = True
                    metrics.aborts.labels("timeout", "decode").inc()
                    yield _sse_error("split request exceeded its time limit", "timeout", shape)
                    return
                try:
                    chunk = await asyncio.wait_for(chunks.__anext__(), timeout=left)
                except StopAsyncIteration:
                    finished = True
                    metrics.requests.labels("ok").inc()
                    return
                except TimeoutError:
                    continue
                yield chunk
        finally:
            if not finished and not timed_out:
                metrics.aborts.labels("client_gone", "decode").inc()
            # Closing the stream is the abort the front and vLLM understand.
            await live.aclose()

    return Stream(relay(), status_code=200, headers=headers, media_type="text/event-stream")


@post("/v1/completions")
async def completions_route(request: Request[Any, Any, State], state: State) -> Response[Any] | Stream:
    return await _generate(request, state, _COMPLETIONS)


@post("/v1/chat/completions")
async def chat_route(request: Request[Any, Any, State], state: State) -> Response[Any] | Stream:
    return await _generate(request, state, _CHAT)


@post("/v1/messages")
async def messages_route(request: Request[Any, Any, State], state: State) -> Response[Any] | Stream:
    return await _generate(request, state, _MESSAGES)


@post("/v1/responses")
async def responses_route(request: Request[Any, Any, State], state: State) -> Response[Any] | Stream:
    return await _generate(request, state, _RESPONSES)


async def _to_prefill(request: Request[Any, Any, State], state: State, shape: str) -> Response[Any]:
    """Requests that generate nothing: the prefill half answers (it serves the same model)."""
    method, path = request.method, request.url.path
    body = await request.body() if method == "POST" else None
    try:
        answer = await state["prefill"].request(method, path, content=body, headers={
            "content-type": "application/json", **_forwarded(request)})  # fmt: skip
    except httpx.HTTPError as exc:
        return _error(502, f"prefill instance unreachable: {type(exc).__name__}", "engine_unreachable", shape)
    return _relayed(answer)


@post("/tokenize")
async def tokenize_route(request: Request[Any, Any, State], state: State) -> Response[Any]:
    return await _to_prefill(request, state, "openai")


@post("/v1/messages/count_tokens")
async def count_tokens_route(request: Request[Any, Any, State], state: State) -> Response[Any]:
    return await _to_prefill(request, state, "anthropic")


@get("/v1/models")
async def models_route(request: Request[Any, Any, State], state: State) -> Response[Any]:
    return await _to_prefill(request, state, "openai")


@get(MANIFEST_PATH)
async def manifest_route(state: State) -> Response[Any]:
    try:
        prefill, decode = await asyncio.gather(
            fetch_manifest(state["control"], state["config"].prefill_url),
            fetch_manifest(state["control"], state["config"].decode_url),
        )
    except ManifestError as exc:
        return _error(503, str(exc), "engine_down")
    return Response(combine_manifests(prefill, decode).to_json(), media_type="application/json")


@get("/health")
async def health_route(state: State) -> Response[Any]:
    cfg: SplitRouterConfig = state["config"]
    ok = True
    for url in (cfg.prefill_url, cfg.decode_url):
        with contextlib.suppress(httpx.HTTPError):
            if (await state["control"].get(url.rstrip("/") + "/health")).status_code == 200:
                continue
        ok = False
    return Response({"ok": ok}, status_code=200 if ok else 503, media_type="application/json")


@get("/metrics")
async def metrics_route(state: State) -> Response[Any]:
    return Response(generate_latest(state["metrics"].registry).decode(), media_type="text/plain; version=0.0.4")


def create_router(config: SplitRouterConfig, transport: httpx.AsyncBaseTransport | None = None) -> Litestar:
    """The router app; ``transport`` replaces the network towards both halves (tests)."""

    async def open_clients(app: Litestar) -> None:
        timeout = httpx.Timeout(10.0, read=config.request_timeout_s)
        for name, url in (("prefill", config.prefill_url), ("decode", config.decode_url)):
            app.state[name] = httpx.AsyncClient(base_url=url, timeout=timeout, transport=transport)
        app.state["control"] = httpx.AsyncClient(timeout=5.0, transport=transport)

    async def close_clients(app: Litestar) -> None:
        for name in ("prefill", "decode", "control"):
            await app.state[name].aclose()

    return Litestar(
        route_handlers=[completions_route, chat_route, messages_route, responses_route, tokenize_route,
                        count_tokens_route, models_route, manifest_route, health_route, metrics_route],
        state=State({"config": config, "metrics": _Metrics()}),
        on_startup=[open_clients],
        on_shutdown=[close_clients],
        openapi_config=None,
    )  # fmt: skip
