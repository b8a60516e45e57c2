"""What tracing costs the request path: the pipeline's tracing hooks for one request, timed with
no hooks at all (the loop alone), tracing off (the null tracer) and on (the SDK, each ended span
handed to an exporter that drops it, so the figure is the request path's share, not the network's;
in production the batch processor only enqueues it and exports from its own thread).

    .venv/bin/python bench/tracing.py            # best of 5 x 4,000 requests' hooks per mode

The hooks are the ones ``gateway/pipeline.py`` calls for a forwarded, non-streamed request:
request span, classify span (tier and entity counts), audit commit span, upstream call span
opened, answer (finish reasons), outcome (usage, integrity verdict, ends the span).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gateway.settings import TracingSettings
from gateway.tracing import build_tracer

N = 4_000


def _stand_ins() -> tuple[Any, Any, dict[str, Any]]:
    decision = SimpleNamespace(tier=2, entity_counts=lambda: {"EMAIL_ADDRESS": 1, "PERSON": 2})
    classified = SimpleNamespace(decision=decision)
    candidate = SimpleNamespace(provider_model="gpt-x", provider="openai", name="vendor", kind="shared")
    outbound = SimpleNamespace(candidate=candidate, stripped=True, count=SimpleNamespace(tokens=123))
    data = {"choices": [{"index": 0, "finish_reason": "stop"}]}
    return classified, outbound, data


def one_request(tracer: Any, i: int, classified: Any, outbound: Any, data: dict[str, Any]) -> None:
    rid = f"req_{i}"
    with tracer.request("chat"):
        with tracer.span("classify") as span:
            span.classified(classified)
        with tracer.span("audit.commit"):
            pass
        tracer.upstream(rid, "chat", outbound, False)
        tracer.answered(rid, data)
        tracer.finished(rid, "ok", 200, {"prompt_tokens": 120, "completion_tokens": 9}, None, False)


def bare(i: int, classified: Any, outbound: Any, data: dict[str, Any]) -> None:
    rid = f"req_{i}"  # noqa: F841 -- the same work as one_request, without the hooks


def measure(enabled: bool | None) -> float:
    """None: the loop without hooks."""
    exporter = None
    if enabled:
        from opentelemetry.sdk.trace.export import SpanExportResult

        class Dropping:
            def export(self, spans: Any) -> SpanExportResult:
                return SpanExportResult.SUCCESS

            def shutdown(self) -> None: ...

            def force_flush(self, timeout_millis: int = 0) -> bool:
                return True

        exporter = Dropping()
    tracer = build_tracer(TracingSettings(enabled=bool(enabled)), exporter=exporter)
    classified, outbound, data = _stand_ins()
    step = (
        (lambda i: bare(i, classified, outbound, data))
        if enabled is None
        else (lambda i: one_request(tracer, i, classified, outbound, data))
    )
    for i in range(500):
        step(i)
    best = float("inf")
    for _ in range(5):  # the best of five: the machine is shared
        t0 = time.perf_counter()
        for i in range(N):
            step(i)
        best = min(best, (time.perf_counter() - t0) / N * 1e6)
    tracer.shutdown()
    return best


def main() -> None:
    none, off, on = measure(None), measure(False), measure(True)
    print(f"no hooks:    {none:.2f} µs per request (the loop)")
    print(f"tracing off: {off:.2f} µs per request: +{off - none:.2f} µs for the hooks")
    print(f"tracing on:  {on:.2f} µs per request: +{on - none:.2f} µs (4 spans, attributes, export dropped)")


if __name__ == "__main__":
    main()
