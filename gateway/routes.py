"""HTTP handlers: thin. Each one reads what it needs and hands it to the pipeline or the state."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import msgspec
from litestar import Request, Response, asgi, get

from gateway.asgi import ClientGone, Headers, read_body, send_json, send_stream
from gateway.auth import bearer_token
from gateway.errors import GatewayError, MethodNotAllowed, NotFound, Unauthorized
from gateway.metrics import CONTENT_TYPE_LATEST, scrape_allowed
from gateway.protocols import PROTOCOLS

if TYPE_CHECKING:
    from gateway.app import GatewayState

__all__ = ["ROUTES"]

log = logging.getLogger("tiergate.gateway")

_encode = msgspec.json.Encoder().encode
_JSON = "application/json"


def _state(request: Request[Any, Any, Any]) -> GatewayState:
    return request.app.state.gateway  # type: ignore[no-any-return]  # litestar's State holds Any; set by create_app


async def _proxy(scope: dict[str, Any], receive: Any, send: Any, endpoint: str) -> None:
    protocol = PROTOCOLS[endpoint]
    try:
        if scope["method"] != "POST":
            raise MethodNotAllowed()
        state: GatewayState = scope["app"].state.gateway
        headers = Headers(scope["headers"])
        try:
            # None: over the size limit, refused by the pipeline after authentication (the refusal
            # then has a tenant).
            raw = await read_body(headers, receive, state.settings.server.max_body_bytes)
        except ClientGone:
            return
        reply = await state.pipeline.run(endpoint, headers, raw)
    except GatewayError as exc:  # in the shape this protocol's clients expect
        await send_json(send, exc.status_code, protocol.error_body(exc), exc.headers)
        return
    except Exception as exc:
        if protocol.wire == "openai":
            raise  # Litestar's handler renders it (the OpenAI shape), as for every other route
        # Only the class name: an exception's text may quote what it was processing.
        log.error("unhandled %s on %r", type(exc).__name__, endpoint)
        await send_json(send, 500, protocol.error_body(GatewayError()), {})
        return
    if reply.stream is not None:
        await send_stream(receive, send, reply.stream, reply.headers)
    else:
        await send_json(send, reply.status, reply.body, reply.headers)


# Plain ASGI routes: see gateway/asgi.py for why. Litestar still routes them and renders their
# errors; they are not in the served OpenAPI schema.
@asgi("/v1/chat/completions", is_mount=False, copy_scope=False)
async def chat_completions(scope: Any, receive: Any, send: Any) -> None:
    """OpenAI chat completions, streaming and not."""
    await _proxy(scope, receive, send, "chat")


@asgi("/v1/completions", is_mount=False, copy_scope=False)
async def completions(scope: Any, receive: Any, send: Any) -> None:
    """OpenAI legacy completions."""
    await _proxy(scope, receive, send, "completions")


@asgi("/v1/embeddings", is_mount=False, copy_scope=False)
async def embeddings(scope: Any, receive: Any, send: Any) -> None:
    """OpenAI embeddings."""
    await _proxy(scope, receive, send, "embeddings")


@asgi("/v1/responses", is_mount=False, copy_scope=False)
async def responses(scope: Any, receive: Any, send: Any) -> None:
    """OpenAI Responses, streaming and not; a WebSocket upgrade is answered 426 (Codex then
    falls back to HTTP at once instead of retrying)."""
    if scope["type"] == "websocket":
        await _refuse_websocket(scope, receive, send)
        return
    if scope["method"] == "GET" and "websocket" in (Headers(scope["headers"]).get("upgrade") or "").lower():
        await send_json(send, 426, UpgradeRequired().body(), {"upgrade": "HTTP/1.1"})
        return
    await _proxy(scope, receive, send, "responses")


@asgi("/v1/messages", is_mount=False, copy_scope=False)
async def messages(scope: Any, receive: Any, send: Any) -> None:
    """Anthropic Messages, streaming and not (``?beta=true`` too: the query is not read)."""
    await _proxy(scope, receive, send, "messages")


@asgi("/v1/messages/count_tokens", is_mount=False, copy_scope=False)
async def count_tokens(scope: Any, receive: Any, send: Any) -> None:
    """Anthropic token counting: the whole prompt goes to the upstream, so it is a forward."""
    await _proxy(scope, receive, send, "count_tokens")


class UpgradeRequired(GatewayError):
    status_code = 426
    error_type = "invalid_request_error"
    default_code = "websocket_not_supported"
    default_message = "WebSocket is not served here; use HTTP POST with stream: true"


async def _refuse_websocket(scope: Any, receive: Any, send: Any) -> None:
    await receive()  # websocket.connect
    if "websocket.http.response" in (scope.get("extensions") or {}):
        payload = _encode(UpgradeRequired().body())
        await send(
            {
                "type": "websocket.http.response.start",
                "status": 426,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())],
            }
        )
        await send({"type": "websocket.http.response.body", "body": payload})
    else:
        await send({"type": "websocket.close", "code": 1008})


def _model(name: str) -> dict[str, Any]:
    return {"id": name, "object": "model", "created": 0, "owned_by": "tiergate"}


@get("/v1/models")
async def list_models(request: Request[Any, Any, Any]) -> Response[Any]:
    """The models the caller's key may use."""
    state = _state(request)
    principal = await state.auth.authenticate(bearer_token(request.headers))
    names = [m for m in state.router.models() if principal.may_use(m)]
    return Response(_encode({"object": "list", "data": [_model(n) for n in names]}), media_type=_JSON)


@get("/v1/models/{model:path}")
async def get_model(request: Request[Any, Any, Any]) -> Response[Any]:
    """One model, if the caller's key may use it."""
    state = _state(request)
    principal = await state.auth.authenticate(bearer_token(request.headers))
    name = str(request.path_params["model"]).lstrip("/")
    if not state.router.knows(name) or not principal.may_use(name):
        raise NotFound()
    return Response(_encode(_model(name)), media_type=_JSON)


@get("/healthz")
async def healthz() -> Response[Any]:
    """The process is up."""
    return Response(_encode({"status": "ok"}), media_type=_JSON)


@get("/readyz")
async def readyz(request: Request[Any, Any, Any]) -> Response[Any]:
    """Ready to take traffic: config loaded and the audit database reachable."""
    state = _state(request)
    checks: dict[str, str] = {"config": "ok"}
    try:
        await state.store.ping(timeout_s=2.0)
        checks["database"] = "ok"
    except Exception:  # noqa: BLE001 -- readiness reports any database failure as unavailable
        checks["database"] = "unavailable"
    ok = all(v == "ok" for v in checks.values())
    body = {"status": "ready" if ok else "not_ready", "checks": checks}
    return Response(_encode(body), status_code=200 if ok else 503, media_type=_JSON)


@get("/metrics")
async def metrics(request: Request[Any, Any, Any]) -> Response[Any]:
    """Prometheus exposition (every tenant's counts: behind a bearer token when configured)."""
    state = _state(request)
    server = state.settings.server
    if not server.metrics_enabled:
        raise NotFound("metrics are disabled", code="not_found")
    if not scrape_allowed(server.metrics_token_env, request.headers.get("authorization")):
        raise Unauthorized("/metrics needs its bearer token", code="invalid_metrics_token",
                           headers={"www-authenticate": 'Bearer realm="metrics"'})  # fmt: skip
    return Response(state.metrics.render(), media_type=CONTENT_TYPE_LATEST)


ROUTES = [
    chat_completions,
    completions,
    embeddings,
    responses,
    messages,
    count_tokens,
    list_models,
    get_model,
    healthz,
    readyz,
    metrics,
]
