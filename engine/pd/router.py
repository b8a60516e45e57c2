"""The split router: one address in front of a prefill and a decode instance, aborting both together.

Routes::

    POST /v1/completions, /v1/chat/completions   prefill (max_tokens 1), then decode, stream or not
    GET  /tiergate/manifest                      both halves' manifests, combined (503 if either fails)
    GET  /health                                 200 while both halves answer /health
    GET  /metrics                                tiergate_pd_* counters

Each request gets a fresh transfer id (``kv_transfer_params.tiergate_transfer_id``) that both
halves see, so the KV guard on the decode side checks the blocks against exactly the record the
prefill side wrote. **Paired aborts**: when the client goes away or ``request_timeout_s`` passes,
the router drops whatever half is in flight (closing the connection is how vLLM's server aborts a
request) *and* the other: a decode that never started is acknowledged to the prefill side in
the record directory (no consumer will read those blocks, so the prefill's held blocks drain at
once instead of waiting for the guard's timeout); a decode in flight is aborted, and its guard
holds the blocks until the prefill side acknowledged. Nothing is ever decoded for a client that
left, and no half outlives the other by more than the guard's release timeout.

Errors from the halves are relayed with their status; the router's own are 502 (a half
unreachable) and 504 (the limit), in the OpenAI error shape.
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


@dataclass(frozen=True, slots=True)
class SplitRouterConfig:
    prefill_url: str  # the prefill instance's front (http://host:port)
    decode_url: str  # the decode instance's front
    record_dir: Path | None = None  # the guard's shared directory: acks for decodes never started
    decode_ranks: int = 1  # tensor-parallel ranks of the decode instance
    request_timeout_s: float = 600.0  # the limit on one request, both halves together


class _Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.aborts = Counter("tiergate_pd_paired_aborts", "Requests whose halves were aborted together",
                              ["reason", "stage"], registry=self.registry)  # fmt: skip
        self.requests = Counter("tiergate_pd_requests", "Split requests by outcome", ["outcome"],
                                registry=self.registry)  # fmt: skip


def _error(status: int, message: str, code: str) -> Response[Any]:
    body = {"error": {"message": message, "type": "engine_error", "code": code, "param": None}}
    return Response(body, status_code=status, media_type="application/json")


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

    def __init__(self, state: State, path: str, body: dict[str, Any]) -> None:
        self.state, self.path, self.body = state, path, body
        self.tid = secrets.token_urlsafe(18)
        self.decode_started = False

    @property
    def cfg(self) -> SplitRouterConfig:
        return self.state["config"]  # type: ignore[no-any-return]  # litestar's State holds Any; set at startup

    async def prefill(self) -> httpx.Response:
        body = {**self.body, "max_tokens": 1, "stream": False, "kv_transfer_params": {
            **(self.body.get("kv_transfer_params") or {}), TRANSFER_ID_KEY: self.tid, "do_remote_decode": True}}  # fmt: skip
        body.pop("max_completion_tokens", None)
        body.pop("stream_options", None)
        answer: httpx.Response = await self.state["prefill"].post(self.path, json=body)
        return answer

    def decode_body(self, prefill_answer: dict[str, Any]) -> dict[str, Any]:
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


async def _generate(request: Request[Any, Any, State], state: State, path: str) -> Response[Any] | Stream:
    metrics: _Metrics = state["metrics"]
    try:
        body = json.loads(await request.body())
    except ValueError:
        return _error(400, "request body is not JSON", "invalid_json")
    if not isinstance(body, dict):
        return _error(400, "request body is not a JSON object", "invalid_json")
    split = _Split(state, path, body)
    cfg = split.cfg
    loop = asyncio.get_running_loop()
    deadline = loop.time() + cfg.request_timeout_s
    work = asyncio.ensure_future(split.prefill())
    gone = asyncio.ensure_future(_disconnected(request))
    try:
        done, _ = await asyncio.wait({work, gone}, timeout=cfg.request_timeout_s, return_when=asyncio.FIRST_COMPLETED)
        if work not in done:
            reason = "client_gone" if gone in done else "timeout"
            work.cancel()  # closes the prefill connection: vLLM aborts the request
            split.release_unread()
            metrics.aborts.labels(reason, "prefill").inc()
            return _error(504, "split request exceeded its time limit", "timeout")
        try:
            first = work.result()
        except httpx.HTTPError as exc:
            split.release_unread()
            return _error(502, f"prefill instance unreachable: {type(exc).__name__}", "engine_unreachable")
        if first.status_code != 200:
            split.release_unread()
            metrics.requests.labels("prefill_error").inc()
            return Response(first.content, status_code=first.status_code,
                            media_type=first.headers.get("content-type", "application/json"))  # fmt: skip
        decode_body = split.decode_body(first.json())
        split.decode_started = True
        if decode_body.get("stream"):
            return await _stream_decode(state, split, decode_body, gone, deadline)
        work = asyncio.ensure_future(state["decode"].post(path, json=decode_body))
        done, _ = await asyncio.wait({work, gone}, timeout=max(0.0, deadline - loop.time()),
                                     return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
        if work not in done:
            work.cancel()
            metrics.aborts.labels("client_gone" if gone in done else "timeout", "decode").inc()
            return _error(504, "split request exceeded its time limit", "timeout")
        try:
            answer = work.result()
        except httpx.HTTPError as exc:
            return _error(502, f"decode instance unreachable: {type(exc).__name__}", "engine_unreachable")
        metrics.requests.labels("ok" if answer.status_code == 200 else "decode_error").inc()
        return Response(answer.content, status_code=answer.status_code,
                        media_type=answer.headers.get("content-type", "application/json"))  # fmt: skip
    finally:
        gone.cancel()
        work.cancel()


async def _stream_decode(state: State, split: _Split, body: dict[str, Any], gone: asyncio.Future[None],
                         deadline: float) -> Response[Any] | Stream:  # fmt: skip
    metrics: _Metrics = state["metrics"]
    upstream_cm = state["decode"].stream("POST", split.path, json=body)
    try:
        upstream = await upstream_cm.__aenter__()
    except httpx.HTTPError as exc:
        return _error(502, f"decode instance unreachable: {type(exc).__name__}", "engine_unreachable")
    if upstream.status_code != 200:
        content = await upstream.aread()
        await upstream_cm.__aexit__(None, None, None)
        return Response(content, status_code=upstream.status_code,
                        media_type=upstream.headers.get("content-type", "application/json"))  # fmt: skip
    loop = asyncio.get_running_loop()

    async def relay() -> AsyncIterator[bytes]:
        chunks = upstream.aiter_bytes()
        finished = timed_out = False
        try:
            while True:
                left = deadline - loop.time()
                if left <= 0:
                    timed_out = True
                    metrics.aborts.labels("timeout", "decode").inc()
                    yield b'data: {"error": {"message": "split request exceeded its time limit", "code": "timeout"}}\n\n'
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
            # Closing the stream is the abort vLLM understands.
            await upstream_cm.__aexit__(None, None, None)

    return Stream(relay(), status_code=200, media_type="text/event-stream")


@post("/v1/completions")
async def completions_route(request: Request[Any, Any, State], state: State) -> Response[Any] | Stream:
    return await _generate(request, state, "/v1/completions")


@post("/v1/chat/completions")
async def chat_route(request: Request[Any, Any, State], state: State) -> Response[Any] | Stream:
    return await _generate(request, state, "/v1/chat/completions")


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
        route_handlers=[completions_route, chat_route, manifest_route, health_route, metrics_route],
        state=State({"config": config, "metrics": _Metrics()}),
        on_startup=[open_clients],
        on_shutdown=[close_clients],
        openapi_config=None,
    )
