"""Clients and upstreams that take for ever, against a real ``tiergate serve`` over real sockets:
slowloris headers and bodies are cut off at their deadline (408) while normal clients are served,
idle connections are closed, connections beyond the cap get 503, and a never-ending upstream
stream is cut at its cap with an error event, the upstream closed and an audit outcome row."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.faults._gw import chat_body, one_upstream, write_config
from tests.faults.conftest import create_key
from tests.support import GatewayProcess, ServerThread
from tests.support.harness import fetch_rows

HEADER_S = 2.0
BODY_S = 3.0
KEEP_ALIVE_S = 1.0
MAX_CONNECTIONS = 4
STREAM_S = 2.0
MAX_ANSWER = 1024 * 1024
SLACK_S = 1.5  # a loaded test machine may run the gateway's timers this late

_CHUNK = (b'data: {"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": '
          b'[{"index": 0, "delta": {"content": "la "}, "finish_reason": null}]}\n\n')  # fmt: skip


class EndlessUpstream:
    """Answers plain requests at once; a streamed answer never ends (an event every 50 ms, or for
    a prompt saying "trickle" a byte every 50 ms of one endless line) until its client goes away,
    which it records."""

    def __init__(self) -> None:
        self.requests = 0
        self.hung_up = threading.Event()

    async def app(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        raw = b""
        while True:
            message = await receive()
            raw += message.get("body", b"")
            if message["type"] == "http.disconnect" or not message.get("more_body"):
                break
        self.requests += 1
        if not json.loads(raw or b"{}").get("stream") and (b"endless error" in raw or b"trickle error" in raw):
            await self._endless_whole(send, receive, big=b"endless error" in raw, status=400)
            return
        if not json.loads(raw or b"{}").get("stream") and (b"endless body" in raw or b"trickle body" in raw):
            await self._endless_whole(send, receive, big=b"endless body" in raw)
            return
        if not json.loads(raw or b"{}").get("stream"):
            body = json.dumps(
                {
                    "id": "c",
                    "object": "chat.completion",
                    "model": "m",
                    "choices": [
                        {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
                    ],
                }
            ).encode()
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"application/json")]})  # fmt: skip
            await send({"type": "http.response.body", "body": body})
            return
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
        gone, watcher = _watch_for_hang_up(receive)
        # "trickle" in the prompt: one line that never ends, a byte at a time (no read timeout fires).
        trickle = b"trickle" in raw
        try:
            if trickle:
                await send({"type": "http.response.body", "body": b'data: {"x": "', "more_body": True})
            while not gone.is_set():
                await send({"type": "http.response.body", "body": b"a" if trickle else _CHUNK, "more_body": True})
                try:
                    await asyncio.wait_for(gone.wait(), 0.05)
                except TimeoutError:
                    pass
        finally:
            watcher.cancel()
            self.hung_up.set()

    async def _endless_whole(self, send: Any, receive: Any, *, big: bool, status: int = 200) -> None:
        """A whole (not streamed) JSON answer whose body never ends: 64 KB pieces as fast as the
        gateway reads them ("endless body"), or a byte every 50 ms ("trickle body"); with a
        ``status`` of 400 the same as an error answer ("endless error", "trickle error"), whose
        fast pieces stop after 8 MiB without ending the body (a gateway that reads it all must not
        fill the test machine's memory)."""
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json")]})  # fmt: skip
        gone, watcher = _watch_for_hang_up(receive)
        try:
            await send({"type": "http.response.body", "body": b'{"id": "c", "pad": "', "more_body": True})
            sent = 0
            while not gone.is_set():
                if status == 200 or not big or sent < 8 * 1024 * 1024:
                    piece = b"a" * 65536 if big else b"a"
                    await send({"type": "http.response.body", "body": piece, "more_body": True})
                    sent += len(piece)
                try:
                    await asyncio.wait_for(gone.wait(), 0.001 if big else 0.05)
                except TimeoutError:
                    pass
        finally:
            watcher.cancel()
            self.hung_up.set()


def _watch_for_hang_up(receive: Any) -> tuple[asyncio.Event, asyncio.Future[None]]:
    """An event set once the gateway closes the connection, and the task watching for it."""
    gone = asyncio.Event()

    async def watch() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        gone.set()

    return gone, asyncio.ensure_future(watch())


@dataclass
class Env:
    gw: GatewayProcess
    upstream: EndlessUpstream
    key: str
    db_url: str

    @property
    def port(self) -> int:
        return self.gw.port


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    tmp: Path = tmp_path_factory.mktemp("slow")
    db_url = f"sqlite+aiosqlite:///{tmp / 'audit.db'}"
    upstream = EndlessUpstream()
    with ServerThread(upstream.app, lifespan="off") as up:
        ups = [one_upstream(up.url + "/v1", promises_usage=False,
                            timeouts={"read": 10.0, "connect": 2.0, "stream": STREAM_S},
                            max_answer_bytes=MAX_ANSWER)]  # fmt: skip
        server = {"header_timeout_s": HEADER_S, "body_timeout_s": BODY_S, "keep_alive_s": KEEP_ALIVE_S,
                  "max_connections": MAX_CONNECTIONS}  # fmt: skip
        config = write_config(tmp, db_url, ups, server=server)
        key = create_key(db_url, tmp)
        with GatewayProcess(config, log=tmp / "gateway.log") as gw:
            yield Env(gw, upstream, key, db_url)


@dataclass
class Trickled:
    seconds: float  # until the gateway closed the connection
    received: bytes  # everything the gateway sent
    sent: int  # bytes the client managed to send


def _trickle(port: int, data: bytes, *, first: int = 0, every_s: float = 0.25, give_up_s: float = 20.0) -> Trickled:
    """Send ``data[:first]`` at once, then the rest one byte every ``every_s``, until the gateway
    closes the connection."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.settimeout(every_s)
    start = time.monotonic()
    received = b""
    sent = 0
    try:
        if first:
            sock.sendall(data[:first])
            sent = first
        while time.monotonic() - start < give_up_s:
            if sent < len(data):
                try:
                    sock.send(data[sent : sent + 1])
                    sent += 1
                except OSError:
                    break
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                break
            if not chunk:
                break
            received += chunk
    finally:
        sock.close()
    return Trickled(time.monotonic() - start, received, sent)


def _request_head(key: str, length: int) -> bytes:
    return (f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n").encode()  # fmt: skip


def _timed_out(t: Trickled) -> bool:
    head, _, body = t.received.partition(b"\r\n\r\n")
    return head.startswith(b"HTTP/1.1 408") and json.loads(body)["error"]["code"] == "request_timeout"


def _chat(env: Env) -> httpx.Response:
    return httpx.post(f"{env.gw.url}/v1/chat/completions", json=chat_body("What is the boiling point of water?"),
                      headers={"authorization": f"Bearer {env.key}"}, timeout=10)  # fmt: skip


def test_slowloris_headers_cut_off_while_others_are_served(env: Env) -> None:
    """Three clients each trickling a header a byte every 0.25 s are answered 408 and cut off at
    the header deadline, still mid-header; meanwhile a normal client's chat is answered."""
    head = _request_head(env.key, 100) + b"X-Padding: " + b"a" * 400  # never finishes in time
    results: list[Trickled] = []
    threads = [threading.Thread(target=lambda: results.append(_trickle(env.port, head))) for _ in range(3)]
    for t in threads:
        t.start()
    time.sleep(0.5)
    served = [_chat(env).status_code for _ in range(3)]
    for t in threads:
        t.join()
    assert served == [200, 200, 200]
    assert len(results) == 3
    for r in results:
        assert HEADER_S - 0.3 <= r.seconds <= HEADER_S + SLACK_S, r.seconds
        assert r.sent < len(head)  # still sending when cut off: the deadline, not the client, ended it
        assert _timed_out(r), r.received[:200]


def test_slow_body_cut_off_nothing_forwarded(env: Env) -> None:
    """Headers at once, then the body a byte every 0.25 s: 408 at the body deadline, and the
    half-sent prompt never reaches the upstream."""
    body = json.dumps(chat_body("x" * 400)).encode()
    head = _request_head(env.key, len(body))
    before = env.upstream.requests
    r = _trickle(env.port, head + body, first=len(head))
    assert BODY_S - 0.3 <= r.seconds <= BODY_S + SLACK_S, r.seconds
    assert r.sent < len(head) + len(body) and _timed_out(r), r.received[:200]
    assert env.upstream.requests == before


def test_idle_connections_closed(env: Env) -> None:
    """A connection that never sends a byte is closed (silently) at the header deadline; one kept
    alive after an answer is closed after keep_alive_s."""
    silent = _trickle(env.port, b"")
    assert HEADER_S - 0.3 <= silent.seconds <= HEADER_S + SLACK_S and silent.received == b""
    get = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    kept = _trickle(env.port, get, first=len(get))
    assert kept.received.startswith(b"HTTP/1.1 200")
    assert kept.seconds <= KEEP_ALIVE_S + SLACK_S and kept.seconds < HEADER_S


def _get(sock: socket.socket) -> bytes:
    """One GET /healthz on ``sock``: the whole answer (head and body, by its content-length)."""
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    sock.settimeout(5)
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(int(v) for k, _, v in (h.partition(b":") for h in head.split(b"\r\n")[1:])
                  if k.strip().lower() == b"content-length")  # fmt: skip
    while len(body) < length:
        body += sock.recv(65536)
    return head + b"\r\n\r\n" + body


def test_connections_over_the_cap_get_503(env: Env) -> None:
    """With max_connections open, a request on one more connection gets 503 in the OpenAI shape
    with Retry-After; at the cap itself it is served, and once some close, again."""
    time.sleep(0.3)  # connections of earlier tests are gone
    held = [socket.create_connection(("127.0.0.1", env.port)) for _ in range(MAX_CONNECTIONS - 1)]
    try:
        time.sleep(0.2)  # accepted by the server
        with socket.create_connection(("127.0.0.1", env.port)) as at_cap:
            assert _get(at_cap).startswith(b"HTTP/1.1 200")
            held.append(socket.create_connection(("127.0.0.1", env.port)))
            time.sleep(0.2)
            with socket.create_connection(("127.0.0.1", env.port)) as over:
                answer = _get(over)
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 503"), answer[:200]
        assert b"retry-after: 1" in head.lower() and json.loads(body)["error"]["code"] == "server_busy"
    finally:
        for s in held:
            s.close()
    time.sleep(0.3)
    assert _chat(env).status_code == 200


def _outcome(env: Env, request_id: str) -> list[dict[str, Any]]:
    """The request's outcome rows, once written (outcomes are written after the answer)."""
    deadline = time.monotonic() + 5
    rows: list[dict[str, Any]] = []
    while time.monotonic() < deadline and not rows:
        rows = fetch_rows(env.db_url, "SELECT status, http_status, error_class FROM audit_outcomes "
                                      "WHERE request_id = :r", {"r": request_id})  # fmt: skip
        time.sleep(0.1)
    return rows


def test_endless_stream_cut_at_its_cap(env: Env) -> None:
    """A stream the upstream never ends is cut at timeouts.stream: the client's last event is the
    error event (no [DONE]), the upstream's connection is closed, and the outcome row says so."""
    env.upstream.hung_up.clear()
    start = time.monotonic()
    events: list[str] = []
    with httpx.stream("POST", f"{env.gw.url}/v1/chat/completions", json=chat_body("Tell me a story", stream=True),
                      headers={"authorization": f"Bearer {env.key}"}, timeout=30) as r:  # fmt: skip
        assert r.status_code == 200
        request_id = r.headers["x-request-id"]
        for line in r.iter_lines():
            if line.startswith("data: "):
                events.append(line[6:])
            if time.monotonic() - start > STREAM_S + 10:  # uncut: fail below rather than hang here
                break
    took = time.monotonic() - start
    assert STREAM_S - 0.3 <= took <= STREAM_S + SLACK_S, took
    assert len(events) > 5 and "[DONE]" not in events
    last = json.loads(events[-1])
    assert last["error"]["code"] == "stream_max_duration" and last["error"]["type"] == "timeout"
    assert all("error" not in json.loads(e) for e in events[:-1])
    assert env.upstream.hung_up.wait(5)
    assert _outcome(env, request_id) == [
        {"status": "timeout", "http_status": 504, "error_class": "stream_max_duration"}
    ]


def test_stream_trickling_one_endless_line_is_cut_too(env: Env) -> None:
    """An upstream that keeps sending bytes but never ends its line (so no read timeout and no
    complete event ever comes) is cut at the same cap: the client's only event is the error."""
    env.upstream.hung_up.clear()
    start = time.monotonic()
    with httpx.stream("POST", f"{env.gw.url}/v1/chat/completions", json=chat_body("trickle please", stream=True),
                      headers={"authorization": f"Bearer {env.key}"}, timeout=STREAM_S + 10) as r:  # fmt: skip
        events = [line[6:] for line in r.iter_lines() if line.startswith("data: ")]
    took = time.monotonic() - start
    assert STREAM_S - 0.3 <= took <= STREAM_S + SLACK_S, took
    assert [json.loads(e)["error"]["code"] for e in events] == ["stream_max_duration"]
    assert env.upstream.hung_up.wait(5)


def test_endless_whole_answer_refused_at_its_size_cap(env: Env) -> None:
    """A whole answer whose body never ends is refused with 502 (upstream_answer_too_large) once
    it passes max_answer_bytes, long before the stream cap: the gateway's memory is not its to fill.
    The upstream's connection is closed and the outcome row says why."""
    env.upstream.hung_up.clear()
    start = time.monotonic()
    r = httpx.post(f"{env.gw.url}/v1/chat/completions", json=chat_body("an endless body please"),
                   headers={"authorization": f"Bearer {env.key}"}, timeout=STREAM_S + 10)  # fmt: skip
    assert time.monotonic() - start < STREAM_S  # the size, not the clock, ended it
    assert r.status_code == 502
    assert r.json()["error"]["code"] == "upstream_answer_too_large" and r.json()["error"]["type"] == "upstream_error"
    assert env.upstream.hung_up.wait(5)
    assert _outcome(env, r.headers["x-request-id"]) == [
        {"status": "upstream_error", "http_status": 502, "error_class": "upstream_answer_too_large"}
    ]
    assert _chat(env).status_code == 200  # and the next request is served


def test_trickling_whole_answer_cut_at_the_answer_deadline(env: Env) -> None:
    """A whole answer that trickles a byte every 50 ms (no read timeout ever fires, the size cap is
    far) is cut at timeouts.stream from its head: 504, the upstream closed, a timeout outcome."""
    env.upstream.hung_up.clear()
    start = time.monotonic()
    r = httpx.post(f"{env.gw.url}/v1/chat/completions", json=chat_body("a trickle body please"),
                   headers={"authorization": f"Bearer {env.key}"}, timeout=STREAM_S + 10)  # fmt: skip
    took = time.monotonic() - start
    assert STREAM_S - 0.3 <= took <= STREAM_S + SLACK_S, took
    assert r.status_code == 504 and r.json()["error"]["code"] == "upstream_timeout"
    assert env.upstream.hung_up.wait(5)
    assert _outcome(env, r.headers["x-request-id"]) == [
        {"status": "timeout", "http_status": 504, "error_class": "upstream_timeout"}
    ]


@pytest.mark.parametrize("kind", ["endless", "trickle"])
def test_endless_error_answer_read_within_bounds(env: Env, kind: str) -> None:
    """A 4xx answer whose body never ends (fast, or a byte every 50 ms) is no reason to hold the
    request or fill memory: only its short code is wanted, so the gateway reads a bounded prefix
    within the answer deadline, answers 400 and closes the upstream's connection."""
    env.upstream.hung_up.clear()
    start = time.monotonic()
    r = httpx.post(f"{env.gw.url}/v1/chat/completions", json=chat_body(f"a {kind} error please"),
                   headers={"authorization": f"Bearer {env.key}"}, timeout=STREAM_S + 20)  # fmt: skip
    assert time.monotonic() - start <= STREAM_S + SLACK_S
    assert r.status_code == 400 and r.json()["error"]["code"] == "upstream_rejected"
    assert env.upstream.hung_up.wait(5)
    assert _chat(env).status_code == 200


def test_answered_request_trickling_its_body_gets_no_second_answer(env: Env) -> None:
    """A body declared too large is refused (413) at once; a client that then trickles the rest
    is disconnected at the body deadline without a second, unasked-for 408 on the connection."""
    head = _request_head(env.key, 9 * 1024 * 1024)  # above max_body_bytes (8 MiB)
    r = _trickle(env.port, head + b"x" * 1000, first=len(head))
    assert BODY_S - 0.3 <= r.seconds <= BODY_S + SLACK_S, r.seconds
    assert r.received.startswith(b"HTTP/1.1 413") and r.received.count(b"HTTP/1.1 ") == 1, r.received[:300]


def test_slowloris_on_a_kept_alive_connection(env: Env) -> None:
    """After one answered request, the next one's headers trickled on the same connection get
    their own deadline, counted from their first byte, and a 408 as the second answer."""
    get = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    slow = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: " + b"a" * 400
    r = _trickle(env.port, get + slow, first=len(get))
    assert HEADER_S - 0.3 <= r.seconds <= HEADER_S + SLACK_S, r.seconds
    answers = r.received.split(b"HTTP/1.1 ")[1:]
    assert [a[:3] for a in answers] == [b"200", b"408"], r.received[:300]
