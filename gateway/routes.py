"""HTTP handlers: thin. Each one reads what it needs and hands it to the pipeline or the state."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec
from litestar import Request, Response, get, post
from litestar.exceptions import HTTPException
from litestar.response import Stream

from gateway.auth import bearer_token
from gateway.errors import NotFound
from gateway.metrics import CONTENT_TYPE_LATEST

if TYPE_CHECKING:
    from gateway.app import GatewayState
    from gateway.pipeline import Reply

__all__ = ["ROUTES"]

_encode = msgspec.json.Encoder().encode
_JSON = "application/json"


def _state(request: Request[Any, Any, Any]) -> GatewayState:
    return request.app.state.gateway  # type: ignore[no-any-return]


def _render(reply: Reply) -> Response[Any]:
    if reply.stream is not None:
        headers = {"cache-control": "no-cache", "x-accel-buffering": "no", **reply.headers}
        return Stream(reply.stream, media_type="text/event-stream", headers=headers)
    return Response(_encode(reply.body), status_code=reply.status, media_type=_JSON, headers=reply.headers)


async def _proxy(request: Request[Any, Any, Any], endpoint: str) -> Response[Any]:
    state = _state(request)
    try:
        raw: bytes | None = await request.body()
    except HTTPException as exc:
        if exc.status_code != 413:
            raise
        raw = None  # refused by the pipeline after authentication, so the refusal has a tenant
    reply = await state.pipeline.run(endpoint, request.headers, raw)
    return _render(reply)


@post("/v1/chat/completions", status_code=200)
async def chat_completions(request: Request[Any, Any, Any]) -> Response[Any]:
    """OpenAI chat completions, streaming and not."""
    return await _proxy(request, "chat")


@post("/v1/completions", status_code=200)
async def completions(request: Request[Any, Any, Any]) -> Response[Any]:
    """OpenAI legacy completions."""
    return await _proxy(request, "completions")


@post("/v1/embeddings", status_code=200)
async def embeddings(request: Request[Any, Any, Any]) -> Response[Any]:
    """OpenAI embeddings."""
    return await _proxy(request, "embeddings")


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
    except Exception:
        checks["database"] = "unavailable"
    ok = all(v == "ok" for v in checks.values())
    body = {"status": "ready" if ok else "not_ready", "checks": checks}
    return Response(_encode(body), status_code=200 if ok else 503, media_type=_JSON)


@get("/metrics")
async def metrics(request: Request[Any, Any, Any]) -> Response[Any]:
    """Prometheus exposition."""
    state = _state(request)
    if not state.settings.server.metrics_enabled:
        raise NotFound("metrics are disabled", code="not_found")
    return Response(state.metrics.render(), media_type=CONTENT_TYPE_LATEST)


ROUTES = [chat_completions, completions, embeddings, list_models, get_model, healthz, readyz, metrics]
