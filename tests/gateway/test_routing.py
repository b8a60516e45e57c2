"""Routing: fallback order and its limits, safe prompt length, and rate limits in a real Redis."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import openai
import pytest

from tests.gateway.conftest import base_config, upstream_config
from tests.support import Scripted, free_port
from tests.support.harness import FakeUpstreams, GatewayHarness
from tests.support.tokenizer_files import byte_tokenizer, counter

HELLO = [{"role": "user", "content": "Say hello."}]
TIER3 = "STRICTLY CONFIDENTIAL. Employee record: SSN 078-05-1120."


def _dead(name: str = "dead", kind: str = "shared", max_tier: int = 2) -> dict[str, Any]:
    return {"name": name, "base_url": f"http://127.0.0.1:{free_port()}/v1", "kind": kind, "max_tier": max_tier,
            "models": {"chat": "dead-chat"}, "timeouts": {"connect": 1}}  # fmt: skip


def test_fallback_on_connect_failure_in_alias_order(fakes: FakeUpstreams, sqlite_db: str, tmp_path: Path,
                                                    classifier: Any) -> None:  # fmt: skip
    """An alias tries its upstreams in order; an unreachable one is skipped, and both attempts are
    in the audit log (the dead one as an upstream_error, the next as ok)."""
    cfg = base_config(fakes)
    cfg["upstreams"] = [_dead(), *cfg["upstreams"]]
    cfg["aliases"] = [{"name": "chat", "upstreams": ["dead", "local", "vendor"]}]
    with GatewayHarness(sqlite_db, tmp_path, cfg, classifier=classifier) as gw:
        gw.openai(gw.create_key()).chat.completions.create(model="chat", messages=HELLO)
        rows = gw.rows("SELECT r.upstream, o.status FROM audit_requests r JOIN audit_outcomes o "
                       "ON o.request_id = r.request_id ORDER BY r.request_id")  # fmt: skip
    assert len(fakes["local"].ledger) == 1 and len(fakes["vendor"].ledger) == 0
    assert sorted((r["upstream"], r["status"]) for r in rows) == [("dead", "upstream_error"), ("local", "ok")]


def test_fallback_on_5xx_but_never_to_lower_trust(gateway: GatewayHarness, fakes: FakeUpstreams) -> None:
    """A 5xx moves a Tier-1 request on to the next upstream; a Tier-3 request whose on-prem upstream
    fails is never moved to the shared one (502 instead)."""
    client = gateway.openai(gateway.create_key())
    fakes["vendor"].script = lambda r: Scripted(status=500)
    assert client.chat.completions.create(model="chat", messages=HELLO).choices[0].message.content == "ok"
    assert len(fakes["vendor"].ledger) == 1 and len(fakes["local"].ledger) == 1
    fakes["vendor"].ledger.clear()
    fakes["vendor"].script = lambda r: Scripted()
    fakes["local"].script = lambda r: Scripted(status=500)
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(model="chat", messages=[{"role": "user", "content": TIER3}])
    assert len(fakes["vendor"].ledger) == 0


def test_no_retry_after_bytes_streamed(gateway: GatewayHarness, fakes: FakeUpstreams) -> None:
    """A stream that breaks after bytes were relayed ends in an error event and is never retried."""
    fakes["vendor"].script = lambda r: Scripted(chunks=["a", "b", "c", "d"], cut_after_chunks=3)
    client = gateway.openai(gateway.create_key())
    got: list[str] = []
    with pytest.raises(openai.APIError):
        for chunk in client.chat.completions.create(model="chat", messages=HELLO, stream=True):
            got.extend(c.delta.content or "" for c in chunk.choices)
    assert "".join(got) == "ab"
    assert len(fakes["vendor"].ledger) == 1 and len(fakes["local"].ledger) == 0


def test_safe_prompt_length_exact(fakes: FakeUpstreams, sqlite_db: str, tmp_path: Path, classifier: Any) -> None:
    """With an exact tokenizer, a prompt of exactly the safe length goes to the upstream, one token
    more goes to the next eligible one, and past every limit the client gets 400 with zero calls."""
    tok = byte_tokenizer(tmp_path / "bytes.json")
    for fake in fakes.fakes.values():
        fake.count_tokens = counter(tok)
    ups = upstream_config(fakes, vendor={"tokenizer_file": str(tok), "safe_prompt_tokens": 100},
                          local={"tokenizer_file": str(tok), "safe_prompt_tokens": 150})  # fmt: skip
    with GatewayHarness(sqlite_db, tmp_path, {"upstreams": ups}, classifier=classifier) as gw:
        client = gw.openai(gw.create_key())

        def ask(n: int) -> None:
            client.chat.completions.create(model="chat", messages=[{"role": "user", "content": "a" * n}])

        ask(100)
        assert len(fakes["vendor"].ledger) == 1 and len(fakes["local"].ledger) == 0
        ask(101)
        assert len(fakes["vendor"].ledger) == 1 and len(fakes["local"].ledger) == 1
        ask(150)
        with pytest.raises(openai.BadRequestError) as err:
            ask(151)
        assert err.value.body["code"] == "context_length_exceeded"  # type: ignore[index]  # an error body is a dict
    assert len(fakes["vendor"].ledger) == 1 and len(fakes["local"].ledger) == 2


def test_safe_prompt_length_asks_the_engine_when_the_estimate_cannot_tell(
        fakes: FakeUpstreams, sqlite_db: str, tmp_path: Path, classifier: Any) -> None:  # fmt: skip
    """No tokenizer file, a tokenize_url: a prompt the estimate calls short but the engine counts
    past the safe length is not sent there; one the engine counts within it is; a clearly short
    prompt costs no /tokenize call; a failed count sends nothing more to that upstream. Counting
    hands the engine the prompt, so every count has its write-ahead row first, and the engine's
    count is kept in the outcome row."""
    tok = byte_tokenizer(tmp_path / "bytes.json")
    fakes["local"].count_tokens = counter(tok)  # one token per byte, 4x the default estimate
    ups = upstream_config(
        fakes,
        vendor={"max_tier": 2},
        local={"safe_prompt_tokens": 300, "tokenize_url": fakes.servers["local"].url + "/tokenize"},
    )
    cfg = {"upstreams": ups}
    with GatewayHarness(sqlite_db, tmp_path, cfg, classifier=classifier) as gw:
        client = gw.openai(gw.create_key())

        def ask(n: int) -> str:
            r = client.chat.completions.with_raw_response.create(
                model="local-only", messages=[{"role": "user", "content": "a" * n}]
            )
            return r.headers["x-request-id"]

        ask(40)  # estimate band tops out under 300: settled without asking
        assert len(fakes["local"].tokenized) == 0 and len(fakes["local"].ledger) == 1
        rid = ask(280)  # estimate 70 tokens, but its band reaches past 300: the engine says 286
        assert len(fakes["local"].tokenized) == 1 and len(fakes["local"].ledger) == 2
        engine_count = fakes["local"].prompt_tokens("/v1/chat/completions", fakes["local"].ledger.bodies()[-1])
        (row,) = gw.rows(
            "SELECT r.seq, r.forwarded, o.usage_prompt_tokens, o.seq AS oseq FROM audit_requests r "
            "JOIN audit_outcomes o ON o.request_id = r.request_id WHERE r.request_id = :r",
            {"r": rid},
        )
        assert row["forwarded"] and row["usage_prompt_tokens"] == engine_count and row["oseq"] > row["seq"]
        before = gw.rows("SELECT count(*) AS n FROM audit_requests")[0]["n"]
        with pytest.raises(openai.BadRequestError) as err:
            ask(298)  # estimate 75 tokens (fits), engine count 304 (does not)
        assert err.value.body["code"] == "context_length_exceeded"  # type: ignore[index]  # an error body is a dict
        assert len(fakes["local"].tokenized) == 2 and len(fakes["local"].ledger) == 2
        # The count itself was a forward: its row, then an outcome naming the engine's count.
        rows = gw.rows(
            "SELECT r.upstream, o.status, o.error_class, o.usage_prompt_tokens FROM audit_requests r "
            "JOIN audit_outcomes o ON o.request_id = r.request_id ORDER BY r.seq DESC LIMIT 1"
        )
        assert rows[0]["upstream"] == "local" and rows[0]["error_class"] == "prompt_too_long"
        assert rows[0]["usage_prompt_tokens"] > 300
        assert gw.rows("SELECT count(*) AS n FROM audit_requests")[0]["n"] == before + 1
        fakes["local"].tokenize_status = 500
        with pytest.raises(openai.APIStatusError) as err2:
            ask(280)
        assert err2.value.status_code == 502 and len(fakes["local"].ledger) == 2
        (last,) = gw.rows(
            "SELECT o.error_class FROM audit_requests r JOIN audit_outcomes o "
            "ON o.request_id = r.request_id ORDER BY r.seq DESC LIMIT 1"
        )
        assert last["error_class"] == "prompt_not_counted"


def test_rate_limits_in_redis_shared_by_replicas(fakes: FakeUpstreams, sqlite_db: str, tmp_path: Path,
                                                 classifier: Any, redis_url: str, unique_prefix: str) -> None:  # fmt: skip
    """Two gateway replicas on one Redis share a key's budget: the third request overall gets 429."""
    from gateway.ratelimit import RedisLimiter

    cfg = base_config(fakes, limits={"auth_cache_s": 0, "requests_per_minute": 2})
    lim_a, lim_b = (RedisLimiter(redis_url, prefix=unique_prefix) for _ in range(2))
    with GatewayHarness(sqlite_db, tmp_path / "a", cfg, classifier=classifier, limiter=lim_a) as a:
        key = a.create_key()
        with GatewayHarness(sqlite_db, tmp_path / "b", cfg, classifier=classifier, limiter=lim_b) as b:
            a.openai(key).chat.completions.create(model="chat", messages=HELLO)
            b.openai(key).chat.completions.create(model="chat", messages=HELLO)
            with pytest.raises(openai.RateLimitError):
                a.openai(key).chat.completions.create(model="chat", messages=HELLO)
            with pytest.raises(openai.RateLimitError):
                b.openai(key).chat.completions.create(model="chat", messages=HELLO)
    assert len(fakes["vendor"].ledger) == 2


def test_redis_down_fails_open_with_metric(fakes: FakeUpstreams, sqlite_db: str, tmp_path: Path,
                                           classifier: Any) -> None:  # fmt: skip
    """With the configured Redis unreachable, requests pass and the fail-open counter rises."""
    import httpx

    cfg = base_config(fakes, redis_url=f"redis://127.0.0.1:{free_port()}/0",
                      limits={"auth_cache_s": 0, "requests_per_minute": 1})  # fmt: skip
    with GatewayHarness(sqlite_db, tmp_path, cfg, classifier=classifier) as gw:
        client = gw.openai(gw.create_key())
        for _ in range(3):
            client.chat.completions.create(model="chat", messages=HELLO)
        metrics = httpx.get(gw.url + "/metrics").text
    assert "tiergate_ratelimit_backend_errors_total 3.0" in metrics
    assert len(fakes["vendor"].ledger) == 3
