"""The engine front against a scripted engine: integrity checks and salt derivation (no vLLM).

The engine here is an ``httpx.MockTransport`` standing in for vLLM at the front's one seam; it
plays the 2026 failure (a 200 whose usage counts a 1-token placeholder instead of the prompt).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from litestar.testing import TestClient

from engine.config import CacheSaltConfig, EngineConfig
from engine.front import create_front
from engine.preflight import ReadBack
from engine.salt import derive_cache_salt
from engine.supervisor import ZeroingStatus


@dataclass
class FakeSupervisor:
    config: EngineConfig
    readback: ReadBack = field(
        default_factory=lambda: ReadBack(
            num_blocks=32,
            block_size=128,
            prefix_caching=True,
            max_model_len=2048,
            model="tiny",
        )
    )
    vllm_url: str = "http://vllm.invalid"

    def alive(self) -> bool:
        return True

    def zeroing_status(self) -> ZeroingStatus:
        return ZeroingStatus(True, 3, (), 7, "0.32.0", False)


@dataclass
class ScriptedEngine:
    """Counts every prompt as ``count`` tokens and reports ``usage_prompt`` in its answers."""

    count: int = 30
    usage_prompt: int = 30
    seen: list[dict] = field(default_factory=list)

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content or b"{}")
        if request.url.path == "/tokenize":
            return httpx.Response(200, json={"count": self.count, "max_model_len": 2048})
        self.seen.append(body)
        usage = {
            "prompt_tokens": self.usage_prompt,
            "completion_tokens": 1,
            "total_tokens": 2,
        }
        if body.get("stream"):
            chunk = {"choices": [{"index": 0, "text": "x"}], "usage": None}
            last = {"choices": [], "usage": usage}
            sse = f"data: {json.dumps(chunk)}\n\ndata: {json.dumps(last)}\n\ndata: [DONE]\n\n"
            return httpx.Response(200, content=sse.encode(), headers={"content-type": "text/event-stream"})
        return httpx.Response(200, json={"choices": [{"index": 0, "text": "x"}], "usage": usage})


def _client(tmp_path: Path, engine: ScriptedEngine, **salt: object) -> TestClient:
    (tmp_path / "config.json").write_text("{}")
    cfg = EngineConfig(
        model=tmp_path,
        served_model_name="tiny",
        max_model_len=2048,
        kv_cache_memory_bytes=1 << 20,
        cache_salt=CacheSaltConfig(**salt),
    )
    app = create_front(FakeSupervisor(cfg), transport=httpx.MockTransport(engine))  # type: ignore[arg-type]  # a test fake standing in for the real class
    return TestClient(app)


BODY = {"model": "tiny", "prompt": "hello", "max_tokens": 1, "cache_salt": "s"}


def test_honest_answer_passes_through(tmp_path: Path) -> None:
    """usage.prompt_tokens equal to the /tokenize count: the answer is relayed with 200."""
    with _client(tmp_path, ScriptedEngine()) as client:
        r = client.post("/v1/completions", json=BODY)
    assert r.status_code == 200 and r.json()["choices"][0]["text"] == "x"
    assert r.headers["x-tiergate-prompt-tokens"] == "30"


def test_placeholder_answer_is_withheld(tmp_path: Path) -> None:
    """An engine that answers 200 for a 1-token placeholder gets its answer replaced by a 502."""
    with _client(tmp_path, ScriptedEngine(count=30, usage_prompt=1)) as client:
        r = client.post("/v1/completions", json=BODY)
        assert r.status_code == 502
        assert r.json()["error"]["code"] == "engine_integrity"
        assert "x" not in r.json()["error"]["message"]
        metrics = client.get("/metrics").text
    assert "tiergate_engine_integrity_failures_total 1.0" in metrics
    assert "tiergate_engine_kv_blocks_zeroed_total 7.0" in metrics


def test_placeholder_stream_ends_with_an_error_event(tmp_path: Path) -> None:
    """Streaming: the usage chunk's mismatch turns into an SSE error and no [DONE]."""
    with _client(tmp_path, ScriptedEngine(count=30, usage_prompt=1)) as client:
        r = client.post("/v1/completions", json={**BODY, "stream": True})
    assert r.status_code == 200
    assert '"code": "engine_integrity"' in r.text
    assert "[DONE]" not in r.text


def test_tenant_header_derives_the_salt(tmp_path: Path) -> None:
    """With a salt secret, the front derives cache_salt from the tenant header over the client's."""
    key = b"k" * 32
    (tmp_path / "salt.key").write_bytes(key)
    engine = ScriptedEngine()
    with _client(tmp_path, engine, secret_file=tmp_path / "salt.key") as client:
        missing = client.post("/v1/completions", json=BODY)
        r = client.post("/v1/completions", json=BODY, headers={"X-Tiergate-Tenant": "acme"})
    assert missing.status_code == 400 and missing.json()["error"]["code"] == "tenant_required"
    assert r.status_code == 200
    assert engine.seen[-1]["cache_salt"] == derive_cache_salt(key, "acme")


def test_short_salt_secret_fails_at_start(tmp_path: Path) -> None:
    """A salt secret under 16 bytes stops the front from being built."""
    (tmp_path / "salt.key").write_bytes(b"short")
    with pytest.raises(ValueError):
        _client(tmp_path, ScriptedEngine(), secret_file=tmp_path / "salt.key")


def test_unknown_routes_are_not_proxied(tmp_path: Path) -> None:
    """vLLM's other routes (e.g. /v1/load_lora_adapter) are not reachable through the front."""
    engine = ScriptedEngine()
    with _client(tmp_path, engine) as client:
        assert client.post("/v1/load_lora_adapter", json={}).status_code in (404, 405)
        assert client.post("/v1/embeddings", json={}).status_code in (404, 405)
    assert engine.seen == []
