"""OpenTelemetry traces of the request path, following the GenAI semantic conventions.

Off by default (``tracing.enabled``). Off, the pipeline holds :data:`NULL_TRACER`, whose every
hook is a method that returns at once: opentelemetry is never imported and the request path pays
a few attribute lookups (``bench/RESULTS.md``). On, the SDK is imported here, once, and spans go
through a batch processor to the OTLP/HTTP exporter, which reads the standard variables itself
(``OTEL_EXPORTER_OTLP_ENDPOINT``, ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``, ``…_HEADERS``,
``…_TIMEOUT``); ``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES`` and ``OTEL_TRACES_SAMPLER``
apply as usual. The gateway's own provider is never installed as the global one.

Spans: ``tiergate <endpoint>`` (server), ``tiergate.classify``, ``tiergate.audit.commit``, the
upstream call ``<operation> <provider model>`` (client, GenAI attributes) and ``tiergate.stream``.
Attributes are metadata only: counts, names from the configuration, codes. Never prompt or answer
text, and never the model name a client typed (it may be anything); errors carry their class.
"""

from __future__ import annotations

import os
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gateway.classify import Classified
    from gateway.outbound import Outbound
    from gateway.settings import TracingSettings

__all__ = ["NULL_TRACER", "NullTracer", "OtelTracer", "build_tracer", "finish_reasons"]

# GenAI operation names (gen_ai.operation.name) per endpoint.
_OPERATIONS = {"chat": "chat", "completions": "text_completion", "embeddings": "embeddings",
               "responses": "chat", "messages": "chat", "count_tokens": "count_tokens"}  # fmt: skip
# Spans whose outcome never came (it always does; this only bounds memory if it did not).
_MAX_OPEN = 10_000


class _NullSpan:
    __slots__ = ()

    def __enter__(self) -> _NullSpan:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def classified(self, classified: Classified) -> None:
        return None


_NULL_SPAN = _NullSpan()


class NullTracer:
    """Tracing off: every hook does nothing, and nothing of opentelemetry is loaded."""

    enabled = False

    def request(self, endpoint: str) -> _NullSpan:
        return _NULL_SPAN

    def span(self, name: str) -> _NullSpan:
        return _NULL_SPAN

    def upstream(self, rid: str, endpoint: str, outbound: Outbound, stream: bool) -> None:
        return None

    def stream(self, rid: str) -> None:
        return None

    def answered(self, rid: str, data: dict[str, Any]) -> None:
        return None

    def stream_reasons(self, rid: str, reasons: tuple[str, ...]) -> None:
        return None

    def finished(self, rid: str, status: str, http_status: int, usage: Any, error: str | None,
                 integrity: bool) -> None:  # fmt: skip
        return None

    def shutdown(self) -> None:
        return None


NULL_TRACER = NullTracer()


def finish_reasons(data: dict[str, Any]) -> list[str]:
    """``gen_ai.response.finish_reasons`` from an answer of any protocol we serve (OpenAI choices,
    Anthropic ``stop_reason``, Responses ``status`` / ``incomplete_details.reason``). Only short
    enum-like strings are kept: a vendor's field is not trusted to be one."""
    found: list[Any] = []
    choices = data.get("choices")
    if isinstance(choices, list):
        found = [c.get("finish_reason") for c in choices if isinstance(c, dict)]
    elif "stop_reason" in data:
        found = [data.get("stop_reason")]
    elif data.get("object") == "response":
        details = data.get("incomplete_details")
        found = [details.get("reason") if isinstance(details, dict) else data.get("status")]
    return _enums(found)


def _enums(found: list[Any] | tuple[Any, ...]) -> list[str]:
    return [r for r in found if isinstance(r, str) and len(r) <= 40 and r.replace("_", "").isalnum()]


class _Span:
    """One live span and the request's root span, for attributes that belong to both."""

    __slots__ = ("_cm", "_root", "span")

    def __init__(self, cm: Any, root: Any) -> None:
        self._cm = cm
        self._root = root
        self.span: Any = None

    def __enter__(self) -> _Span:
        self.span = self._cm.__enter__()
        return self

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        if exc is not None:
            _failed(self.span, exc)
        self._cm.__exit__(kind, exc, tb)

    def classified(self, classified: Classified) -> None:
        decision = classified.decision
        attrs: dict[str, Any] = {"tiergate.tier": int(decision.tier)}
        counts = decision.entity_counts()
        attrs["tiergate.entities.total"] = sum(counts.values())
        attrs.update({f"tiergate.entities.{entity}": n for entity, n in counts.items()})
        self.span.set_attributes(attrs)
        if self._root is not None:
            self._root.set_attributes(attrs)


def _failed(span: Any, exc: BaseException) -> None:
    from opentelemetry.trace import Status, StatusCode

    # The class and the status code only: an exception's text may quote what it was processing.
    error = getattr(exc, "error_class", None) or type(exc).__name__
    span.set_attribute("error.type", str(error))
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        span.set_attribute("http.response.status_code", status)
    span.set_status(Status(StatusCode.ERROR))


class OtelTracer:
    """Tracing on: spans through ``provider`` (an SDK ``TracerProvider``)."""

    enabled = True

    def __init__(self, provider: Any) -> None:
        from opentelemetry import trace

        self._trace = trace
        self._provider = provider
        self._tracer = provider.get_tracer("tiergate")
        self._root: ContextVar[Any] = ContextVar("tiergate_root_span", default=None)
        self._calls: dict[str, tuple[Any, Any]] = {}  # attempt id -> (upstream span, stream span)

    def request(self, endpoint: str) -> _Span:
        kind = self._trace.SpanKind.SERVER
        cm = self._tracer.start_as_current_span(f"tiergate {endpoint}", kind=kind, record_exception=False,
                                                set_status_on_exception=False,
                                                attributes={"tiergate.endpoint": endpoint})  # fmt: skip
        return _RootSpan(cm, self._root)

    def span(self, name: str) -> _Span:
        cm = self._tracer.start_as_current_span(f"tiergate.{name}", record_exception=False,
                                                set_status_on_exception=False)  # fmt: skip
        return _Span(cm, self._root.get())

    def upstream(self, rid: str, endpoint: str, outbound: Outbound, stream: bool) -> None:
        c = outbound.candidate
        op = _OPERATIONS.get(endpoint, endpoint)
        attrs: dict[str, Any] = {
            "gen_ai.operation.name": op,
            "gen_ai.request.model": c.provider_model,
            "gen_ai.provider.name": c.provider or c.name,
            "tiergate.upstream": c.name,
            "tiergate.upstream.kind": str(c.kind),
            "tiergate.stripped": outbound.stripped,
            "tiergate.prompt_tokens.counted": outbound.count.tokens,
            "tiergate.attempt_id": rid,
            "tiergate.stream": stream,
        }
        span = self._tracer.start_span(f"{op} {c.provider_model}", kind=self._trace.SpanKind.CLIENT,
                                       attributes=attrs, record_exception=False, set_status_on_exception=False)  # fmt: skip
        root = self._root.get()
        if root is not None:
            root.set_attributes({"tiergate.upstream": c.name, "tiergate.upstream.kind": str(c.kind),
                                 "tiergate.stripped": outbound.stripped})  # fmt: skip
        if len(self._calls) >= _MAX_OPEN:
            old_rid = next(iter(self._calls))
            self._end(old_rid, "abandoned")
        self._calls[rid] = (span, None)

    def stream(self, rid: str) -> None:
        call = self._calls.get(rid)
        if call is None:
            return
        parent = self._trace.set_span_in_context(call[0])
        self._calls[rid] = (call[0], self._tracer.start_span("tiergate.stream", context=parent))

    def answered(self, rid: str, data: dict[str, Any]) -> None:
        call = self._calls.get(rid)
        if call is not None:
            call[0].set_attribute("gen_ai.response.finish_reasons", finish_reasons(data))

    def stream_reasons(self, rid: str, reasons: tuple[str, ...]) -> None:
        call = self._calls.get(rid)
        if call is not None and reasons:
            call[0].set_attribute("gen_ai.response.finish_reasons", _enums(reasons))

    def finished(self, rid: str, status: str, http_status: int, usage: Any, error: str | None,
                 integrity: bool) -> None:  # fmt: skip
        call = self._calls.get(rid)
        if call is None:
            return
        span = call[0]
        if isinstance(usage, dict):
            for ours, theirs in (("prompt_tokens", "gen_ai.usage.input_tokens"),
                                 ("completion_tokens", "gen_ai.usage.output_tokens")):  # fmt: skip
                value = usage.get(ours)
                if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                    span.set_attribute(theirs, value)
        verdict = (error or "failed") if integrity else ("ok" if status == "ok" else "unchecked")
        span.set_attributes({"tiergate.integrity": verdict, "tiergate.outcome": status,
                             "http.response.status_code": http_status})  # fmt: skip
        self._end(rid, None if status == "ok" else (error or status))

    def _end(self, rid: str, error: str | None) -> None:
        from opentelemetry.trace import Status, StatusCode

        span, stream = self._calls.pop(rid)
        for s in (stream, span):
            if s is None:
                continue
            if error is not None:
                s.set_attribute("error.type", error)
                s.set_status(Status(StatusCode.ERROR))
            s.end()

    def shutdown(self) -> None:
        for rid in list(self._calls):
            self._end(rid, "shutdown")
        self._provider.shutdown()


class _RootSpan(_Span):
    """The request's span: while it is open, the others find it through ``root``."""

    __slots__ = ("_token", "_var")

    def __init__(self, cm: Any, var: ContextVar[Any]) -> None:
        super().__init__(cm, None)
        self._var = var
        self._token: Any = None

    def __enter__(self) -> _Span:
        super().__enter__()
        self._root = self.span
        self._token = self._var.set(self.span)
        return self

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        self._var.reset(self._token)
        super().__exit__(kind, exc, tb)


def build_tracer(settings: TracingSettings, *, exporter: Any = None) -> NullTracer | OtelTracer:
    """:data:`NULL_TRACER` unless ``settings.enabled``. ``exporter`` (a span exporter: the SDK's
    in-memory one in a test) replaces the OTLP/HTTP exporter and is flushed span by span."""
    if not settings.enabled:
        return NULL_TRACER
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    # OTEL_SERVICE_NAME, where set, wins over ours (Resource.create would let ours win).
    named = {} if os.environ.get("OTEL_SERVICE_NAME") else {SERVICE_NAME: settings.service_name}
    provider = TracerProvider(resource=Resource.create(named))
    if exporter is not None:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    else:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(),
                                                       max_queue_size=settings.max_queue_size))  # fmt: skip
    return OtelTracer(provider)
