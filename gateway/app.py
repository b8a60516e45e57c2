"""``create_app(settings, *, seams…) -> Litestar``: the one place the gateway is assembled.

Seams (for tests and embedding, never monkeypatching): ``store`` (an opened audit store),
``classifier`` (a built ``tiers.Classifier``, which is slow to build), ``limiter`` and ``clock``.
Everything else is built from ``settings`` in the lifespan and torn down with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import msgspec
from litestar import Litestar, Request, Response
from litestar.exceptions import HTTPException

from gateway.auth import Authenticator
from gateway.classify import ClassifyStep
from gateway.dashboard import dashboard_router
from gateway.demo import DEMO_UPSTREAM, demo_router, with_demo
from gateway.errors import (
    BadRequest,
    GatewayError,
    MethodNotAllowed,
    NotFound,
    PayloadTooLarge,
    Unprocessable,
)
from gateway.hardening import HardeningMonitor
from gateway.metrics import Metrics
from gateway.pipeline import Pipeline
from gateway.quarantine import QuarantineBoard, QuarantineMonitor
from gateway.ratelimit import Limiter, MemoryLimiter, RedisLimiter
from gateway.routes import ROUTES
from gateway.routing import Router
from gateway.seams import AuditStore
from gateway.settings import Settings, load_settings
from gateway.tokens import TokenCounter, counter_for, token_decoders
from gateway.upstream import UpstreamClient
from migrations import upgrade
from tiers.types import UpstreamKind

if TYPE_CHECKING:
    from tiers import Classifier

__all__ = ["GatewayState", "app_from_env", "create_app"]

log = logging.getLogger("tiergate.gateway")
_encode = msgspec.json.Encoder().encode


@dataclass
class GatewayState:
    settings: Settings
    store: Any
    auth: Authenticator
    router: Router
    metrics: Metrics
    pipeline: Pipeline
    hardening: HardeningMonitor
    limiter: Limiter
    clients: dict[str, UpstreamClient]
    quarantine: QuarantineMonitor | None = None  # poke() after a change made in this process
    safe_lengths: Any = None  # gateway.probes.safe_length.SafeLengthBoard: lengths lowered by ladder probes
    safe_length_monitor: QuarantineMonitor | None = None


def _error_response(exc: GatewayError) -> Response[Any]:
    return Response(_encode(exc.body()), status_code=exc.status_code, media_type="application/json",
                    headers=exc.headers)  # fmt: skip


def _translate_http(exc: HTTPException) -> GatewayError:
    status = exc.status_code
    if status == 404:
        return NotFound("no such route", code="not_found")
    if status == 413:
        return PayloadTooLarge()
    if status == 405:
        return MethodNotAllowed()
    if status == 400:
        return BadRequest("malformed request")
    if status in (401, 403, 422, 429, 503):
        err = Unprocessable("request refused", code="refused")
        err.status_code = status  # type: ignore[misc]  # declared per class; this error carries the store's status
        return err
    return GatewayError()


def handle_exception(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    """One handler for every error: the OpenAI error shape, no internal detail."""
    if isinstance(exc, GatewayError):
        return _error_response(exc)
    if isinstance(exc, HTTPException):
        return _error_response(_translate_http(exc))
    # Only the class name: an exception's text may quote what it was processing.
    # %r: a client-chosen path cannot inject CR/LF into the log.
    log.error("unhandled %s on %r", type(exc).__name__, str(request.scope.get("path", "?"))[:200])
    return _error_response(GatewayError())


def _counters(settings: Settings) -> dict[str, TokenCounter]:
    return {
        u.name: counter_for(u.tokenizer_file, bytes_per_token=u.bytes_per_token, tolerance=u.usage_tolerance)
        for u in settings.upstreams
    }


def _auto_migrate(settings: Settings) -> bool:
    flag = settings.server.auto_migrate
    return settings.embedded if flag is None else flag


def create_app(
    settings: Settings,
    *,
    store: AuditStore | None = None,
    classifier: Classifier | None = None,
    limiter: Limiter | None = None,
    clock: Callable[[], datetime] | None = None,
) -> Litestar:
    if settings.server.demo:
        settings = with_demo(settings)
        log.warning(
            "demo mode: upstreams without an API key are replaced by the built-in echo vendor "
            "'%s' (shared, on loopback); it is not a real model",
            DEMO_UPSTREAM,
        )
    metrics = Metrics()
    board = QuarantineBoard()
    router = Router(settings, quarantine=board)
    counters = _counters(settings)

    @contextlib.asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        from audit import store as audit_store

        secrets = settings.secrets
        fp_key = secrets.fingerprint_key.get_secret_value().encode()  # type: ignore[union-attr]  # required by Settings
        owned: audit_store.AuditStore | None = None  # opened, migrated, maintained and closed here
        the_store: AuditStore
        if store is None:
            the_store = owned = await audit_store.AuditStore.open(
                settings.audit,
                fingerprint_key=fp_key,
                checkpoint_key=secrets.checkpoint_key.get_secret_value().encode(),  # type: ignore[union-attr]  # required by Settings
            )
        else:
            the_store = store
        async with contextlib.AsyncExitStack() as stack:
            if owned is not None:
                stack.push_async_callback(owned.close)
                if _auto_migrate(settings):
                    await upgrade(owned)
            clients = {u.name: UpstreamClient(u) for u in settings.upstreams}
            for c in clients.values():
                stack.push_async_callback(c.aclose)
            the_limiter = limiter
            if the_limiter is None:
                if settings.redis_url:
                    the_limiter = RedisLimiter(
                        settings.redis_url, on_backend_error=metrics.ratelimit_backend_errors.inc
                    )
                else:
                    the_limiter = MemoryLimiter()
                stack.push_async_callback(the_limiter.close)
            hardening = HardeningMonitor(
                list(settings.upstreams),
                # only on-prem upstreams are checked: a vendor's control-plane client is never made
                {u.name: clients[u.name].client for u in settings.upstreams if u.kind == UpstreamKind.ONPREM},
                metrics,
                on_change=the_store.record_event,
            )
            await hardening.start()
            stack.push_async_callback(hardening.stop)
            quarantine = QuarantineMonitor(the_store, board, settings.quarantine,
                                           registry=metrics.registry, redis_url=settings.redis_url)  # fmt: skip
            await quarantine.start()
            stack.push_async_callback(quarantine.stop)
            from gateway.probes.safe_length import SafeLengthBoard, safe_length_monitor

            safe_lengths = SafeLengthBoard()
            lengths = safe_length_monitor(the_store, safe_lengths, settings.quarantine, registry=metrics.registry,
                                          redis_url=settings.redis_url)  # fmt: skip
            await lengths.start()
            stack.push_async_callback(lengths.stop)
            built = classifier
            if built is None:
                from gateway.cache_files import cache_dir_for
                from gateway.tables import build_classifier

                # The deadline counts the CPU time of the thread doing the analysis: time spent
                # waiting for a worker, the interpreter lock or a core is overload, not content.
                built = build_classifier(settings.tiers, cache_dir_for(settings), clock=time.thread_time)
            step = ClassifyStep(
                built,
                fingerprint_key=fp_key,
                offload_bytes=settings.limits.offload_bytes,
                timeout_s=settings.limits.classify_timeout_s,
                workers=settings.limits.classify_workers,
                decoder_for=token_decoders(router, counters),
            )
            stack.callback(step.close)
            if settings.limits.prefilter:
                from gateway.cache_files import cache_dir_for
                from gateway.prefilter import attach_prefilter

                loop = asyncio.get_running_loop()
                attaching = attach_prefilter(
                    step.classifier, cache_dir_for(settings), lambda: _on_loop(loop, step.renew_workers)
                )
                # (a gauge may be set from any thread: here, the compiling one)
                attaching.add_done_callback(lambda done: metrics.prefilter_attached.set(int(done.result())))
            auth = Authenticator(
                the_store, ttl_s=settings.limits.auth_cache_s, timeout_s=settings.limits.auth_timeout_s
            )
            stack.push_async_callback(auth.aclose)  # before the store closes (the stack unwinds LIFO)
            from gateway.tracing import build_tracer

            tracer = build_tracer(settings.tracing)
            stack.callback(tracer.shutdown)  # after the drain below: the last outcomes end their spans
            pipeline = Pipeline(
                settings=settings,
                store=the_store,
                auth=auth,
                limiter=the_limiter,
                router=router,
                classify=step,
                clients=clients,
                counters=counters,
                metrics=metrics,
                hardened=hardening.is_hardened,
                salt_key=secrets.cache_salt_key.get_secret_value().encode(),  # type: ignore[union-attr]  # required by Settings
                now=clock or (lambda: datetime.now(UTC)),
                safe_tokens=safe_lengths.safe_tokens,
                tracer=tracer,
            )
            stack.push_async_callback(pipeline.drain)
            if settings.probes.interval_s is not None:
                from gateway.probe import ProbeMetrics, run_scheduled

                probes = asyncio.create_task(run_scheduled(
                    clients, settings.probes, record_event=the_store.record_event,
                    metrics=ProbeMetrics(metrics.registry),
                    salt_key=secrets.cache_salt_key.get_secret_value().encode(),  # type: ignore[union-attr]  # required by Settings
                ))  # fmt: skip
                stack.callback(probes.cancel)
            from gateway.probes.schedule import scheduled_probe_tasks

            for task in scheduled_probe_tasks(
                clients, settings, the_store, registry=metrics.registry, board=safe_lengths, on_lowered=lengths.poke,
                salt_key=secrets.cache_salt_key.get_secret_value().encode(),  # type: ignore[union-attr]  # required by Settings
            ):  # fmt: skip
                stack.callback(task.cancel)
            if settings.siem.sinks and settings.siem.in_server:  # the signed audit stream, off the request path
                from gateway.siem import run_streams

                await stack.enter_async_context(run_streams(settings, the_store, metrics.registry))
            if settings.alerts.webhooks:
                from gateway.alerts import run_alerts

                await stack.enter_async_context(run_alerts(settings, the_store, metrics.registry))
            if owned is not None:
                maintenance = asyncio.create_task(owned.run_maintenance())
                stack.callback(maintenance.cancel)
            app.state.gateway = GatewayState(settings, the_store, auth, router, metrics, pipeline,
                                             hardening, the_limiter, clients, quarantine, safe_lengths,
                                             lengths)  # fmt: skip
            # Everything built so far lives as long as the server: out of the collector's sight.
            # A full collection otherwise walks the classifier's tables (0.3–0.7 s a pass here,
            # every few large prompts full of identifiers), and the forked workers inherit it.
            gc.freeze()
            stack.callback(gc.unfreeze)  # collectable again once this app is gone (tests build many)
            gc.enable()  # off while `tiergate serve` started (gateway/entry.py)
            yield

    return Litestar(
        route_handlers=[
            *ROUTES,
            dashboard_router(settings.dashboard),
            *([demo_router()] if settings.server.demo else []),
        ],
        lifespan=[lifespan],
        exception_handlers={Exception: handle_exception},
        request_max_body_size=settings.server.max_body_bytes,
        logging_config=None,
    )


def _on_loop(loop: asyncio.AbstractEventLoop, fn: Callable[[], None]) -> None:
    """``fn`` on ``loop``'s thread, unless the loop has closed (the app stopped meanwhile)."""
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(fn)


def app_from_env() -> Litestar:
    """uvicorn factory for ``tiergate serve``: the config path comes from ``TIERGATE_CONFIG``."""
    return create_app(load_settings(os.environ.get("TIERGATE_CONFIG")))
