"""Log injection: CR/LF, ANSI escapes and huge strings in model names, headers and paths cannot
forge or corrupt log records. Every line the gateway's loggers write while under attack starts as a
record of its own, carries no terminal escape, and stays bounded in length."""

from __future__ import annotations

import json
import logging
import re
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from gateway.logs import OneLineFormatter
from migrations import upgrade
from tests.faults._gw import chat_body, one_upstream, write_config
from tests.faults.conftest import admin, create_key
from tests.support import FakeUpstream, GatewayProcess, free_port
from tests.support.harness import FakeUpstreams, GatewayHarness

FORGED = "FORGEDRECORD"
RECORD = re.compile(r"^(DEBUG|INFO|WARNING|ERROR|CRITICAL) [\w.\-]+: ")
PAYLOADS = [
    f"chat\r\nERROR tiergate.audit: {FORGED} audit chain broken",
    f"chat\nCRITICAL tiergate.gateway: {FORGED}",
    f"\x1b[2J\x1b[31m{FORGED}\x1b[0m",
    f"chat\u2028ERROR tiergate.audit: {FORGED}\u0085NEL",
    "m" * 100_000 + FORGED,
]


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, classifier: Any) -> Iterator[tuple[GatewayHarness, str, Path]]:
    tmp: Path = tmp_path_factory.mktemp("logs")
    log_file = tmp / "gateway.log"
    handler = logging.FileHandler(log_file, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    handler.setLevel(logging.DEBUG)
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    # httpx logs every request URL at INFO, this test's own client's included (percent-encoded,
    # so inert): keep the file to what the server writes.
    client_log = logging.getLogger("httpx")
    client_level = client_log.level
    client_log.setLevel(logging.WARNING)
    try:
        with FakeUpstreams(FakeUpstream(name="vendor")) as fakes:
            cfg = {"upstreams": [one_upstream(fakes.base_url("vendor"))]}
            with GatewayHarness(f"sqlite+aiosqlite:///{tmp / 'audit.db'}", tmp, cfg, classifier=classifier) as gw:
                yield gw, gw.create_key(), log_file
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
        client_log.setLevel(client_level)
        handler.close()


def _raw(url: str, request: bytes) -> bytes:
    port = int(url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(request)
        s.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return data


def _attack(url: str, key: str) -> None:
    """Hostile model names, user fields, paths and headers (raw where HTTP clients refuse them)."""
    auth = {"authorization": f"Bearer {key}"}
    statuses = []
    for payload in PAYLOADS:
        for path in ("/v1/chat/completions", "/v1/embeddings", "/v1/completions"):
            body = {**chat_body("hello"), "model": payload, "prompt": "hello", "input": "hello"}
            statuses.append(httpx.post(url + path, json=body, headers=auth, timeout=30).status_code)
        model_path = "/v1/models/" + quote(payload[:2000], safe="")
        statuses.append(httpx.get(url + model_path, headers=auth, timeout=30).status_code)
        body = {**chat_body("hello"), "user": payload, "metadata": {"k": payload}}
        statuses.append(httpx.post(url + "/v1/chat/completions", json=body, headers=auth, timeout=30).status_code)
    assert all(s < 500 for s in statuses), statuses
    # Headers and paths only a raw socket can send: bare CR/LF, escapes, a huge header.
    for head in (
        f"GET /v1/models%0d%0aERROR%20tiergate.audit:%20{FORGED} HTTP/1.1\r\nHost: x\r\n\r\n",
        f"GET /healthz HTTP/1.1\r\nHost: x\r\nUser-Agent: a\rERROR tiergate: {FORGED}\r\n\r\n",
        f"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Model: \x1b[31m{FORGED}\r\n\r\n",
        f"GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {'k' * 70_000}{FORGED}\r\n\r\n",
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n"
        f'Content-Type: application/json\r\nContent-Length: 20\r\n\r\n{{"model":"\\r\\n{FORGED}',
    ):
        _raw(url, head.encode("latin-1"))
    assert httpx.get(url + "/healthz", timeout=10).status_code == 200


def test_injection_cannot_forge_log_records(env: tuple[GatewayHarness, str, Path]) -> None:
    """Hostile model names, headers and paths leave only well-formed, escape-free, bounded records."""
    gw, key, log_file = env
    _attack(gw.url, key)
    for handler in logging.getLogger().handlers:
        handler.flush()
    text = log_file.read_text(encoding="utf-8")
    lines = text.split("\n")[:-1]
    assert lines, "the attacks produced no log record at all; the check would prove nothing"
    assert [ln for ln in lines if not RECORD.match(ln)] == []
    assert "\x1b" not in text and "\r" not in text and "\u2028" not in text and "\x85" not in text
    assert FORGED not in text
    assert max(len(ln) for ln in lines) < 2000


def test_hostile_model_names_are_stored_inert(env: tuple[GatewayHarness, str, Path]) -> None:
    """A refused request's model name lands in the audit row bounded and as data (JSON-escaped when
    read back), never as extra rows or columns."""
    gw, key, _log = env
    before = gw.rows("SELECT count(*) AS n FROM audit_requests")[0]["n"]
    httpx.post(gw.url + "/v1/chat/completions", json={**chat_body("hello"), "model": PAYLOADS[0]},
               headers={"authorization": f"Bearer {key}"}, timeout=30)  # fmt: skip
    rows = gw.rows("SELECT client_model FROM audit_requests")
    assert len(rows) == before + 1
    stored = rows[-1]["client_model"]
    assert stored is None or (len(stored) <= 200 and json.loads(json.dumps(stored)) == stored)


SERVE_RECORD = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (DEBUG|INFO|WARNING|ERROR|CRITICAL) [\w.\-]+: ")


def test_tiergate_serve_writes_one_line_records_under_attack(tmp_path: Path) -> None:
    """The real `tiergate serve` process: after the same attacks (and an upstream that is down, so
    the gateway logs errors of its own) every line on its stderr is one timestamped record."""
    db_url = f"sqlite+aiosqlite:///{tmp_path / 'audit.db'}"
    with FakeUpstreams(FakeUpstream(name="vendor")) as fakes:
        dead = one_upstream(f"http://127.0.0.1:{free_port()}/v1", name="dead", models={"dead": "dead-chat"})
        config = write_config(tmp_path, db_url, [one_upstream(fakes.base_url("vendor")), dead])
        admin(db_url, tmp_path, lambda st: upgrade(st))
        key = create_key(db_url, tmp_path)
        log_path = tmp_path / "serve.log"
        with GatewayProcess(config, log=log_path) as gw:
            _attack(gw.url, key)
            down = httpx.post(gw.url + "/v1/chat/completions", json={**chat_body("hello"), "model": "dead"},
                              headers={"authorization": f"Bearer {key}"}, timeout=30)  # fmt: skip
            assert down.status_code == 502
            gw.stop()
    text = log_path.read_text(encoding="utf-8", errors="replace")
    lines = text.split("\n")[:-1]
    assert any(" WARNING uvicorn" in ln for ln in lines), "no record from the attacks: nothing proven"
    assert [ln for ln in lines if not SERVE_RECORD.match(ln)] == []
    assert "\x1b" not in text and "\r" not in text and "\u2028" not in text and "\x85" not in text
    assert FORGED not in text
    assert max(len(ln) for ln in lines) < 4100


def test_the_formatter_keeps_a_hostile_message_on_one_inert_line() -> None:
    """Whatever a message holds (CR, LF, NEL, LS, ANSI escapes, 100 KB), it formats to one line."""
    formatter = OneLineFormatter()
    for payload in PAYLOADS:
        record = logging.LogRecord("tiergate.gateway", logging.ERROR, __file__, 1, "upstream said %s",
                                   (payload,), None)  # fmt: skip
        line = formatter.format(record)
        assert SERVE_RECORD.match(line) and "\n" not in line and "\r" not in line
        assert not any(ch in line for ch in "\x1b\x85\u2028\u2029") and len(line) < 4100
