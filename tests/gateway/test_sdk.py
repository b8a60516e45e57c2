"""The official openai SDK against the gateway on a real port: every endpoint, every error class."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from tests.gateway.conftest import base_config, upstream_config
from tests.support import Scripted
from tests.support.harness import FakeUpstreams, GatewayHarness

HELLO = [{"role": "user", "content": "Say hello to the team."}]


def test_chat_non_streaming(gateway: GatewayHarness, fakes: FakeUpstreams) -> None:
    """A chat completion goes to the first eligible upstream under its provider name and back under
    the name the client asked for."""
    fakes["vendor"].script = lambda r: Scripted(content="Hello, team!")
    client = gateway.openai(gateway.create_key())
    reply = client.chat.completions.create(model="chat", messages=HELLO, temperature=0.2)
    assert reply.choices[0].message.content == "Hello, team!"
    assert reply.model == "chat"
    assert reply.usage is not None and reply.usage.prompt_tokens > 0
    (seen,) = fakes["vendor"].ledger.bodies()
    assert seen["model"] == "vendor-chat" and seen["temperature"] == 0.2
    assert seen["messages"] == HELLO
    assert len(fakes["local"].ledger) == 0


def test_chat_content_parts_and_streaming(gateway: GatewayHarness, fakes: FakeUpstreams) -> None:
    """A streamed answer arrives chunk by chunk and whole; content-part messages pass unchanged."""
    fakes["vendor"].script = lambda r: Scripted(chunks=["Hel", "lo, ", "team", "!"])
    client = gateway.openai(gateway.create_key())
    messages = [{"role": "user", "content": [{"type": "text", "text": "Say hello to the team."}]}]
    stream = client.chat.completions.create(model="chat", messages=messages, stream=True,
                                            stream_options={"include_usage": True})  # fmt: skip
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Hello, team!"
    assert {c.model for c in chunks} == {"chat"}  # never the provider's "vendor-chat"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].usage is not None and chunks[-1].usage.prompt_tokens > 0
    (seen,) = fakes["vendor"].ledger.bodies()
    assert seen["stream"] is True and seen["stream_options"] == {"include_usage": True}
    assert seen["messages"] == messages


def test_stream_without_usage_request_gets_none(gateway: GatewayHarness, fakes: FakeUpstreams) -> None:
    """The gateway asks the upstream for usage, but a client that did not ask gets no usage chunk."""
    fakes["vendor"].script = lambda r: Scripted(chunks=["a", "b"])
    client = gateway.openai(gateway.create_key())
    chunks = list(client.chat.completions.create(model="chat", messages=HELLO, stream=True))
    assert all(c.usage is None for c in chunks) and all(c.choices for c in chunks)
    assert fakes["vendor"].ledger.bodies()[0]["stream_options"] == {"include_usage": True}


def test_embeddings_and_completions(gateway: GatewayHarness, fakes: FakeUpstreams) -> None:
    """Embeddings and legacy completions are proxied with their own shapes."""
    client = gateway.openai(gateway.create_key())
    emb = client.embeddings.create(model="embed", input=["first text", "second text"])
    assert len(emb.data) == 2 and emb.data[1].embedding == [0.0, 0.1, 0.2]
    assert emb.model == "embed"
    fakes["vendor"].script = lambda r: Scripted(content=" world")
    done = client.completions.create(model="chat", prompt="hello", max_tokens=3)
    assert done.choices[0].text == " world" and done.model == "chat"
    bodies = fakes["vendor"].ledger.bodies()
    assert bodies[0]["model"] == "vendor-embed" and bodies[0]["input"] == ["first text", "second text"]
    assert bodies[1]["prompt"] == "hello" and bodies[1]["model"] == "vendor-chat"


def test_token_id_prompts_counted(gateway: GatewayHarness, fakes: FakeUpstreams) -> None:
    """Prompts given as token ids are counted exactly, so an honest upstream is not flagged; with
    no tokenizer to read them they are UNREADABLE (Tier 3) and reach only the on-prem upstream."""
    client = gateway.openai(gateway.create_key())
    done = client.completions.with_raw_response.create(model="chat", prompt=list(range(300)), max_tokens=2)
    answer = done.parse()
    assert answer.choices[0].text == "ok" and answer.usage is not None and answer.usage.prompt_tokens == 300
    emb = client.embeddings.create(model="embed", input=[list(range(50)), list(range(70))])
    assert len(emb.data) == 2
    assert len(fakes["vendor"].ledger) == 0
    assert fakes["local"].ledger.bodies()[0]["prompt"] == list(range(300))
    (row,) = gateway.rows(
        "SELECT tier, findings FROM audit_requests WHERE request_id = :r", {"r": done.headers["x-request-id"]}
    )
    assert row["tier"] == 3 and "UNREADABLE" in row["findings"]


def test_models_only_those_the_key_may_use(gateway: GatewayHarness) -> None:
    """GET /v1/models lists every model for an unrestricted key and only the allowed ones otherwise."""
    full = {m.id for m in gateway.openai(gateway.create_key()).models.list()}
    assert full == {"chat", "embed", "local-only"}
    capped = gateway.openai(gateway.create_key("acme", models=["chat"]))
    assert [m.id for m in capped.models.list()] == ["chat"]
    assert capped.models.retrieve("chat").id == "chat"
    with pytest.raises(openai.NotFoundError):
        capped.models.retrieve("embed")


def _assert_shape(exc: openai.APIStatusError, status: int, code: str | None = None) -> None:
    assert exc.status_code == status
    body: Any = exc.body
    assert set(body) == {"message", "type", "param", "code"}, body
    if code is not None:
        assert body["code"] == code


def test_errors_raise_the_sdk_exceptions(gateway: GatewayHarness, fakes: FakeUpstreams) -> None:
    """401, 403, 404, 413, 422 come back in the OpenAI shape and the SDK raises its usual classes."""
    key = gateway.create_key("acme", models=["chat", "embed"])
    client = gateway.openai(key)
    with pytest.raises(openai.AuthenticationError) as e401:
        gateway.openai("tg_0000000000000000_nope").chat.completions.create(model="chat", messages=HELLO)
    _assert_shape(e401.value, 401, "invalid_api_key")
    with pytest.raises(openai.PermissionDeniedError) as e403:
        client.chat.completions.create(model="local-only", messages=HELLO)
    _assert_shape(e403.value, 403, "model_not_allowed")
    with pytest.raises(openai.NotFoundError) as e404:
        gateway.openai(gateway.create_key()).chat.completions.create(model="nope", messages=HELLO)
    _assert_shape(e404.value, 404, "model_not_found")
    with pytest.raises(openai.UnprocessableEntityError) as e422:
        client.chat.completions.create(model="chat", messages="not a list")  # type: ignore[arg-type]  # deliberately the wrong type: the test is that it is refused
    _assert_shape(e422.value, 422)
    big = "x" * (gateway.settings.server.max_body_bytes + 10)
    with pytest.raises(openai.APIStatusError) as e413:
        client.chat.completions.create(model="chat", messages=[{"role": "user", "content": big}])
    _assert_shape(e413.value, 413, "request_too_large")
    raw = httpx.post(gateway.url + "/v1/chat/completions", content=b"{not json",
                     headers={"authorization": f"Bearer {key}"})  # fmt: skip
    assert raw.status_code == 400 and raw.json()["error"]["type"] == "invalid_request_error"
    missing = httpx.get(gateway.url + "/v1/nothing-here")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    assert len(fakes["vendor"].ledger) == 0 and len(fakes["local"].ledger) == 0


def test_rate_limit_429(fakes: FakeUpstreams, sqlite_db: str, tmp_path: Path, classifier: Any) -> None:
    """Past the key's requests-per-minute budget the SDK raises RateLimitError; nothing is forwarded."""
    cfg = base_config(fakes, limits={"auth_cache_s": 0, "requests_per_minute": 2})
    with GatewayHarness(sqlite_db, tmp_path, cfg, classifier=classifier) as gw:
        client = gw.openai(gw.create_key())
        for _ in range(2):
            client.chat.completions.create(model="chat", messages=HELLO)
        with pytest.raises(openai.RateLimitError) as e429:
            client.chat.completions.create(model="chat", messages=HELLO)
        _assert_shape(e429.value, 429)
        assert 1 <= int(e429.value.response.headers["retry-after"]) <= 60
    assert len(fakes["vendor"].ledger) == 2


def test_upstream_failures_502_and_504(fakes: FakeUpstreams, sqlite_db: str, tmp_path: Path, classifier: Any) -> None:
    """Every eligible upstream 5xx -> 502 (InternalServerError); an upstream read timeout -> 504."""
    ups = upstream_config(fakes, vendor={"timeouts": {"read": 0.5}}, local={"timeouts": {"read": 0.5}})
    with GatewayHarness(sqlite_db, tmp_path, {"upstreams": ups}, classifier=classifier) as gw:
        client = gw.openai(gw.create_key())
        fakes["vendor"].script = lambda r: Scripted(status=500)
        fakes["local"].script = lambda r: Scripted(status=503)
        with pytest.raises(openai.InternalServerError) as e502:
            client.chat.completions.create(model="chat", messages=HELLO)
        _assert_shape(e502.value, 502, "upstream_unavailable")
        fakes["vendor"].script = lambda r: Scripted(delay_s=2.0)
        with pytest.raises(openai.APIStatusError) as e504:
            client.chat.completions.create(model="chat", messages=HELLO)
        _assert_shape(e504.value, 504, "upstream_timeout")
    # The timed-out request was not retried elsewhere: the upstream may have processed it.
    assert len(fakes["local"].ledger) == 1
