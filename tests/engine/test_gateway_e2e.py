"""End to end: the gateway in front of the real hardened engine (session server) and a shared fake.

A Tier-3 prompt must reach this engine and nothing else, with the tenant's derived cache_salt;
when the engine's manifest stops vouching for KV zeroing, or its pool is below the context the
gateway assumes, Tier 3 is refused and nothing is forwarded.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from engine.salt import derive_cache_salt
from tests.engine.conftest import MAX_MODEL_LEN, EngineServer
from tests.support import FakeUpstream
from tests.support.harness import SECRETS, FakeUpstreams, GatewayHarness

# The first test also pays for the session's engine start (minutes on a busy 2-core machine).
pytestmark = [pytest.mark.vllm, pytest.mark.timeout(900)]

SSN = "078-05-1120"
FILLER = " ".join(f"Quarterly payroll line {i} under review." for i in range(12))
TIER3 = f"STRICTLY CONFIDENTIAL. Employee record: SSN {SSN}, salary review notes. {FILLER}"


@pytest.fixture(scope="module")
def classifier() -> Any:
    from tiers import Classifier
    from tiers.config import TiersConfig

    return Classifier(TiersConfig(internal_domains=("corp.example.com",)))


@pytest.fixture
def vendor() -> Iterator[FakeUpstreams]:
    with FakeUpstreams(FakeUpstream(name="vendor", kind="shared")) as f:
        yield f


def _config(vendor: FakeUpstreams, engine: EngineServer, tiny_model: Path, context_window: int) -> dict:
    return {
        "upstreams": [
            {
                "name": "vendor",
                "base_url": vendor.base_url("vendor"),
                "kind": "shared",
                "max_tier": 2,
                "models": {"chat": "vendor-chat"},
                "context_window": 100_000,
                "timeouts": {"read": 30},
            },
            {
                "name": "engine",
                "base_url": engine.url + "/v1",
                "kind": "onprem",
                "max_tier": 3,
                "models": {"chat": "tiny"},
                "context_window": context_window,
                "tokenizer_file": str(tiny_model / "tokenizer.json"),
                "timeouts": {"read": 120},
            },
        ],
        "limits": {"auth_cache_s": 0},
    }


def _success_count(engine: EngineServer) -> float:
    return engine.metric("vllm:request_success_total")


def test_tier3_reaches_only_the_hardened_engine_with_the_tenant_salt(
    engine_server: EngineServer,
    tiny_model: Path,
    vendor: FakeUpstreams,
    sqlite_db: str,
    tmp_path: Path,
    classifier: Any,
) -> None:
    """Tier 3 goes to the real engine (not the shared vendor), salted for its tenant."""
    before = _success_count(engine_server)
    config = _config(vendor, engine_server, tiny_model, MAX_MODEL_LEN)
    with GatewayHarness(sqlite_db, tmp_path, config, classifier=classifier) as gw:
        client = gw.openai(gw.create_key("acme"))
        reply = client.chat.completions.create(
            model="chat",
            messages=[{"role": "user", "content": TIER3}],
            max_tokens=3,
            extra_body={"cache_salt": "client-chosen"},
        )
        assert reply.usage is not None and reply.usage.prompt_tokens > 128
        rows = gw.rows("SELECT tier, upstream FROM audit_requests")
    assert len(vendor["vendor"].ledger) == 0
    assert _success_count(engine_server) == before + 1
    assert [(r["tier"], r["upstream"]) for r in rows] == [(3, "engine")]
    # The engine cached that prompt under acme's derived salt, and only under it.
    salt_key = SECRETS["cache_salt_key"].encode()
    body = {
        "model": "tiny",
        "messages": [{"role": "user", "content": TIER3}],
        "max_tokens": 1,
    }
    with engine_server.client() as c:
        same = c.post(
            "/v1/chat/completions",
            json={**body, "cache_salt": derive_cache_salt(salt_key, "acme")},
        )
        other = c.post(
            "/v1/chat/completions",
            json={**body, "cache_salt": derive_cache_salt(salt_key, "globex")},
        )
    assert same.json()["usage"]["prompt_tokens_details"]["cached_tokens"] >= 128
    assert other.json()["usage"]["prompt_tokens_details"]["cached_tokens"] == 0


def _refused(gw: GatewayHarness) -> None:
    client = gw.openai(gw.create_key("acme"))
    with pytest.raises(openai.PermissionDeniedError) as err:
        client.chat.completions.create(model="chat", messages=[{"role": "user", "content": TIER3}], max_tokens=3)
    assert err.value.body["code"] == "tier_not_allowed"  # type: ignore[index]  # an error body is a dict
    assert SSN not in str(err.value.body)
    assert 'tiergate_onprem_hardened{upstream="engine"} 0.0' in httpx.get(gw.url + "/metrics").text


def test_tier3_refused_when_engine_manifest_loses_zeroing_evidence(
    engine_server: EngineServer,
    tiny_model: Path,
    vendor: FakeUpstreams,
    sqlite_db: str,
    tmp_path: Path,
    classifier: Any,
) -> None:
    """With one vLLM process's plugin record gone, the real manifest says kv_zeroing false: 403."""
    records = sorted(engine_server.state_dir.glob("kvzero-*.json"))
    hidden = {p: p.read_bytes() for p in records}
    for p in records:
        p.unlink()
    try:
        with engine_server.client() as c:
            assert c.get("/tiergate/manifest").json()["kv_zeroing"] is False
        before = _success_count(engine_server)
        config = _config(vendor, engine_server, tiny_model, MAX_MODEL_LEN)
        with GatewayHarness(sqlite_db, tmp_path, config, classifier=classifier) as gw:
            _refused(gw)
        assert _success_count(engine_server) == before
        assert len(vendor["vendor"].ledger) == 0
    finally:
        for p, data in hidden.items():
            p.write_bytes(data)
    with engine_server.client() as c:
        assert c.get("/tiergate/manifest").json()["kv_zeroing"] is True


def test_tier3_refused_when_pool_is_below_the_gateway_context(
    engine_server: EngineServer,
    tiny_model: Path,
    vendor: FakeUpstreams,
    sqlite_db: str,
    tmp_path: Path,
    classifier: Any,
) -> None:
    """A gateway assuming 8,192 tokens of context on this 3,968-token pool refuses Tier 3."""
    before = _success_count(engine_server)
    with GatewayHarness(
        sqlite_db,
        tmp_path,
        _config(vendor, engine_server, tiny_model, 8192),
        classifier=classifier,
    ) as gw:
        _refused(gw)
    assert _success_count(engine_server) == before
    assert len(vendor["vendor"].ledger) == 0
