"""The hardened front of the engine: the only port clients reach; vLLM listens on loopback.

Routes::

    GET  /tiergate/manifest     the engine manifest (503 while vLLM is down)
    GET  /health                200 only while vLLM runs
    GET  /metrics               our counters, then vLLM's own /metrics
    GET  /v1/models             proxied
    POST /tokenize              proxied (exact counts for callers)
    POST /v1/chat/completions   admission (engine.admission), then proxied, stream or not
    POST /v1/completions        same
    POST /v1/messages           same, for vLLM's Anthropic Messages API (counted by its own
                                /v1/messages/count_tokens; errors in Anthropic's shape)
    POST /v1/messages/count_tokens  admission of the shape, then proxied
    POST /v1/responses          same admission (counted with /tokenize over vLLM's conversion to
                                chat messages, so its usage is checked within a band)

Anything else is 404: no vLLM admin or dev route is reachable through the front. Each generation
request is counted with vLLM's own ``/tokenize`` before it is forwarded; the answer's
``usage.prompt_tokens`` must equal that count, or the client gets a 502 instead of the text
(the 2026 leak answered 200 for a prompt replaced by a one-token placeholder).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
from litestar import Litestar, Request, get, post
from litestar.datastructures import State
from litestar.response import Response, Stream
from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest

from engine.admission import (
    AdmissionError,
    admit,
    completion_prompt_tokens,
    prepare_body,
    prepare_messages,
    prepare_responses,
)
from engine.counting import responses_tokenize_request, tokenize_request
from engine.launcher import EngineStartError
from formats.sse import Event, SSEDecoder, SSELineTooLong, encode_event
from engine.manifest import MANIFEST_PATH
from engine.salt import derive_cache_salt
from engine.supervisor import EngineSupervisor

__all__ = ["TENANT_HEADER", "create_front"]

log = logging.getLogger("tiergate.engine.front")

TENANT_HEADER = "x-tiergate-tenant"
_PASS_HEADERS = ("content-type",)


class _Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.rejected = Counter(
            "tiergate_engine_rejected",
            "Requests refused by admission",
            ["reason"],
            registry=r,
        )
        self.clamped = Counter(
            "tiergate_engine_max_tokens_clamped",
            "max_tokens lowered to fit",
            registry=r,
        )
        self.dropped = Counter(
            "tiergate_engine_truncation_params_dropped",
            "Requests with truncation params removed",
            registry=r,
        )
        self.integrity = Counter(
            "tiergate_engine_integrity_failures",
            "Answers withheld: usage disagreed with our count",
            registry=r,
        )
        self.zeroed = Gauge(
            "tiergate_engine_kv_blocks_zeroed_total",
            "KV blocks zeroed on allocation (all vLLM processes)",
            registry=r,
        )
        self.plugin_procs = Gauge(
            "tiergate_engine_plugin_processes",
            "vLLM processes with the KV hygiene plugin active",
            registry=r,
        )
        self.plugin_missing = Gauge(
            "tiergate_engine_plugin_missing_processes",
            "vLLM processes without the plugin",
            registry=r,
        )
        # Split deployments (engine.pd.guard), summed over this instance's vLLM processes.
        self.deferred = Gauge("tiergate_kv_deferred_release_total",
                              "Blocks of requests finished mid-transfer, released by outcome", ["outcome"],
                              registry=r)  # fmt: skip
        self.kv_refused = Gauge("tiergate_kv_load_refused_total", "KV loads the guard refused, by check",
                                ["check"], registry=r)  # fmt: skip


def _error(status: int, message: str, code: str, headers: dict[str, str] | None = None) -> Response[Any]:
    kind = "invalid_request_error" if status < 500 else "engine_error"
    body = {"error": {"message": message, "type": kind, "code": code, "param": None}}
    return Response(body, status_code=status, headers=headers or {}, media_type="application/json")


def _ok(
    content: Any,
    headers: dict[str, str] | None = None,
    media_type: str = "application/json",
) -> Response[Any]:
    return Response(content, status_code=200, headers=headers or {}, media_type=media_type)


def _client(state: State) -> httpx.AsyncClient:
    return state["vllm_client"]  # type: ignore[no-any-return]  # litestar's State holds Any; set at startup


def _supervisor(state: State) -> EngineSupervisor:
    return state["supervisor"]  # type: ignore[no-any-return]  # litestar's State holds Any; set at startup


@get(MANIFEST_PATH, sync_to_thread=False)
def manifest_route(state: State) -> Response[Any]:
    try:
        return _ok(_supervisor(state).manifest().to_json())
    except EngineStartError:
        return _error(503, "engine is not running", "engine_down")


@get("/health", sync_to_thread=False)
def health_route(state: State) -> Response[Any]:
    up = _supervisor(state).alive()
    return Response({"ok": up}, status_code=200 if up else 503, media_type="application/json")


@get("/metrics")
async def metrics_route(state: State) -> Response[Any]:
    metrics: _Metrics = state["metrics"]
    status = _supervisor(state).zeroing_status()
    metrics.zeroed.set(status.blocks_zeroed)
    metrics.plugin_procs.set(status.processes)
    metrics.plugin_missing.set(len(status.missing))
    if _supervisor(state).config.disaggregation is not None:
        from engine.pd.counters import read_guard_processes

        counts = [p.counts for p in read_guard_processes(_supervisor(state).state_dir)]
        for outcome in ("drained", "timeout"):
            metrics.deferred.labels(outcome).set(sum(c[f"deferred_{outcome}"] for c in counts))
        for check, key in (("boundary", "boundary_refused"), ("checksum", "checksum_mismatch")):
            metrics.kv_refused.labels(check).set(sum(c[key] for c in counts))
    ours = generate_latest(metrics.registry).decode()
    try:
        theirs = (await _client(state).get("/metrics")).text
    except httpx.HTTPError:
        theirs = ""
    return _ok(ours + theirs, media_type="text/plain; version=0.0.4")


async def _proxy(state: State, method: str, path: str, body: bytes | None = None) -> Response[Any]:
    try:
        upstream = await _client(state).request(
            method, path, content=body, headers={"content-type": "application/json"}
        )
    except httpx.HTTPError as exc:
        return _error(502, f"engine unreachable: {type(exc).__name__}", "engine_unreachable")
    return Response(
        upstream.content,
        status_code=upstream.status_code,
        media_type=upstream.headers.get("content-type", "application/json"),
    )


async def _post_unless_gone(request: Request[Any, Any, State], state: State, path: str,
                            body: dict[str, Any]) -> httpx.Response | None:  # fmt: skip
    """POST to vLLM, or None as soon as our client has gone. Cancelling the call closes the
    connection, which is how vLLM's server learns to abort the request; waiting instead would
    keep vLLM generating for nobody, and a split router's paired abort would stop at this front.
    (Streams need no such watch: the response stream is cancelled on disconnect.)"""
    work = asyncio.ensure_future(_client(state).post(path, json=body))
    gone = asyncio.ensure_future(_client_gone(request))
    try:
        done, _ = await asyncio.wait({work, gone}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        gone.cancel()
        work.cancel()
    return work.result() if work in done else None


async def _client_gone(request: Request[Any, Any, State]) -> None:
    # The body is already read: the only message left to receive is the disconnect.
    while (await request.receive())["type"] != "http.disconnect":
        pass


def _gone() -> Response[Any]:
    return _error(499, "client closed the request", "client_gone")  # nobody reads it: the socket is closed


@get("/v1/models")
async def models_route(state: State) -> Response[Any]:
    return await _proxy(state, "GET", "/v1/models")


@post("/tokenize")
async def tokenize_route(request: Request[Any, Any, State], state: State) -> Response[Any]:
    return await _proxy(state, "POST", "/tokenize", await request.body())


async def _count(state: State, body: dict[str, Any], chat: bool) -> int:
    known = None if chat else completion_prompt_tokens(body)
    if known is not None:
        return known
    return await _tokenize(state, tokenize_request(body, chat=chat))


async def _tokenize(state: State, tok: dict[str, Any] | None) -> int:
    try:
        response = await _client(state).post("/tokenize", json=tok)
    except httpx.HTTPError as exc:
        raise AdmissionError(
            f"engine unreachable: {type(exc).__name__}",
            status_code=502,
            code="engine_unreachable",
        ) from exc
    if response.status_code != 200:
        # vLLM refuses to even tokenize some over-long inputs. Its message is not relayed (it
        # is not ours to vouch for), only classified.
        if response.status_code >= 500:
            raise AdmissionError(
                "engine could not count the prompt",
                status_code=502,
                code="engine_error",
            )
        if "maximum context length" in (_upstream_message(response) or ""):
            raise AdmissionError(
                "prompt exceeds this engine's context length",
                code="context_length_exceeded",
            )
        raise AdmissionError(
            f"engine refused to count the prompt (HTTP {response.status_code})",
            code="prompt_not_counted",
        )
    count = response.json().get("count")
    if type(count) is not int:
        raise AdmissionError("engine /tokenize gave no count", status_code=502, code="engine_error")
    return count


def _upstream_message(response: httpx.Response) -> str | None:
    try:
        err = response.json().get("error")
        return str(err.get("message")) if isinstance(err, dict) else None
    except (ValueError, AttributeError):
        return None


def _derived_salt(request: Request[Any, Any, State], state: State) -> str | None:
    salt_key: bytes | None = state["salt_key"]
    if salt_key is None:
        return None
    tenant = request.headers.get(TENANT_HEADER, "")
    if not tenant:
        raise AdmissionError(f"{TENANT_HEADER} header is required", code="tenant_required")
    return derive_cache_salt(salt_key, tenant)


async def _generate(request: Request[Any, Any, State], state: State, path: str, chat: bool) -> Response[Any] | Stream:
    metrics: _Metrics = state["metrics"]
    try:
        raw = json.loads(await request.body())
    except ValueError:
        metrics.rejected.labels("bad_json").inc()
        return _error(400, "request body is not JSON", "invalid_json")
    try:
        derived = _derived_salt(request, state)
        cfg = _supervisor(state).config
        body, dropped = prepare_body(
            raw,
            chat=chat,
            require_salt=cfg.cache_salt.require and cfg.prefix_caching,
            derived_salt=derived,
        )
        if dropped:
            metrics.dropped.inc()
        readback = _supervisor(state).readback
        assert readback is not None
        admitted = admit(body, dropped, await _count(state, body, chat), readback.max_model_len)
    except AdmissionError as exc:
        metrics.rejected.labels(exc.code).inc()
        return _error(exc.status_code, str(exc), exc.code)
    if admitted.clamped:
        metrics.clamped.inc()
    if admitted.body.get("stream"):
        return await _forward_stream(state, path, admitted.body, admitted.prompt_tokens, admitted.headers())
    try:
        upstream = await _post_unless_gone(request, state, path, admitted.body)
    except httpx.HTTPError as exc:
        return _error(502, f"engine unreachable: {type(exc).__name__}", "engine_unreachable")
    if upstream is None:
        return _gone()
    if upstream.status_code != 200:
        return Response(
            upstream.content,
            status_code=upstream.status_code,
            headers=admitted.headers(),
            media_type=upstream.headers.get("content-type", "application/json"),
        )
    answer = upstream.json()
    reported = (answer.get("usage") or {}).get("prompt_tokens")
    if reported != admitted.prompt_tokens or not answer.get("choices"):
        metrics.integrity.inc()
        log.error(
            "engine answer withheld: usage.prompt_tokens %s, counted %s",
            reported,
            admitted.prompt_tokens,
        )
        return _error(
            502,
            "engine answer failed the integrity check",
            "engine_integrity",
            admitted.headers(),
        )
    return _ok(answer, admitted.headers())


async def _forward_stream(
    state: State, path: str, body: dict[str, Any], counted: int, headers: dict[str, str]
) -> Response[Any] | Stream:
    client = _client(state)
    metrics: _Metrics = state["metrics"]
    upstream_cm = client.stream("POST", path, json=body)
    try:
        upstream = await upstream_cm.__aenter__()
    except httpx.HTTPError as exc:
        return _error(502, f"engine unreachable: {type(exc).__name__}", "engine_unreachable")
    if upstream.status_code != 200:
        content = await upstream.aread()
        await upstream_cm.__aexit__(None, None, None)
        return Response(
            content,
            status_code=upstream.status_code,
            headers=headers,
            media_type=upstream.headers.get("content-type", "application/json"),
        )

    def check(event: Event) -> bytes | None:
        if '"prompt_tokens"' not in event.data:
            return None
        try:
            usage = json.loads(event.data).get("usage") or {}
        except (ValueError, AttributeError):  # it mentions prompt_tokens and cannot be read
            usage = None
        if isinstance(usage, dict) and usage.get("prompt_tokens", counted) == counted:
            return None
        metrics.integrity.inc()
        return _sse_error()

    return Stream(
        _checked_relay(upstream_cm, upstream, check), status_code=200, media_type="text/event-stream", headers=headers
    )


# The longest line relayed from vLLM (one event): far above any real event, it bounds memory.
_MAX_LINE_BYTES = 16 * 1024 * 1024


async def _checked_relay(
    upstream_cm: Any, upstream: httpx.Response, check: Callable[[Event], bytes | None]
) -> AsyncIterator[bytes]:
    """vLLM's stream event by event, read by :mod:`formats.sse` (the reader the gateway uses on
    what we send): an event ``check`` refuses is withheld and the stream ends with the error
    bytes it returned. Events are written again from what was read, so what goes out is exactly
    what was checked, whatever line ends or comments vLLM used."""
    decoder = SSEDecoder(max_line=_MAX_LINE_BYTES)

    async def batches() -> AsyncIterator[list[Event]]:
        async for chunk in upstream.aiter_bytes():
            yield decoder.feed(chunk)
        yield decoder.close()

    try:
        async for events in batches():
            out = bytearray()
            for event in events:
                refused = check(event)
                if refused is not None:
                    yield bytes(out) + refused
                    return
                out += encode_event(event)
            if out:
                yield bytes(out)
    except SSELineTooLong:  # ended without its end event: the gateway calls it incomplete
        log.error("engine stream ended: a line of vLLM's stream was over %d bytes", _MAX_LINE_BYTES)
    finally:
        await upstream_cm.__aexit__(None, None, None)


def _sse_error() -> bytes:
    err = {
        "error": {
            "message": "engine answer failed the integrity check",
            "type": "engine_error",
            "code": "engine_integrity",
            "param": None,
        }
    }
    return b"data: " + json.dumps(err).encode() + b"\n\n"


@post("/v1/chat/completions")
async def chat_route(request: Request[Any, Any, State], state: State) -> Response[Any] | Stream:
    return await _generate(request, state, "/v1/chat/completions", chat=True)


@post("/v1/completions")
async def completions_route(request: Request[Any, Any, State], state: State) -> Response[Any] | Stream:
    return await _generate(request, state, "/v1/completions", chat=False)


# ---- Anthropic Messages (vLLM serves it natively) -------------------------------------------


def _a_error(status: int, message: str, code: str, headers: dict[str, str] | None = None) -> Response[Any]:
    kind = {400: "invalid_request_error", 413: "request_too_large"}.get(status, "api_error")
    body = {"type": "error", "error": {"type": kind, "message": message}, "code": code}
    return Response(body, status_code=status, headers=headers or {}, media_type="application/json")


def _a_usage(usage: Any) -> int | None:
    """The prompt tokens of an Anthropic usage object (cached tokens are reported apart)."""
    if not isinstance(usage, dict) or type(usage.get("input_tokens")) is not int:
        return None
    return sum(v for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
               if type(v := usage.get(k)) is int)  # fmt: skip


def _a_reported(data: str) -> int | None:
    """The prompt tokens an event reports: Anthropic says it in ``message_start``; vLLM says 0
    there and the real figure in the final ``message_delta`` (0 is never a real prompt)."""
    if '"message_start"' not in data and '"message_delta"' not in data:
        return None
    event = json.loads(data)
    usage = (event.get("message") or {}).get("usage") if event.get("type") == "message_start" else event.get("usage")
    reported = _a_usage(usage)
    return reported if reported else None


async def _a_count(state: State, body: dict[str, Any]) -> int:
    """vLLM's own count of exactly this request (its conversion to the chat template)."""
    ask = {k: v for k, v in body.items() if k not in ("stream", "max_tokens", "cache_salt")}
    try:
        response = await _client(state).post("/v1/messages/count_tokens", json=ask)
    except httpx.HTTPError as exc:
        raise AdmissionError(f"engine unreachable: {type(exc).__name__}", status_code=502,
                             code="engine_unreachable") from exc  # fmt: skip
    if response.status_code != 200:
        raise AdmissionError(f"engine refused to count the prompt (HTTP {response.status_code})",
                             status_code=502 if response.status_code >= 500 else 400,
                             code="prompt_not_counted")  # fmt: skip
    count = response.json().get("input_tokens") if response.headers.get("content-type", "").startswith(
        "application/json") else None  # fmt: skip
    if type(count) is not int:
        raise AdmissionError("engine count_tokens gave no count", status_code=502, code="engine_error")
    return count


async def _messages(request: Request[Any, Any, State], state: State, *, count_only: bool) -> Response[Any] | Stream:
    metrics: _Metrics = state["metrics"]
    try:
        raw = json.loads(await request.body())
    except ValueError:
        metrics.rejected.labels("bad_json").inc()
        return _a_error(400, "request body is not JSON", "invalid_json")
    try:
        cfg = _supervisor(state).config
        body, dropped = prepare_messages(raw, require_salt=cfg.cache_salt.require and cfg.prefix_caching,
                                         derived_salt=_derived_salt(request, state), count_only=count_only)  # fmt: skip
        if dropped:
            metrics.dropped.inc()
        counted = await _a_count(state, body)
        if count_only:
            return _ok({"input_tokens": counted}, {"X-Tiergate-Prompt-Tokens": str(counted)})
        readback = _supervisor(state).readback
        assert readback is not None
        admitted = admit(body, dropped, counted, readback.max_model_len)
    except AdmissionError as exc:
        metrics.rejected.labels(exc.code).inc()
        status = 413 if exc.code == "context_length_exceeded" else exc.status_code
        return _a_error(status, str(exc), exc.code)
    if admitted.clamped:
        metrics.clamped.inc()
    if admitted.body.get("stream"):
        return await _a_stream(state, admitted.body, counted, admitted.headers())
    try:
        upstream = await _post_unless_gone(request, state, "/v1/messages", admitted.body)
    except httpx.HTTPError as exc:
        return _a_error(502, f"engine unreachable: {type(exc).__name__}", "engine_unreachable")
    if upstream is None:
        return _gone()
    if upstream.status_code != 200:
        return Response(upstream.content, status_code=upstream.status_code, headers=admitted.headers(),
                        media_type=upstream.headers.get("content-type", "application/json"))  # fmt: skip
    answer = upstream.json()
    if _a_usage(answer.get("usage")) != counted or not answer.get("content"):
        metrics.integrity.inc()
        log.error("engine answer withheld: usage %s, counted %s", _a_usage(answer.get("usage")), counted)
        return _a_error(502, "engine answer failed the integrity check", "engine_integrity", admitted.headers())
    return _ok(answer, admitted.headers())


async def _a_stream(
    state: State, body: dict[str, Any], counted: int, headers: dict[str, str]
) -> Response[Any] | Stream:
    """Checked at the first usage that reports the prompt (see ``_a_reported``); a stream that
    ends without one is left to the gateway, whose relay requires usage."""
    metrics: _Metrics = state["metrics"]
    upstream_cm = _client(state).stream("POST", "/v1/messages", json=body)
    try:
        upstream = await upstream_cm.__aenter__()
    except httpx.HTTPError as exc:
        return _a_error(502, f"engine unreachable: {type(exc).__name__}", "engine_unreachable")
    if upstream.status_code != 200:
        content = await upstream.aread()
        await upstream_cm.__aexit__(None, None, None)
        return Response(content, status_code=upstream.status_code, headers=headers,
                        media_type=upstream.headers.get("content-type", "application/json"))  # fmt: skip

    checked = False

    def check(event: Event) -> bytes | None:
        nonlocal checked
        reported = _a_reported(event.data) if not checked else None
        if reported is None:
            return None
        checked = True
        if reported == counted:
            return None
        metrics.integrity.inc()
        err = {"type": "error", "error": {"type": "api_error", "message": "engine answer failed the integrity check"}}
        return encode_event(Event(json.dumps(err), "error"))

    return Stream(_checked_relay(upstream_cm, upstream, check), status_code=200, media_type="text/event-stream",
                  headers=headers)  # fmt: skip


# ---- OpenAI Responses -----------------------------------------------------------------------


def _r_honest(reported: Any, counted: int) -> bool:
    """The count mirrors vLLM's conversion of the items, not its rendering of every item type:
    a band (a placeholder answer reports a handful of tokens, far below it)."""
    return type(reported) is int and counted / 1.25 - 16 <= reported <= counted * 1.25 + 64


async def _responses(request: Request[Any, Any, State], state: State) -> Response[Any] | Stream:
    metrics: _Metrics = state["metrics"]
    try:
        raw = json.loads(await request.body())
    except ValueError:
        metrics.rejected.labels("bad_json").inc()
        return _error(400, "request body is not JSON", "invalid_json")
    try:
        cfg = _supervisor(state).config
        body, dropped = prepare_responses(raw, require_salt=cfg.cache_salt.require and cfg.prefix_caching,
                                          derived_salt=_derived_salt(request, state))  # fmt: skip
        if dropped:
            metrics.dropped.inc()
        counted = await _tokenize(state, responses_tokenize_request(body))
        readback = _supervisor(state).readback
        assert readback is not None
        admitted = admit(body, dropped, counted, readback.max_model_len, limit_key="max_output_tokens")
    except AdmissionError as exc:
        metrics.rejected.labels(exc.code).inc()
        return _error(exc.status_code, str(exc), exc.code)
    if admitted.clamped:
        metrics.clamped.inc()
    if admitted.body.get("stream"):
        return await _r_stream(state, admitted.body, counted, admitted.headers())
    try:
        upstream = await _post_unless_gone(request, state, "/v1/responses", admitted.body)
    except httpx.HTTPError as exc:
        return _error(502, f"engine unreachable: {type(exc).__name__}", "engine_unreachable")
    if upstream is None:
        return _gone()
    if upstream.status_code != 200:
        return Response(upstream.content, status_code=upstream.status_code, headers=admitted.headers(),
                        media_type=upstream.headers.get("content-type", "application/json"))  # fmt: skip
    answer = upstream.json()
    reported = (answer.get("usage") or {}).get("input_tokens")
    if not _r_honest(reported, counted):
        metrics.integrity.inc()
        log.error("engine answer withheld: usage %s, counted %s", reported, counted)
        return _error(502, "engine answer failed the integrity check", "engine_integrity", admitted.headers())
    return _ok(answer, admitted.headers())


async def _r_stream(
    state: State, body: dict[str, Any], counted: int, headers: dict[str, str]
) -> Response[Any] | Stream:
    """The usage arrives in the final response.completed (or .incomplete): checked there, the
    event withheld when it fails."""
    metrics: _Metrics = state["metrics"]
    upstream_cm = _client(state).stream("POST", "/v1/responses", json=body)
    try:
        upstream = await upstream_cm.__aenter__()
    except httpx.HTTPError as exc:
        return _error(502, f"engine unreachable: {type(exc).__name__}", "engine_unreachable")
    if upstream.status_code != 200:
        content = await upstream.aread()
        await upstream_cm.__aexit__(None, None, None)
        return Response(content, status_code=upstream.status_code, headers=headers,
                        media_type=upstream.headers.get("content-type", "application/json"))  # fmt: skip

    def check(event: Event) -> bytes | None:
        data = event.data
        if '"usage"' not in data or ('"response.completed"' not in data and '"response.incomplete"' not in data):
            return None
        usage = (json.loads(data).get("response") or {}).get("usage") or {}
        if _r_honest(usage.get("input_tokens"), counted):
            return None
        metrics.integrity.inc()
        err = {"type": "error", "code": "engine_integrity", "param": None,
               "message": "engine answer failed the integrity check"}  # fmt: skip
        return encode_event(Event(json.dumps(err), "error"))

    return Stream(_checked_relay(upstream_cm, upstream, check), status_code=200, media_type="text/event-stream",
                  headers=headers)  # fmt: skip


@post("/v1/responses")
async def responses_route(request: Request[Any, Any, State], state: State) -> Response[Any] | Stream:
    return await _responses(request, state)


@post("/v1/messages")
async def messages_route(request: Request[Any, Any, State], state: State) -> Response[Any] | Stream:
    return await _messages(request, state, count_only=False)


@post("/v1/messages/count_tokens")
async def count_tokens_route(request: Request[Any, Any, State], state: State) -> Response[Any] | Stream:
    return await _messages(request, state, count_only=True)


def create_front(supervisor: EngineSupervisor, transport: httpx.AsyncBaseTransport | None = None) -> Litestar:
    """The front app for a started supervisor (its readback must be present).

    ``transport`` replaces the network towards vLLM (tests use it to play a misbehaving engine).
    """
    cfg = supervisor.config
    salt_key = cfg.cache_salt.secret_file.read_bytes().strip() if cfg.cache_salt.secret_file else None
    if salt_key is not None:
        derive_cache_salt(salt_key, "startup-check")  # a short key fails here, not per request

    async def open_client(app: Litestar) -> None:
        app.state["vllm_client"] = httpx.AsyncClient(
            base_url=supervisor.vllm_url,
            timeout=httpx.Timeout(10.0, read=cfg.upstream_timeout_s),
            limits=httpx.Limits(max_connections=256, max_keepalive_connections=64),
            transport=transport,
        )

    async def close_client(app: Litestar) -> None:
        await app.state["vllm_client"].aclose()

    return Litestar(
        route_handlers=[
            manifest_route,
            health_route,
            metrics_route,
            models_route,
            tokenize_route,
            chat_route,
            completions_route,
            messages_route,
            count_tokens_route,
            responses_route,
        ],
        state=State({"supervisor": supervisor, "metrics": _Metrics(), "salt_key": salt_key}),
        on_startup=[open_client],
        on_shutdown=[close_client],
        openapi_config=None,
    )
