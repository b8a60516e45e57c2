"""Oversized and malformed request bodies: always a 4xx in the OpenAI error shape (413 for too
large), never a 5xx, never internal detail in the answer, and nothing forwarded upstream."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.faults._gw import one_upstream
from tests.support import FakeUpstream
from tests.support.harness import FakeUpstreams, GatewayHarness

MAX_BODY = 64 * 1024
INTERNALS = ("Traceback", 'File "', "msgspec", "pydantic", "sqlalchemy", "litestar", "Exception", "0x7f")


@pytest.fixture(scope="module")
def env(
    tmp_path_factory: pytest.TempPathFactory, classifier: Any
) -> Iterator[tuple[GatewayHarness, FakeUpstream, str]]:
    tmp = tmp_path_factory.mktemp("bodies")
    with FakeUpstreams(FakeUpstream(name="vendor")) as fakes:
        cfg = {"upstreams": [one_upstream(fakes.base_url("vendor"))], "server": {"max_body_bytes": MAX_BODY}}
        with GatewayHarness(f"sqlite+aiosqlite:///{tmp / 'audit.db'}", tmp, cfg, classifier=classifier) as gw:
            yield gw, fakes["vendor"], gw.create_key()


def _check(r: httpx.Response, fake: FakeUpstream, before: int, expect: set[int] | None = None) -> None:
    assert 400 <= r.status_code < 500, (r.status_code, r.text[:300])
    if expect is not None:
        assert r.status_code in expect, (r.status_code, r.text[:300])
    err = r.json()["error"]
    assert set(err) >= {"message", "type", "code"} and len(err["message"]) < 300
    for word in INTERNALS:
        assert word not in r.text
    assert len(fake.ledger) == before  # nothing forwarded


def _nest(depth: int) -> str:
    return '{"model": "chat", "messages": [{"role": "user", "content": ' + "[" * depth + "]" * depth + "}]}"


MALFORMED: dict[str, bytes] = {
    "empty": b"",
    "not_json": b"model=chat&prompt=hi",
    "truncated": b'{"model": "chat", "messages": [{"role": "user", "content": "hi"',
    "array": b'[{"model": "chat"}]',
    "string": b'"chat"',
    "null": b"null",
    "invalid_utf8": b'{"model": "chat", "messages": [{"role": "user", "content": "\xff\xfe\xfd"}]}',
    "lone_surrogate": b'{"model": "chat", "messages": [{"role": "user", "content": "\\ud800 x"}]}',
    "nan": b'{"model": "chat", "messages": [{"role": "user", "content": "hi"}], "temperature": NaN}',
    "huge_int": b'{"model": "chat", "messages": [{"role": "user", "content": "hi"}], "max_tokens": '
    + b"9" * 5000
    + b"}",
    "model_int": b'{"model": 7, "messages": [{"role": "user", "content": "hi"}]}',
    "model_huge": json.dumps({"model": "m" * 50_000, "messages": [{"role": "user", "content": "hi"}]}).encode(),
    "messages_object": b'{"model": "chat", "messages": {"role": "user", "content": "hi"}}',
    "messages_empty": b'{"model": "chat", "messages": []}',
    "message_not_object": b'{"model": "chat", "messages": ["hi", 3, null]}',
    "content_object": b'{"model": "chat", "messages": [{"role": "user", "content": {"a": {"b": 1}}}]}',
    "content_parts_bad": b'{"model": "chat", "messages": [{"role": "user", "content": [{"type": "text"}, 5]}]}',
    "stream_string": b'{"model": "chat", "stream": "yes", "messages": [{"role": "user", "content": "hi"}]}',
    "deep_nesting": _nest(5000).encode(),
    "duplicate_keys": b'{"model": "chat", "model": "other", "messages": [{"role": "user", "content": "hi"}]}',
    "nul_bytes": b'{"model": "chat\\u0000", "messages": [{"role": "user", "content": "\\u0000"}]}',
    "content_part_type_object": b'{"model": "chat", "messages": [{"role": "user", "content": [{"type": {"a": 1}, "text": "hi"}]}]}',
    "unknown_model": b'{"model": "no-such-model", "messages": [{"role": "user", "content": "hi"}]}',
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_chat_body(name: str, env: tuple[GatewayHarness, FakeUpstream, str]) -> None:
    """A malformed chat body gets a 4xx error object without internals, and nothing is forwarded."""
    gw, fake, key = env
    before = len(fake.ledger)
    r = httpx.post(gw.url + "/v1/chat/completions", content=MALFORMED[name], timeout=30,
                   headers={"authorization": f"Bearer {key}", "content-type": "application/json"})  # fmt: skip
    _check(r, fake, before)


OTHER = [
    ("/v1/completions", b""), ("/v1/completions", b"[]"),
    ("/v1/completions", b'{"model": "chat"}'),
    ("/v1/completions", b'{"model": "chat", "prompt": {"text": "hidden"}}'),
    ("/v1/embeddings", b""), ("/v1/embeddings", b"[]"), ("/v1/embeddings", b'{"model": "chat"}'),
    ("/v1/embeddings", b'{"model": "embed-x", "input": {"text": "hidden"}}'),
    ("/v1/embeddings", b'{"model": "chat", "input": {"text": "hidden"}}'),
]  # fmt: skip


@pytest.mark.parametrize(("path", "body"), OTHER)
def test_malformed_other_endpoints(path: str, body: bytes, env: tuple[GatewayHarness, FakeUpstream, str]) -> None:
    """The legacy completions and embeddings endpoints refuse malformed bodies the same way."""
    gw, fake, key = env
    before = len(fake.ledger)
    r = httpx.post(gw.url + path, content=body, headers={"authorization": f"Bearer {key}"}, timeout=30)
    _check(r, fake, before)


def test_oversized_body_is_413(env: tuple[GatewayHarness, FakeUpstream, str]) -> None:
    """A body over server.max_body_bytes gets 413 request_too_large (with a key) and 401 (without),
    whether it declares its length or streams it chunked."""
    gw, fake, key = env
    before = len(fake.ledger)
    big = json.dumps({"model": "chat", "messages": [{"role": "user", "content": "a" * (MAX_BODY * 2)}]}).encode()
    auth = {"authorization": f"Bearer {key}"}
    r = httpx.post(gw.url + "/v1/chat/completions", content=big, headers=auth, timeout=30)
    _check(r, fake, before, {413})
    assert r.json()["error"]["code"] == "request_too_large"

    def chunks() -> Iterator[bytes]:
        for i in range(0, len(big), 8192):
            yield big[i : i + 8192]

    r = httpx.post(gw.url + "/v1/chat/completions", content=chunks(), headers=auth, timeout=30)
    _check(r, fake, before, {413})
    r = httpx.post(gw.url + "/v1/chat/completions", content=big, timeout=30)
    _check(r, fake, before, {401})


def test_lying_content_length_and_garbage_http(env: tuple[GatewayHarness, FakeUpstream, str]) -> None:
    """A Content-Length far above the limit is refused without reading it; raw garbage on the socket
    gets a 4xx or a closed connection, and the server keeps serving."""
    gw, fake, key = env
    before = len(fake.ledger)
    host, port = "127.0.0.1", int(gw.url.rsplit(":", 1)[1])
    for raw in (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {10**12}\r\n\r\n{{".encode(),
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + b"\x00" * 64,  # a TLS hello on a plain port
        b"GET /" + b"A" * 100_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
    ):
        with socket.create_connection((host, port), timeout=10) as s:
            s.sendall(raw)
            s.shutdown(socket.SHUT_WR)
            data = b""
            while chunk := s.recv(65536):
                data += chunk
        status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.1 ") else None
        assert status is None or 400 <= status < 500, data[:200]
    assert httpx.get(gw.url + "/healthz", timeout=10).status_code == 200
    assert len(fake.ledger) == before
