"""Anthropic Messages on the real hardened engine (session server): vLLM 0.32 serves /v1/messages
natively and the front admits it like the chat routes, so Tier-3 Claude Code traffic can stay
on-prem. vLLM's own count_tokens must agree with the usage it reports, or every answer would be
withheld as an integrity failure."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest

from tests.engine.conftest import MAX_MODEL_LEN, EngineServer
from tests.engine.test_gateway_e2e import SSN, TIER3
from tests.support import FakeUpstream
from tests.support.harness import FakeUpstreams, GatewayHarness

pytestmark = [pytest.mark.vllm, pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
def classifier() -> Any:
    from tiers import Classifier
    from tiers.config import TiersConfig

    return Classifier(TiersConfig())


@pytest.fixture
def vendor() -> Iterator[FakeUpstreams]:
    with FakeUpstreams(FakeUpstream(name="vendor", kind="shared")) as f:
        yield f


def _prompt(usage: Any) -> int:
    return int(usage.input_tokens + (usage.cache_creation_input_tokens or 0) + (usage.cache_read_input_tokens or 0))


def test_tier3_message_answered_by_the_engine_whole_and_streamed(
    engine_server: EngineServer,
    tiny_model: Path,
    vendor: FakeUpstreams,
    sqlite_db: str,
    tmp_path: Path,
    classifier: Any,
) -> None:
    config = {
        "upstreams": [
            {"name": "vendor", "base_url": vendor.base_url("vendor"), "kind": "shared", "max_tier": 2,
             "models": {"chat": "vendor-chat"}, "context_window": 100_000, "protocols": ["openai", "anthropic"]},
            {"name": "engine", "base_url": engine_server.url + "/v1", "kind": "onprem", "max_tier": 3,
             "models": {"chat": "tiny"}, "context_window": MAX_MODEL_LEN, "protocols": ["openai", "anthropic"],
             "tokenizer_file": str(tiny_model / "tokenizer.json"), "timeouts": {"read": 120}},
        ],
        "limits": {"auth_cache_s": 0},
    }  # fmt: skip
    with GatewayHarness(sqlite_db, tmp_path, config, classifier=classifier) as gw:
        client = anthropic.Anthropic(api_key=gw.create_key("acme"), base_url=gw.url, max_retries=0, timeout=120)
        messages = [{"role": "user", "content": TIER3}]
        # 16 tokens: a random model's 3 may all be special tokens, an empty answer cut by
        # max_tokens, which the gateway rightly withholds (empty_length).
        whole = client.messages.create(model="chat", max_tokens=16, messages=messages)
        prompt = _prompt(whole.usage)  # vLLM reports what its prefix cache held apart, as Anthropic does
        assert prompt > 128 and whole.model == "chat"
        counted = client.messages.count_tokens(model="chat", messages=messages)
        assert counted.input_tokens == prompt
        with client.messages.stream(model="chat", max_tokens=16, messages=messages) as s:
            final = s.get_final_message()
        assert _prompt(final.usage) == prompt
        rows = gw.rows("SELECT r.endpoint, r.tier, r.upstream, o.status FROM audit_requests r "
                       "JOIN audit_outcomes o USING (request_id) ORDER BY r.seq")  # fmt: skip
    assert [(r["endpoint"], r["tier"], r["upstream"], r["status"]) for r in rows] == [
        ("messages", 3, "engine", "ok"),
        ("count_tokens", 3, "engine", "ok"),
        ("messages", 3, "engine", "ok"),
    ]
    assert len(vendor["vendor"].ledger) == 0
    assert SSN not in str(rows)


def test_tier3_response_answered_by_the_engine_whole_and_streamed(
    engine_server: EngineServer,
    tiny_model: Path,
    vendor: FakeUpstreams,
    sqlite_db: str,
    tmp_path: Path,
    classifier: Any,
) -> None:
    """The Responses API too: instructions, a message, a tool call and its output, counted with
    /tokenize over vLLM's own conversion to chat messages, within the front's band."""
    config = {
        "upstreams": [
            {"name": "engine", "base_url": engine_server.url + "/v1", "kind": "onprem", "max_tier": 3,
             "models": {"chat": "tiny"}, "context_window": MAX_MODEL_LEN, "protocols": ["openai", "responses"],
             "tokenizer_file": str(tiny_model / "tokenizer.json"), "timeouts": {"read": 120}},
        ],
        "limits": {"auth_cache_s": 0},
    }  # fmt: skip
    items = [
        {"role": "user", "content": [{"type": "input_text", "text": TIER3}]},
        {"type": "function_call", "call_id": "call_1", "name": "lookup", "arguments": '{"q": "payroll"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "three lines found"},
    ]
    tools = [{"type": "function", "name": "lookup", "description": "Looks a record up",
              "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}]  # fmt: skip
    with GatewayHarness(sqlite_db, tmp_path, config, classifier=classifier) as gw:
        client = gw.openai(gw.create_key("acme")).with_options(timeout=120)
        whole = client.responses.create(model="chat", instructions="Answer briefly.", input=items, tools=tools,
                                        max_output_tokens=16)  # fmt: skip
        assert whole.usage is not None and whole.usage.input_tokens > 128 and whole.model == "chat"
        events = list(client.responses.create(model="chat", input=TIER3, max_output_tokens=16, stream=True))
        assert events[-1].type in ("response.completed", "response.incomplete")
        rows = gw.rows("SELECT r.endpoint, r.tier, o.status FROM audit_requests r JOIN audit_outcomes o "
                       "USING (request_id) ORDER BY r.seq")  # fmt: skip
    assert [(r["endpoint"], r["tier"], r["status"]) for r in rows] == [("responses", 3, "ok")] * 2
