"""Every upstream fails to count a prompt whose length the estimate cannot settle: the client gets
502 in its protocol's error shape, nothing but the counts reached the upstreams, and each count
(which handed an upstream the prompt) is in the audit log as a forwarded request with a 502
outcome, read back through the store's own exposure query."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from audit.queries import ExposureFilter, ExposureRow, stream_rows
from tests.gateway.conftest import upstream_config
from tests.support import Received, Scripted
from tests.support.harness import FakeUpstreams, GatewayHarness

# 280 bytes: the estimate (~70 tokens) says it fits 300, its ceiling (the bytes) says it may not.
TEXT = "a" * 280
BODIES = {
    "chat": ("/v1/chat/completions", {"model": "chat", "messages": [{"role": "user", "content": TEXT}]}),
    "completions": ("/v1/completions", {"model": "chat", "prompt": TEXT}),
    "messages": ("/v1/messages", {"model": "chat", "max_tokens": 5, "messages": [{"role": "user", "content": TEXT}]}),
    "count_tokens": ("/v1/messages/count_tokens", {"model": "chat", "messages": [{"role": "user", "content": TEXT}]}),
}  # fmt: skip


def _count_fails(r: Received) -> Scripted:
    return Scripted(status=500) if r.path.endswith("/count_tokens") else Scripted()


async def _rows(store: Any) -> list[ExposureRow]:
    return [r async for r in stream_rows(store.engine, ExposureFilter(forwarded_only=False))]


@pytest.mark.parametrize("endpoint", sorted(BODIES))
def test_every_count_failing_is_502_with_its_rows(endpoint: str, fakes: FakeUpstreams, sqlite_db: str,
                                                  tmp_path: Path, classifier: Any) -> None:  # fmt: skip
    extra = {name: {"protocols": ["openai", "anthropic"], "safe_prompt_tokens": 300,
                    "tokenize_url": fakes.servers[name].url + "/tokenize"} for name in ("vendor", "local")}  # fmt: skip
    for name in ("vendor", "local"):
        fakes[name].tokenize_status = 500  # vLLM's /tokenize (OpenAI wire)
        fakes[name].script = _count_fails  # the Messages API's count_tokens
    with GatewayHarness(sqlite_db, tmp_path, {"upstreams": upstream_config(fakes, **extra)},
                        classifier=classifier) as gw:  # fmt: skip
        path, body = BODIES[endpoint]
        r = httpx.post(gw.url + path, json=body, timeout=30,
                       headers={"authorization": f"Bearer {gw.create_key()}", "anthropic-version": "2023-06-01"})  # fmt: skip
        gw.settle()
        rows = gw.admin(_rows)
    assert r.status_code == 502, r.text
    if endpoint in ("messages", "count_tokens"):
        assert r.json()["type"] == "error" and r.json()["error"]["type"] == "api_error"
    else:
        assert r.json()["error"]["type"] == "upstream_error"
        assert r.json()["error"]["code"] == "upstream_unavailable"
    assert TEXT not in r.text
    # Each upstream was asked to count, and was sent nothing else.
    for name in ("vendor", "local"):
        counted = len(fakes[name].tokenized) + sum(i.path.endswith("/count_tokens") for i in fakes[name].ledger.items())
        assert counted == 1 and len(fakes[name].ledger) == (1 if endpoint in ("messages", "count_tokens") else 0)
    # One row per count, in upstream order, under the request's id and then <id>-1.
    assert [(row.upstream, row.forwarded, row.status, row.http_status) for row in rows] == [
        ("vendor", True, "upstream_error", 502),
        ("local", True, "upstream_error", 502),
    ]
    first, second = (row.request_id for row in rows)
    assert second == first + "-1" and all(row.endpoint == endpoint for row in rows)
    # after every fallback failed, the answer still names the request its rows are filed under
    assert r.headers.get("x-request-id") == first
