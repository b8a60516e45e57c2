"""OpenTelemetry traces (``tracing.enabled``) exported over OTLP/HTTP to a real receiver on
loopback: the span tree of one request, the GenAI attributes, Tiergate's own ones (tier, entity
counts, stripped, upstream kind, integrity verdict), refusals and streams, and no prompt or answer
text anywhere in what was exported. Off, opentelemetry is not even imported."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from tests.gateway.conftest import base_config
from tests.support import Scripted
from tests.support.harness import FakeUpstreams, GatewayHarness
from tests.support.otlp import OtlpReceiver, ReceivedSpan

EMAIL = "marguerite.okonkwo@example.org"
PROMPT = f"SECRET-PROMPT-7c1f please write to {EMAIL} about the merger"
ANSWER = "SECRET-ANSWER-93ab the merger is approved"
SERVER, CLIENT = 2, 3  # opentelemetry.proto Span.SpanKind


@pytest.fixture
def otlp(monkeypatch: pytest.MonkeyPatch) -> Iterator[OtlpReceiver]:
    with OtlpReceiver() as receiver:
        # The standard variables, as an operator sets them; nothing Tiergate-specific.
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
        monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
        monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test")
        monkeypatch.delenv("OTEL_SERVICE_NAME", raising=False)
        yield receiver


def _traced(fakes: FakeUpstreams, sqlite_db: str, tmp_path: Path, classifier: Any) -> GatewayHarness:
    cfg = base_config(fakes, tracing={"enabled": True, "service_name": "tg-test"})
    cfg["upstreams"][0]["provider"] = "acme-ai"
    return GatewayHarness(sqlite_db, tmp_path, cfg, classifier=classifier)


def _by_name(spans: list[ReceivedSpan], name: str) -> list[ReceivedSpan]:
    return [s for s in spans if s.name == name]


def _no_text(otlp: OtlpReceiver) -> None:
    exported = b"".join(otlp.raw)
    assert exported  # something was exported at all
    for secret in ("SECRET-PROMPT", "SECRET-ANSWER", EMAIL, "marguerite", "merger"):
        assert secret.encode() not in exported


def test_one_request_traced_with_genai_attributes(otlp: OtlpReceiver, fakes: FakeUpstreams, sqlite_db: str,
                                                  tmp_path: Path, classifier: Any) -> None:  # fmt: skip
    fakes["vendor"].script = lambda r: Scripted(content=ANSWER, completion_tokens=7)
    with _traced(fakes, sqlite_db, tmp_path, classifier) as gw:
        answer = gw.openai(gw.create_key()).chat.completions.create(
            model="chat", messages=[{"role": "user", "content": PROMPT}]
        )
        assert answer.choices[0].message.content == ANSWER
        gw.settle()
    # The harness has stopped: the provider flushed its last batch at shutdown.
    spans = otlp.spans()
    (root,) = _by_name(spans, "tiergate chat")
    (classify,) = _by_name(spans, "tiergate.classify")
    (commit,) = _by_name(spans, "tiergate.audit.commit")
    (call,) = _by_name(spans, "chat vendor-chat")
    assert root.kind == SERVER and call.kind == CLIENT
    assert root.resource["service.name"] == "tg-test" and root.resource["deployment.environment"] == "test"
    # One trace, every step a child of the request's span.
    assert {s.trace_id for s in (root, classify, commit, call)} == {root.trace_id}
    assert classify.parent_span_id == commit.parent_span_id == call.parent_span_id == root.span_id
    assert call.attributes["gen_ai.operation.name"] == "chat"
    assert call.attributes["gen_ai.provider.name"] == "acme-ai"
    assert call.attributes["gen_ai.request.model"] == "vendor-chat"
    assert call.attributes["gen_ai.response.finish_reasons"] == ["stop"]
    prompt_tokens = fakes["vendor"].prompt_tokens("/v1/chat/completions", fakes["vendor"].ledger.bodies()[0])
    assert call.attributes["gen_ai.usage.input_tokens"] == prompt_tokens
    assert call.attributes["gen_ai.usage.output_tokens"] == 7
    assert call.attributes["tiergate.upstream.kind"] == "shared"
    assert call.attributes["tiergate.stripped"] is True
    assert call.attributes["tiergate.integrity"] == "ok"
    assert classify.attributes["tiergate.tier"] == root.attributes["tiergate.tier"] == 2
    assert classify.attributes["tiergate.entities.EMAIL_ADDRESS"] == 1
    assert root.attributes["tiergate.entities.total"] >= 1
    assert root.attributes["tiergate.upstream"] == "vendor" and root.status_code != 2
    _no_text(otlp)


def test_stream_refusal_and_integrity_failure(otlp: OtlpReceiver, fakes: FakeUpstreams, sqlite_db: str,
                                              tmp_path: Path, classifier: Any) -> None:  # fmt: skip
    with _traced(fakes, sqlite_db, tmp_path, classifier) as gw:
        fakes["vendor"].script = lambda r: Scripted(chunks=["SECRET-ANSWER", "-93ab"])
        client = gw.openai(gw.create_key())
        text = "".join(
            c.choices[0].delta.content or ""
            for c in client.chat.completions.create(
                model="chat", messages=[{"role": "user", "content": PROMPT}], stream=True
            )
            if c.choices
        )
        assert text == "SECRET-ANSWER-93ab"
        capped = gw.openai(gw.create_key("low", max_tier=1))
        with pytest.raises(openai.PermissionDeniedError):
            capped.chat.completions.create(model="chat", messages=[{"role": "user", "content": PROMPT}])
        fakes["vendor"].script = lambda r: Scripted(content=ANSWER, prompt_tokens=10**6)
        with pytest.raises(openai.InternalServerError):
            client.chat.completions.create(model="chat", messages=[{"role": "user", "content": PROMPT}])
        gw.settle()
        time.sleep(0.1)
    spans = otlp.spans()
    calls = _by_name(spans, "chat vendor-chat")
    streamed = next(c for c in calls if c.attributes["tiergate.stream"])
    (relay,) = _by_name(spans, "tiergate.stream")
    assert relay.parent_span_id == streamed.span_id and relay.trace_id == streamed.trace_id
    assert streamed.attributes["tiergate.integrity"] == "ok" and "gen_ai.usage.input_tokens" in streamed.attributes
    assert streamed.attributes["gen_ai.response.finish_reasons"] == ["stop"]
    failed = next(c for c in calls if not c.attributes["tiergate.stream"])
    assert failed.attributes["tiergate.integrity"] == "prompt_tokens_high"
    assert failed.attributes["error.type"] == "prompt_tokens_high" and failed.status_code == 2
    roots = _by_name(spans, "tiergate chat")
    assert len(roots) == 3
    refused = [r for r in roots if r.attributes.get("http.response.status_code") == 403]
    assert len(refused) == 1 and refused[0].status_code == 2
    assert refused[0].attributes["error.type"] == "tier_not_allowed"
    # The refused request never reached an upstream: no client span in its trace.
    assert not [s for s in spans if s.trace_id == refused[0].trace_id and s.kind == CLIENT]
    _no_text(otlp)


def test_off_loads_nothing(tmp_path: Path) -> None:
    """Tracing off (the default): the app is built and the pipeline holds the null tracer,
    and none of opentelemetry's API, SDK or exporter was imported on the way."""
    code = (
        "import sys\n"
        "from gateway.settings import Settings\n"
        "from gateway.app import create_app\n"
        "from gateway.tracing import NULL_TRACER, build_tracer\n"
        "create_app(Settings())\n"
        "assert build_tracer(Settings().tracing) is NULL_TRACER\n"
        # litestar imports opentelemetry.semconv (constants) itself; the API, SDK and exporter
        # are what tracing would load.
        "print(sorted(m for m in sys.modules if m.startswith(('opentelemetry.sdk', 'opentelemetry.trace',"
        " 'opentelemetry.exporter', 'opentelemetry.context', 'google.protobuf'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         cwd=Path(__file__).resolve().parents[2])  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("answer", "reasons"),
    [
        ({"choices": [{"finish_reason": "stop"}, {"finish_reason": "length"}]}, ["stop", "length"]),
        ({"choices": [{"finish_reason": None}]}, []),
        ({"type": "message", "stop_reason": "end_turn"}, ["end_turn"]),  # Anthropic Messages
        ({"object": "response", "status": "completed"}, ["completed"]),  # OpenAI Responses
        (
            {"object": "response", "status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}},
            ["max_output_tokens"],
        ),
        ({"choices": [{"finish_reason": "stop because the user said <EMAIL_1>"}]}, []),  # not an enum: dropped
        ({"data": [{"embedding": [0.1]}]}, []),  # embeddings have none
    ],
)
def test_finish_reasons_of_every_protocol(answer: dict[str, Any], reasons: list[str]) -> None:
    from gateway.tracing import finish_reasons

    assert finish_reasons(answer) == reasons
