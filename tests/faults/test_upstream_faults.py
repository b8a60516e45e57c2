"""The upstream times out, stalls or resets the connection, before or in the middle of an answer:
the client gets an explicit error (504 / 502, or an SSE error event), never a stream that looks
complete (no ``[DONE]``, no finish_reason), and the audit log records how it ended."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from tests.faults._gw import chat_body, one_upstream
from tests.support import FakeUpstream, Scripted
from tests.support.fault_proxy import FaultProxy
from tests.support.harness import FakeUpstreams, GatewayHarness

PROMPT = "List five facts about lighthouses."
PIECES = [f"Fact number {i} about lighthouses. " for i in range(40)]


@pytest.fixture
def fake() -> Iterator[FakeUpstreams]:
    with FakeUpstreams(FakeUpstream(name="vendor")) as f:
        yield f


@pytest.fixture
def proxy(fake: FakeUpstreams) -> Iterator[FaultProxy]:
    with FaultProxy("127.0.0.1", fake.servers["vendor"].port) as p:
        yield p


@pytest.fixture
def gw(proxy: FaultProxy, sqlite_db: str, tmp_path: Path, classifier: Any) -> Iterator[GatewayHarness]:
    """A gateway whose only upstream sits behind the fault proxy, with a 0.5 s read timeout."""
    cfg = {"upstreams": [one_upstream(f"http://{proxy.address}/v1", read_s=0.5)], "limits": {"auth_cache_s": 0}}
    with GatewayHarness(sqlite_db, tmp_path, cfg, classifier=classifier) as g:
        yield g


def _outcomes(gw: GatewayHarness) -> list[tuple[str, int, str | None]]:
    rows = gw.rows("SELECT status, http_status, error_class FROM audit_outcomes ORDER BY seq")
    return [(r["status"], r["http_status"], r["error_class"]) for r in rows]


def _events(key: str, gw: GatewayHarness, on_first_content: Any = None) -> list[Any]:
    """The client's SSE payloads, decoded; ``on_first_content`` runs once the first content arrives."""
    out: list[Any] = []
    with httpx.stream("POST", gw.url + "/v1/chat/completions", json=chat_body(PROMPT, stream=True),
                      headers={"authorization": f"Bearer {key}"}, timeout=20) as r:  # fmt: skip
        assert r.status_code == 200
        for line in r.iter_lines():
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            out.append(data if data == "[DONE]" else json.loads(data))
            if on_first_content is not None and _has_content(out[-1]):
                on_first_content()
                on_first_content = None
    return out


def _has_content(event: Any) -> bool:
    return isinstance(event, dict) and any((c.get("delta") or {}).get("content") for c in event.get("choices", []))


def _assert_broken_stream(events: list[Any], code: str) -> None:
    assert any(_has_content(e) for e in events)  # it really failed mid-stream
    assert "[DONE]" not in events
    assert not any(isinstance(e, dict) and any(c.get("finish_reason") for c in e.get("choices", []))
                   for e in events)  # fmt: skip
    last = events[-1]
    assert isinstance(last, dict) and "error" in last and last["error"]["code"] == code
    assert PROMPT not in json.dumps(last)


def test_timeout_before_the_answer_is_504(gw: GatewayHarness, fake: FakeUpstreams) -> None:
    """An upstream slower than the read timeout gives 504 upstream_timeout, recorded as a timeout."""
    fake["vendor"].script = lambda r: Scripted(delay_s=3.0)
    client = gw.openai(gw.create_key())
    with pytest.raises(openai.APIStatusError) as err:
        client.chat.completions.create(model="chat", messages=[{"role": "user", "content": PROMPT}])
    assert err.value.status_code == 504 and err.value.body["code"] == "upstream_timeout"  # type: ignore[index]  # an error body is a dict
    assert _outcomes(gw)[-1][:2] == ("timeout", 504)


def test_stall_mid_stream_ends_with_an_error_event(gw: GatewayHarness, fake: FakeUpstreams,
                                                   proxy: FaultProxy) -> None:  # fmt: skip
    """The upstream goes silent after the first chunks: the client's stream ends with an error event,
    no finish and no [DONE]; the SDK raises instead of returning a truncated answer."""
    fake["vendor"].script = lambda r: Scripted(chunks=PIECES, chunk_delay_s=0.02)
    key = gw.create_key()
    events = _events(key, gw, on_first_content=proxy.pause)
    proxy.heal()
    _assert_broken_stream(events, "upstream_timeout")
    assert _outcomes(gw)[-1][:2] == ("timeout", 504)


def test_reset_mid_stream_ends_with_an_error_event(gw: GatewayHarness, fake: FakeUpstreams,
                                                   proxy: FaultProxy) -> None:  # fmt: skip
    """A TCP reset after part of the stream: error event, no [DONE]; the SDK raises; audit says so."""
    fake["vendor"].script = lambda r: Scripted(chunks=PIECES)
    proxy.reset_after(1200)
    key = gw.create_key()
    events = _events(key, gw)
    assert proxy.stats.resets >= 1
    _assert_broken_stream(events, "upstream_reset")
    client = gw.openai(key)
    with pytest.raises(openai.APIError):
        for _chunk in client.chat.completions.create(model="chat", stream=True,
                                                     messages=[{"role": "user", "content": PROMPT}]):  # fmt: skip
            pass
    assert [o[:2] for o in _outcomes(gw)[-2:]] == [("upstream_error", 502)] * 2


def test_reset_mid_body_is_502_without_partial_text(gw: GatewayHarness, fake: FakeUpstreams,
                                                    proxy: FaultProxy) -> None:  # fmt: skip
    """A non-streamed answer cut by a reset gives 502 and none of the partial answer."""
    fake["vendor"].script = lambda r: Scripted(content="".join(PIECES))
    proxy.reset_after(300)
    r = httpx.post(gw.url + "/v1/chat/completions", json=chat_body(PROMPT),
                   headers={"authorization": f"Bearer {gw.create_key()}"}, timeout=20)  # fmt: skip
    assert r.status_code == 502 and "lighthouses" not in r.text
    assert _outcomes(gw)[-1][:2] == ("upstream_error", 502)


def test_refused_and_blackholed_upstream(gw: GatewayHarness, fake: FakeUpstreams, proxy: FaultProxy) -> None:
    """Connection refused gives 502 upstream_unavailable; an upstream that accepts and never answers
    gives 504 within the read timeout; both are recorded, neither hangs the client."""
    key = gw.create_key()
    proxy.refuse()
    r = httpx.post(gw.url + "/v1/chat/completions", json=chat_body(PROMPT),
                   headers={"authorization": f"Bearer {key}"}, timeout=20)  # fmt: skip
    assert r.status_code == 502 and r.json()["error"]["code"] == "upstream_unavailable"
    proxy.heal()
    proxy.blackhole()
    box: list[httpx.Response] = []
    t = threading.Thread(target=lambda: box.append(httpx.post(
        gw.url + "/v1/chat/completions", json=chat_body(PROMPT), headers={"authorization": f"Bearer {key}"},
        timeout=20)))  # fmt: skip
    t.start()
    t.join(timeout=20)
    assert box and box[0].status_code == 504
    assert len(fake["vendor"].ledger) == 0  # the blackhole swallowed it; the refusal never connected
    statuses = [o[:2] for o in _outcomes(gw)]
    assert ("upstream_error", 502) in statuses and statuses[-1] == ("timeout", 504)


def _assert_hang_up_recorded_and_upstream_closed(gw: GatewayHarness, proxy: FaultProxy) -> int:
    """The outcome is client_closed (499) and no more bytes flow from the upstream; returns how
    many did."""
    import time

    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not gw.rows("SELECT 1 FROM audit_outcomes"):
        time.sleep(0.05)
    assert _outcomes(gw) == [("client_closed", 499, "client_closed")]
    flowed = proxy.stats.downstream_bytes
    time.sleep(1.0)
    assert proxy.stats.downstream_bytes == flowed  # the upstream's stream was closed, not drained
    return flowed


def test_client_leaving_mid_stream_stops_the_upstream_and_is_recorded(
        gw: GatewayHarness, fake: FakeUpstreams, proxy: FaultProxy) -> None:  # fmt: skip
    """A client that hangs up after the first chunk: the gateway closes its upstream connection
    (no more bytes flow from the upstream) and records the outcome as client_closed (499)."""
    fake["vendor"].script = lambda r: Scripted(chunks=[f"piece {i} " for i in range(400)], chunk_delay_s=0.02)
    key = gw.create_key()
    with httpx.stream("POST", gw.url + "/v1/chat/completions", json=chat_body(PROMPT, stream=True),
                      headers={"authorization": f"Bearer {key}"}, timeout=20) as r:  # fmt: skip
        for line in r.iter_lines():
            if line.startswith("data:") and "piece" in line:
                break  # leaving: the stream would run for another ~8 s
    flowed = _assert_hang_up_recorded_and_upstream_closed(gw, proxy)
    assert flowed < 400 * 40  # far from the whole answer


def test_client_leaving_before_the_first_event_stops_the_upstream_and_is_recorded(
        gw: GatewayHarness, fake: FakeUpstreams, proxy: FaultProxy) -> None:  # fmt: skip
    """The answer's head waits for the first event; a client that hangs up before it (here while
    the upstream takes 0.3 s per event) still has its upstream stream closed and a 499 recorded."""
    import socket
    import time

    fake["vendor"].script = lambda r: Scripted(chunks=[f"piece {i} " for i in range(100)], chunk_delay_s=0.3)
    key = gw.create_key()
    body = json.dumps(chat_body(PROMPT, stream=True)).encode()
    host, port = gw.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + f"Authorization: Bearer {key}\r\nContent-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and len(fake["vendor"].ledger) == 0:
            time.sleep(0.01)
        assert len(fake["vendor"].ledger) == 1  # forwarded, and nothing answered yet
        sock.settimeout(0.05)
        with pytest.raises(TimeoutError):
            sock.recv(1)  # not even the head: it goes out with the first event
    _assert_hang_up_recorded_and_upstream_closed(gw, proxy)


def test_an_upstream_that_stops_reading_the_body_times_out(fake: FakeUpstreams, proxy: FaultProxy,
                                                           sqlite_db: str, tmp_path: Path, classifier: Any) -> None:  # fmt: skip
    """The upstream accepts the connection but stops reading a 6 MB body: the send is bounded by
    the upstream's timeouts (pool + connect + write + read) and the client gets 504, no hang."""
    import time

    timeouts = {"pool": 0.5, "connect": 0.5, "write": 1.0, "read": 0.5}
    up = one_upstream(f"http://{proxy.address}/v1", timeouts=timeouts, context_window=10_000_000)
    cfg = {"upstreams": [up], "limits": {"auth_cache_s": 0}, "server": {"max_body_bytes": 8 * 1024 * 1024}}
    with GatewayHarness(sqlite_db, tmp_path, cfg, classifier=classifier) as gw:
        key = gw.create_key()
        proxy.pause()
        try:
            started = time.monotonic()
            r = httpx.post(gw.url + "/v1/chat/completions", json=chat_body("lighthouse keepers " * 330_000),
                           headers={"authorization": f"Bearer {key}"}, timeout=60)  # fmt: skip
            took = time.monotonic() - started
        finally:
            proxy.heal()
        assert r.status_code == 504 and r.json()["error"]["code"] == "upstream_timeout", r.text
        assert took < 20, took
        assert _outcomes(gw)[-1][:2] == ("timeout", 504)
