"""Schemathesis against the gateway's own OpenAPI schema (served by the running app) plus the three
OpenAI proxy operations, which are plain-ASGI routes and so not in it: positive and negative
examples on every operation, no 5xx and no internal detail in any answer. Bounded: a few examples
per operation and mode."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode

from tests.faults._gw import one_upstream
from tests.support import FakeUpstream
from tests.support.harness import FakeUpstreams, GatewayHarness

EXAMPLES = 12

_MESSAGE = {
    "type": "object",
    "properties": {
        "role": {"enum": ["system", "user", "assistant", "tool"]},
        "content": {"anyOf": [
            {"type": "string"},
            {"type": "array", "items": {"type": "object", "properties": {
                "type": {"enum": ["text", "image_url"]}, "text": {"type": "string"}}}},
            {"type": "null"},
        ]},
        "name": {"type": "string"},
    },
    "required": ["role", "content"],
}  # fmt: skip
_COMMON = {"model": {"enum": ["chat", "no-such-model"]}, "stream": {"type": "boolean"},
           "max_tokens": {"type": "integer"}, "temperature": {"type": "number"}}  # fmt: skip
BODIES = {
    "/v1/chat/completions": {"type": "object", "required": ["model", "messages"],
                             "properties": {**_COMMON, "messages": {"type": "array", "items": _MESSAGE}}},
    "/v1/completions": {"type": "object", "required": ["model", "prompt"],
                        "properties": {**_COMMON, "prompt": {"anyOf": [
                            {"type": "string"}, {"type": "array", "items": {"type": "string"}}]}}},
    "/v1/embeddings": {"type": "object", "required": ["model", "input"],
                       "properties": {"model": _COMMON["model"], "input": {"anyOf": [
                           {"type": "string"}, {"type": "array", "items": {"type": "string"}}]}}},
}  # fmt: skip


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, classifier: Any) -> Iterator[tuple[GatewayHarness, str]]:
    tmp: Path = tmp_path_factory.mktemp("fuzz")
    with FakeUpstreams(FakeUpstream(name="vendor")) as fakes:
        cfg = {"upstreams": [one_upstream(fakes.base_url("vendor"))]}
        with GatewayHarness(f"sqlite+aiosqlite:///{tmp / 'audit.db'}", tmp, cfg, classifier=classifier) as gw:
            yield gw, gw.create_key()


def _augmented(raw: dict[str, Any]) -> dict[str, Any]:
    """The served schema plus the OpenAI proxy operations with their request bodies."""
    schema = copy.deepcopy(raw)
    for path, body in BODIES.items():
        assert path not in schema["paths"], "a proxy route is in the served schema: drop it from BODIES"
        schema["paths"][path] = {"post": {
            "operationId": path.strip("/").replace("/", "_"),
            "requestBody": {"required": True, "content": {"application/json": {"schema": body}}},
            "responses": {"200": {"description": "OK"}},
        }}  # fmt: skip
    return schema


def test_schema_fuzz_no_5xx(env: tuple[GatewayHarness, str]) -> None:
    """Every operation in the served schema, fuzzed with valid and invalid inputs, answers < 500."""
    gw, key = env
    raw = httpx.get(gw.url + "/schema/openapi.json", timeout=30).json()
    assert "/v1/models" in raw["paths"]
    schema = schemathesis.openapi.from_dict(_augmented(raw))
    failures: list[str] = []
    calls: dict[str, int] = {}

    def fuzz(operation: Any, mode: GenerationMode) -> None:
        @settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
                  suppress_health_check=list(HealthCheck))  # fmt: skip
        @given(case=operation.as_strategy(generation_mode=mode))
        def run(case: Any) -> None:
            label = f"{case.method} {case.path} {mode.value}"
            calls[label] = calls.get(label, 0) + 1
            headers = {**(case.headers or {}), "authorization": f"Bearer {key}"}
            response = case.call(base_url=gw.url, headers=headers, timeout=30)
            if response.status_code >= 500 or "Traceback" in response.text:
                failures.append(f"{case.method} {case.formatted_path} -> {response.status_code}: "
                                f"{case.body!r:.300}")  # fmt: skip

        try:
            run()
        except Unsatisfiable:  # e.g. no invalid input exists for an operation without inputs
            pass

    for result in schema.get_all_operations():
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            fuzz(result.ok(), mode)
    for path in BODIES:  # the proxy endpoints really ran, with valid and invalid bodies
        for mode in ("positive", "negative"):
            assert calls.get(f"POST {path} {mode}", 0) >= EXAMPLES // 2, calls
    assert failures == []
