"""The lean request-path client (``gateway/http1.py``) against real sockets on 127.0.0.1: a
scripted server writes answers byte for byte, cut into arbitrary pieces, so that framing,
keep-alive, timeouts, the pool's limit and TLS are checked on the wire, not on a mock."""

from __future__ import annotations

import asyncio
import gzip
import socket
import ssl
import threading
import time
import zlib
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any

import httptools
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway import http1
from tests.support.tls import make_tls

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter, int], Awaitable[None]]


async def _read_request(reader: asyncio.StreamReader) -> tuple[bytes, bytes] | None:
    """One request's head and body (by its content-length), or None at the end of the stream."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    length = next(
        int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")
    )
    return head, await reader.readexactly(length)


class Server:
    """A loopback server running ``handler`` per connection; counts connections."""

    def __init__(self, handler: Handler, tls: ssl.SSLContext | None = None) -> None:
        self.handler = handler
        self.tls = tls
        self.connections = 0
        self.port = 0
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> Server:
        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.connections += 1
            try:
                await self.handler(reader, writer, self.connections)
            except (ConnectionError, asyncio.IncompleteReadError):
                pass
            finally:
                writer.close()

        self._server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=self.tls)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()

    def target(self, path: str = "/v1/chat/completions", scheme: str = "http") -> http1.Target:
        return http1.Target.of(f"{scheme}://127.0.0.1:{self.port}{path}")


async def _post(pool: http1.Pool, target: http1.Target, body: bytes = b"{}",
                headers: dict[str, str] | None = None) -> tuple[int, bytes]:  # fmt: skip
    head = http1.request_head(target, headers or {"content-type": "application/json"}, len(body))
    response = await pool.post(target, head, body)
    try:
        return response.status, await response.read()
    finally:
        response.release()


def _run(coro: Coroutine[Any, Any, Any]) -> Any:
    return asyncio.run(coro)


def _serve_answers(*answers: bytes, hold_s: float = 0.0) -> Handler:
    """Answer each request, on whichever connection it comes, with the next raw bytes of
    ``answers`` (then hold the connection)."""
    left = list(answers)

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, _: int) -> None:
        while left:
            if await _read_request(reader) is None:
                return
            writer.write(left.pop(0))
            await writer.drain()
        await asyncio.sleep(hold_s)

    return handler


async def _with_pool(handler: Handler, work: Callable[[http1.Pool, http1.Target], Awaitable[Any]],
                     **pool: Any) -> tuple[Any, int]:  # fmt: skip
    async with Server(handler) as server:
        p = http1.Pool(**{"read_s": 5, **pool})
        try:
            return await work(p, server.target()), server.connections
        finally:
            await p.close()


async def _outcome(pool: http1.Pool, target: http1.Target) -> tuple[int, bytes] | http1.TransportError:
    """One request's (status, body), or the TransportError it ended in."""
    try:
        return await _post(pool, target)
    except http1.TransportError as exc:
        return exc


# ---- framing: what the client reads is the body the server framed, however it is cut ---------


def _framed(body: bytes, framing: str, chunk_sizes: list[int]) -> bytes:
    if framing == "length":
        return b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n" % len(body) + body
    if framing == "gzip":
        packed = gzip.compress(body)
        return b"HTTP/1.1 200 OK\r\ncontent-encoding: gzip\r\ncontent-length: %d\r\n\r\n" % len(packed) + packed
    if framing == "deflate":
        packed = zlib.compress(body)
        return b"HTTP/1.1 200 OK\r\ncontent-encoding: deflate\r\ncontent-length: %d\r\n\r\n" % len(packed) + packed
    out = [b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"]
    rest, sizes = body, iter(chunk_sizes or [7])
    while rest:
        n = max(1, next(sizes, 7))
        out.append(b"%x\r\n" % len(rest[:n]) + rest[:n] + b"\r\n")
        rest = rest[n:]
    out.append(b"0\r\n\r\n")
    return b"".join(out)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    bodies=st.lists(st.binary(max_size=3000), min_size=1, max_size=4),
    framing=st.sampled_from(["length", "chunked", "gzip", "deflate"]),
    chunk_sizes=st.lists(st.integers(1, 400), max_size=8),
    cuts=st.lists(st.integers(1, 500), min_size=1, max_size=10),
)
def test_every_answer_is_read_whole_whatever_the_framing_and_the_pieces_it_arrives_in(
    bodies: list[bytes], framing: str, chunk_sizes: list[int], cuts: list[int]
) -> None:
    """A property: several answers on one keep-alive connection, each written in arbitrary
    pieces, come back byte for byte, and the connection is reused for all of them."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, _: int) -> None:
        for body in bodies:
            if await _read_request(reader) is None:
                return
            wire = _framed(body, framing, chunk_sizes)
            pieces = iter(cuts * (len(wire) // max(1, min(cuts)) + 1))
            while wire:
                n = next(pieces)
                writer.write(wire[:n])
                await writer.drain()
                await asyncio.sleep(0)
                wire = wire[n:]

    async def main() -> None:
        async with Server(handler) as server:
            pool = http1.Pool(read_s=5)
            try:
                for body in bodies:
                    assert await _post(pool, server.target()) == (200, body)
            finally:
                await pool.close()
            assert server.connections == 1

    _run(main())


def test_a_body_that_ends_with_the_connection_is_read_whole_and_the_connection_not_reused() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, _: int) -> None:
        await _read_request(reader)
        writer.write(b'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n{"a": ')
        await writer.drain()
        writer.write(b"1}")
        await writer.drain()

    async def main() -> None:
        async with Server(handler) as server:
            pool = http1.Pool(read_s=5)
            try:
                assert await _post(pool, server.target()) == (200, b'{"a": 1}')
                assert await _post(pool, server.target()) == (200, b'{"a": 1}')
            finally:
                await pool.close()
            assert server.connections == 2

    _run(main())


def test_an_interim_answer_is_skipped() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, _: int) -> None:
        await _read_request(reader)
        writer.write(
            b"HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\nHTTP/1.1 201 Created\r\ncontent-length: 2\r\n\r\nok"
        )

    async def main() -> tuple[int, bytes]:
        async with Server(handler) as server:
            pool = http1.Pool(read_s=5)
            try:
                return await _post(pool, server.target())
            finally:
                await pool.close()

    assert _run(main()) == (201, b"ok")


# ---- the request as sent ----------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    headers=st.dictionaries(
        st.from_regex(r"[a-z][a-z0-9-]{0,20}", fullmatch=True).filter(lambda n: n not in http1._FRAMING),
        st.text(st.characters(codec="latin-1", exclude_categories=["Cc"]), max_size=40).map(str.strip),
        max_size=6,
    ),
    body=st.binary(max_size=200),
    bad=st.sampled_from(["\r", "\n", "\0", "\x7f", "\x1b", "\r\nx-injected: 1"]),
    where=st.sampled_from(["name", "value"]),
)
def test_the_request_head_carries_every_header_and_refuses_a_framing_character(
    headers: dict[str, str], body: bytes, bad: str, where: str
) -> None:
    """A property: a server's parser reads back exactly the headers, host and length given; a
    control character (CR, LF, NUL, DEL, ESC …) anywhere in a name or value is refused before
    anything is sent."""
    target = http1.Target.of("https://api.example.net:8443/v1/chat/completions?x=1")
    seen: dict[str, Any] = {"headers": []}

    class Sink:
        def on_url(self, url: bytes) -> None:
            seen["url"] = url

        def on_header(self, name: bytes, value: bytes) -> None:
            seen["headers"].append((name.decode("latin-1").lower(), value.decode("latin-1")))

        def on_body(self, data: bytes) -> None:
            seen["body"] = seen.get("body", b"") + data

    parser = httptools.HttpRequestParser(Sink())
    parser.feed_data(http1.request_head(target, headers, len(body)) + body)
    assert parser.get_method() == b"POST"
    assert seen["url"] == b"/v1/chat/completions?x=1"
    assert seen["headers"] == [("host", "api.example.net:8443"), ("content-length", str(len(body))),
                               *[(k, v) for k, v in headers.items()]]  # fmt: skip
    assert seen.get("body", b"") == body
    poisoned = dict(headers)
    if where == "name":
        poisoned["x-a" + bad] = "v"
    else:
        poisoned["x-a"] = "v" + bad
    with pytest.raises(ValueError):
        http1.request_head(target, poisoned, 0)


@pytest.mark.parametrize(("url", "host", "target"), [
    ("http://127.0.0.1:8000/v1/x", "127.0.0.1:8000", "/v1/x"),
    ("https://api.example.com/v1", "api.example.com", "/v1"),
    ("http://api.example.com:80", "api.example.com", "/"),
    ("https://[::1]:9443/a?b=c", "[::1]:9443", "/a?b=c"),
])  # fmt: skip
def test_host_header_and_request_target(url: str, host: str, target: str) -> None:
    t = http1.Target.of(url)
    assert (t.host_header, t.request_target) == (host, target)


def test_a_url_that_is_not_http_is_refused() -> None:
    with pytest.raises(ValueError):
        http1.Target.of("ftp://example.com/x")


# ---- connections: reuse, leftovers, failures ------------------------------------------------


def test_an_answer_not_read_to_its_end_closes_its_connection() -> None:
    """The unread rest of one answer must never be read as the start of the next one (here the
    rest is crafted to look like an answer of its own)."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        while await _read_request(reader) is not None:
            if n == 1:  # the first piece now, the rest after the client has left
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 20\r\n\r\nAAAAAAAAAA")
                await writer.drain()
                await asyncio.sleep(0.3)
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nevil")
            else:
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 6\r\n\r\nsecond")
            await writer.drain()

    async def main() -> tuple[bytes, int]:
        async with Server(handler) as server:
            pool = http1.Pool(read_s=5)
            try:
                target = server.target()
                response = await pool.post(target, http1.request_head(target, {}, 2), b"{}")
                async for _ in response.iter_chunks():
                    break  # the client went away after the first piece
                response.release()
                status, body = await _post(pool, target)
            finally:
                await pool.close()
            return body, server.connections

    assert _run(main()) == (b"second", 2)


def test_an_idle_connection_the_server_closed_is_not_used_again() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, _: int) -> None:
        await _read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
        await writer.drain()  # then the handler returns: the server closes the kept-alive connection

    async def main() -> list[tuple[int, bytes]]:
        async with Server(handler) as server:
            pool = http1.Pool(read_s=5)
            try:
                first = await _post(pool, server.target())
                await asyncio.sleep(0.05)  # the FIN arrives while the connection is idle
                return [first, await _post(pool, server.target())]
            finally:
                await pool.close()

    assert _run(main()) == [(200, b"ok"), (200, b"ok")]


def test_bytes_on_an_idle_connection_retire_it() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        while await _read_request(reader) is not None:
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok" + (b"HTTP/1.1 200 OK\r\n" if n == 1 else b"")
            )
            await writer.drain()

    async def main() -> tuple[list[tuple[int, bytes]], int]:
        async with Server(handler) as server:
            pool = http1.Pool(read_s=5)
            try:
                answers = [await _post(pool, server.target())]
                await asyncio.sleep(0.05)
                answers.append(await _post(pool, server.target()))
            finally:
                await pool.close()
            return answers, server.connections

    assert _run(main()) == ([(200, b"ok"), (200, b"ok")], 2)


def test_a_refused_connection_is_connect_failed() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    async def main() -> None:
        pool = http1.Pool()
        try:
            with pytest.raises(http1.ConnectFailed):
                await _post(pool, http1.Target.of(f"http://127.0.0.1:{port}/v1"))
        finally:
            await pool.close()

    _run(main())


@pytest.mark.parametrize("cut", [b"HTTP/1.1 200 OK\r\ncontent-le", b"HTTP/1.1 200 OK\r\ncontent-length: 9\r\n\r\n{\"a\"",
                                 b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n4\r\n{\"a\"\r\n"])  # fmt: skip
def test_a_connection_cut_mid_answer_is_a_transport_error(cut: bytes) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, _: int) -> None:
        await _read_request(reader)
        writer.write(cut)
        await writer.drain()
        writer.transport.abort()

    assert isinstance(_run(_with_pool(handler, _outcome))[0], http1.TransportError)


@pytest.mark.parametrize("answer", [
    b"HTTP/1.1 200 OK\r\ncontent-encoding: br\r\ncontent-length: 2\r\n\r\nok",
    b"HTTP/1.1 200 OK\r\ncontent-encoding: gzip\r\ncontent-length: 2\r\n\r\nok",
    b"HTTP/1.1 200 OK\r\n" + b"x-pad: " + b"p" * (http1.MAX_HEAD_BYTES + 10) + b"\r\n\r\n",
    b"SSH-2.0-OpenSSH_9.6\r\n",
])  # fmt: skip
def test_an_answer_that_cannot_be_read_is_a_transport_error(answer: bytes) -> None:
    """Unsupported or corrupt compression, an endless head, not HTTP at all."""
    handler = _serve_answers(answer, hold_s=1)
    assert isinstance(_run(_with_pool(handler, _outcome))[0], http1.TransportError)


# ---- time ------------------------------------------------------------------------------------


def test_a_stalled_answer_times_out_but_a_slow_steady_one_does_not() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, n: int) -> None:
        await _read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
        for _ in range(6):  # 0.6 s in all, never 0.3 s without a byte
            writer.write(b"1\r\nx\r\n")
            await writer.drain()
            await asyncio.sleep(0.1)
        if n == 2:
            await asyncio.sleep(1.0)
        writer.write(b"0\r\n\r\n")
        await writer.drain()

    async def main() -> None:
        async with Server(handler) as server:
            pool = http1.Pool(read_s=0.3)
            try:
                assert await _post(pool, server.target()) == (200, b"xxxxxx")
                pool2 = http1.Pool(read_s=0.3)
                try:
                    with pytest.raises(http1.ReadTimeout):
                        await _post(pool2, server.target())
                finally:
                    await pool2.close()
            finally:
                await pool.close()

    _run(main())


def test_a_consumer_slower_than_the_read_timeout_is_not_a_timeout() -> None:
    """Bytes already here are not a stall: the timeout counts only while a reader waits."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, _: int) -> None:
        await _read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 6\r\n\r\nabc")
        await writer.drain()
        await asyncio.sleep(0.05)
        writer.write(b"def")
        await writer.drain()

    async def main() -> bytes:
        async with Server(handler) as server:
            pool = http1.Pool(read_s=0.2)
            try:
                target = server.target()
                response = await pool.post(target, http1.request_head(target, {}, 2), b"{}")
                await asyncio.sleep(0.5)  # the consumer is busy elsewhere
                return await response.read()
            finally:
                await pool.close()

    assert _run(main()) == b"abcdef"


def test_the_pool_limit_queues_and_then_gives_up_as_connect_failed() -> None:
    release = asyncio.Event

    async def main() -> None:
        gate = release()

        async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, _: int) -> None:
            while await _read_request(reader) is not None:
                await gate.wait()
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
                await writer.drain()

        async with Server(handler) as server:
            pool = http1.Pool(limit=1, pool_s=0.2, read_s=5)
            try:
                first = asyncio.create_task(_post(pool, server.target()))
                await asyncio.sleep(0.05)
                with pytest.raises(http1.ConnectFailed) as failed:
                    await _post(pool, server.target())
                assert failed.value.reason == "PoolTimeout"
                second = asyncio.create_task(_post(pool, server.target()))  # waits for the slot
                await asyncio.sleep(0.05)
                gate.set()
                assert await first == (200, b"ok")
                assert await second == (200, b"ok")
            finally:
                await pool.close()
            assert server.connections == 1

    _run(main())


# ---- TLS ---------------------------------------------------------------------------------------


def test_tls_to_a_trusted_server_and_refusal_of_an_untrusted_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default context verifies the server (here against a CA made in the test, trusted
    through SSL_CERT_FILE as an operator would); an unknown CA means nothing is sent."""
    tls = make_tls(tmp_path / "tls")
    bodies: list[bytes] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, _: int) -> None:
        while (request := await _read_request(reader)) is not None:
            bodies.append(request[1])
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
            await writer.drain()

    async def main(trusted: bool) -> Any:
        async with Server(handler, tls=tls.server_context()) as server:
            pool = http1.Pool(read_s=5)
            try:
                return await _post(pool, server.target(scheme="https"), body=b"secret-prompt")
            except http1.ConnectFailed as exc:
                return exc
            finally:
                await pool.close()

    monkeypatch.setenv("SSL_CERT_FILE", str(tls.ca_file))
    assert _run(main(True)) == (200, b"ok")
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "nothing.pem"))
    refused = _run(main(False))
    assert isinstance(refused, http1.ConnectFailed)
    assert bodies == [b"secret-prompt"]


def test_the_head_has_a_deadline_of_its_own_that_trickled_bytes_do_not_move() -> None:
    """An upstream that keeps sending interim answers never stalls a read for ``read_s``, yet
    the wait for the real head ends at ``head_s``."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, _: int) -> None:
        await _read_request(reader)
        for _ in range(40):
            writer.write(b"HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n")
            await writer.drain()
            await asyncio.sleep(0.05)

    async def main() -> float:
        async with Server(handler) as server:
            pool = http1.Pool(read_s=1.0)
            loop = asyncio.get_running_loop()
            started = loop.time()
            try:
                target = server.target()
                with pytest.raises(http1.ReadTimeout):
                    await pool.post(target, http1.request_head(target, {}, 2), b"{}", head_s=0.4)
                return loop.time() - started
            finally:
                await pool.close()

    assert 0.35 <= _run(main()) < 1.0


# ---- found by an adversarial review: each of these failed before its fix ------------------------


def test_a_second_answer_in_the_same_read_is_neither_appended_nor_read_next() -> None:
    first = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"
    smuggled = b'HTTP/1.1 200 OK\r\ncontent-length: 18\r\n\r\n{"other":"tenant"}'
    handler = _serve_answers(first + smuggled, b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nnext")

    async def work(pool: http1.Pool, target: http1.Target) -> list[tuple[int, bytes]]:
        return [await _post(pool, target), await _post(pool, target)]

    answers, connections = _run(_with_pool(handler, work))
    assert answers == [(200, b"ok"), (200, b"next")]
    assert connections == 2  # the connection that carried the extra answer was retired


def test_bytes_after_a_complete_answer_do_not_fail_it() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, _: int) -> None:
        await _read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
        await writer.drain()
        await asyncio.sleep(0.05)
        writer.write(b"\r\n")  # stray bytes while the consumer still holds the answer
        await writer.drain()
        await asyncio.sleep(0.5)

    async def work(pool: http1.Pool, target: http1.Target) -> bytes:
        response = await pool.post(target, http1.request_head(target, {}, 2), b"{}")
        await asyncio.sleep(0.2)
        try:
            return await response.read()
        finally:
            response.release()

    assert _run(_with_pool(handler, work))[0] == b"ok"


def test_an_answer_released_unread_while_reading_was_paused_leaves_a_working_connection() -> None:
    """A 503 of 1 MB (past the read-ahead mark) released unread, as the client does for a 5xx:
    the next request on that connection still gets its answer."""
    big = b"x" * (1024 * 1024)
    handler = _serve_answers(b"HTTP/1.1 503 Busy\r\ncontent-length: %d\r\n\r\n" % len(big) + big,
                             b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")  # fmt: skip

    async def work(pool: http1.Pool, target: http1.Target) -> tuple[int, bytes]:
        response = await pool.post(target, http1.request_head(target, {}, 2), b"{}")
        await asyncio.sleep(0.2)
        response.release()
        return await _post(pool, target)

    assert _run(_with_pool(handler, work, read_s=1.0))[0] == (200, b"ok")


def test_a_waiter_cancelled_as_its_slot_is_granted_passes_it_on() -> None:
    handler = _serve_answers(*[b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"] * 3)

    async def work(pool: http1.Pool, target: http1.Target) -> Any:
        held = await pool.post(target, http1.request_head(target, {}, 2), b"{}")
        await held.read()
        second = asyncio.create_task(_post(pool, target))
        await asyncio.sleep(0.02)
        third = asyncio.create_task(_post(pool, target))
        await asyncio.sleep(0.02)
        held.release()  # the slot goes to the second ...
        second.cancel()  # ... whose client leaves in the same step
        return (await asyncio.gather(third, return_exceptions=True))[0]

    assert _run(_with_pool(handler, work, limit=1, pool_s=1.0))[0] == (200, b"ok")


def test_a_header_that_never_ends_is_cut_at_the_head_bound() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, _: int) -> None:
        await _read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nx-endless: ")
        for _ in range(200):  # 12.8 MB of one header value, if nobody stops reading
            writer.write(b"v" * 65536)
            await writer.drain()

    async def work(pool: http1.Pool, target: http1.Target) -> BaseException | None:
        try:
            await _post(pool, target)
        except http1.TransportError as exc:
            return exc
        return None

    failed = _run(_with_pool(handler, work))[0]
    assert isinstance(failed, http1.TransportError) and "too large" in str(failed)


def test_a_compressed_answer_is_inflated_a_bounded_step_at_a_time() -> None:
    """A 64 MB run of zeros sent as 64 KB of gzip: no read returns more than one step, and the
    whole comes back."""
    size = 64 * 1024 * 1024
    packed = gzip.compress(b"\0" * size)
    handler = _serve_answers(b"HTTP/1.1 200 OK\r\ncontent-encoding: gzip\r\ncontent-length: %d\r\n\r\n" % len(packed)
                             + packed)  # fmt: skip

    async def work(pool: http1.Pool, target: http1.Target) -> tuple[int, int]:
        response = await pool.post(target, http1.request_head(target, {}, 2), b"{}")
        largest = total = 0
        async for chunk in response.iter_chunks():
            largest, total = max(largest, len(chunk)), total + len(chunk)
        response.release()
        return largest, total

    largest, total = _run(_with_pool(handler, work))[0]
    assert total == size and largest <= http1._INFLATE_STEP


@pytest.mark.parametrize(("coding", "packed", "whole"), [
    (b"deflate", zlib.compress(b"raw deflate body")[2:-4], True),  # raw, no zlib header: as servers send it
    (b"gzip", gzip.compress(b"a body cut short" * 100)[:-30], False),  # ended before its stream did
])  # fmt: skip
def test_raw_deflate_is_read_and_a_truncated_gzip_is_not_taken_as_whole(
    coding: bytes, packed: bytes, whole: bool
) -> None:
    handler = _serve_answers(b"HTTP/1.1 200 OK\r\ncontent-encoding: %s\r\ncontent-length: %d\r\n\r\n" % (coding, len(packed))
                             + packed)  # fmt: skip

    result = _run(_with_pool(handler, _outcome))[0]
    if whole:
        assert result == (200, b"raw deflate body")
    else:
        assert isinstance(result, http1.TransportError)


def test_a_reset_does_not_end_a_body_framed_by_the_connection_close() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, _: int) -> None:
        await _read_request(reader)
        writer.write(b'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n{"partial": ')
        await writer.drain()
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # RST on close
        writer.transport.abort()

    assert isinstance(_run(_with_pool(handler, _outcome))[0], http1.TransportError)


def test_a_released_answer_can_never_reach_the_connections_next_request() -> None:
    handler = _serve_answers(b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nA",
                             b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nB")  # fmt: skip

    async def work(pool: http1.Pool, target: http1.Target) -> tuple[bool, bytes]:
        a = await pool.post(target, http1.request_head(target, {}, 2), b"{}")
        assert await a.read() == b"A"
        a.release()
        b = await pool.post(target, http1.request_head(target, {}, 2), b"{}")  # the same connection
        a.close()  # a second close of the old answer: must not touch the new request
        try:
            await a.read()
            stale_refused = False
        except http1.TransportError:
            stale_refused = True
        return stale_refused, await b.read()

    (stale_refused, second), connections = _run(_with_pool(handler, work))
    assert stale_refused and second == b"B" and connections == 1


def test_closing_an_answer_ends_a_reader_at_once_even_with_request_bytes_unsent() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, _: int) -> None:
        await reader.readuntil(b"\r\n\r\n")  # the head only: the 32 MB body is never read
        writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n")
        await writer.drain()
        await asyncio.sleep(5)

    async def work(pool: http1.Pool, target: http1.Target) -> Any:
        body = b"x" * (32 * 1024 * 1024)
        response = await pool.post(target, http1.request_head(target, {}, len(body)), body)
        reader = asyncio.create_task(response.read())
        await asyncio.sleep(0.1)
        response.close()
        try:
            return await asyncio.wait_for(reader, 2)
        except http1.TransportError as exc:
            return exc

    assert isinstance(_run(_with_pool(handler, work, read_s=60))[0], http1.TransportError)


@pytest.mark.parametrize("name", ["Content-Length", "transfer-encoding", "Host", "connection", "x a", "x:y", "é"])
def test_a_caller_cannot_set_framing_headers_or_names_that_are_not_tokens(name: str) -> None:
    with pytest.raises(ValueError):
        http1.request_head(http1.Target.of("http://127.0.0.1:1/v1"), {name: "1"}, 0)


# ---- found by a second adversarial review: each of these failed before its fix ------------------


def test_bytes_that_reach_an_idle_connection_before_its_reuse_retire_it() -> None:
    """An answer's extra bytes that arrive while the loop is busy (not yet read) must not be
    read as the next request's answer: an idle connection with readable bytes is not reused.
    (The server is a thread: it must write while the client's loop is blocked.)"""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    connections: list[int] = []

    def serve() -> None:
        for n in range(2):
            conn, _ = listener.accept()
            connections.append(n)
            with conn, conn.makefile("rb") as f:
                while f.readline() not in (b"\r\n", b""):
                    pass
                f.read(2)
                if n == 0:
                    conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
                    time.sleep(0.05)
                    conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 6\r\n\r\nLEAKED")
                    time.sleep(1.0)
                else:
                    conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nreal")
                    time.sleep(0.2)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()

    async def main() -> tuple[int, bytes]:
        pool = http1.Pool(read_s=5)
        target = http1.Target.of(f"http://127.0.0.1:{port}/v1")
        try:
            response = await pool.post(target, http1.request_head(target, {}, 2), b"{}")
            assert await response.read() == b"ok"
            time.sleep(0.3)  # noqa: ASYNC251 -- the loop must be blocked: the extra bytes sit unread in the socket
            response.release()
            return await _post(pool, target)
        finally:
            await pool.close()

    try:
        assert _run(main()) == (200, b"real")
        assert connections == [0, 1]
    finally:
        listener.close()


def test_a_head_deadline_passed_before_sending_keeps_the_connection_for_the_next() -> None:
    handler = _serve_answers(*[b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"] * 2)

    async def work(pool: http1.Pool, target: http1.Target) -> tuple[int, bytes]:
        head = http1.request_head(target, {}, 2)
        assert await _post(pool, target) == (200, b"ok")
        with pytest.raises(http1.ConnectFailed):
            await pool.post(target, head, b"{}", head_s=0.0)  # past its deadline once a connection is had
        return await _post(pool, target)  # the one slot is still there

    assert _run(_with_pool(handler, work, limit=1, pool_s=0.3)) == ((200, b"ok"), 1)


def test_an_iterator_resumed_after_release_reads_nothing_of_the_next_answer() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, _: int) -> None:
        first = True
        while await _read_request(reader) is not None:
            if first:
                writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1\r\nA\r\n")
                await writer.drain()
                await asyncio.sleep(0.05)
                writer.write(b"0\r\n\r\n")
                first = False
            else:
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 6\r\n\r\nSECRET")
            await writer.drain()

    async def work(pool: http1.Pool, target: http1.Target) -> tuple[bool, bytes]:
        a = await pool.post(target, http1.request_head(target, {}, 2), b"{}")
        chunks = a.iter_chunks()
        assert await chunks.__anext__() == b"A"
        await asyncio.sleep(0.1)  # the answer completes meanwhile
        a.release()
        b = await pool.post(target, http1.request_head(target, {}, 2), b"{}")
        try:
            await chunks.__anext__()
            refused = False
        except (http1.TransportError, StopAsyncIteration):
            refused = True
        return refused, await b.read()

    assert _run(_with_pool(handler, work))[0] == (True, b"SECRET")


@pytest.mark.parametrize("answer", [
    b"HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 2\r\n\r\nokJUNK",
    b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok\r\nJUNK",
])  # fmt: skip
def test_junk_in_the_same_read_after_a_whole_answer_leaves_the_answer_whole(answer: bytes) -> None:
    handler = _serve_answers(answer, hold_s=0.3)

    assert _run(_with_pool(handler, _post))[0] == (200, b"ok")


@pytest.mark.parametrize(("coding", "packed", "expected"), [
    (b"deflate", zlib.compress(b"raw deflate, one byte first")[2:-4], b"raw deflate, one byte first"),
    (b"gzip", b"", b""),  # an empty body labelled gzip, as 204s and error answers come
    (b"gzip", gzip.compress(b"part one, ") + gzip.compress(b"part two"), None),  # never cut silently
])  # fmt: skip
def test_compressed_edges(coding: bytes, packed: bytes, expected: bytes | None) -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, _: int) -> None:
        await _read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-encoding: %s\r\ncontent-length: %d\r\n\r\n" % (coding, len(packed)))
        for i in range(len(packed)):  # a byte at a time: the first piece is one byte
            writer.write(packed[i : i + 1])
            await writer.drain()
            await asyncio.sleep(0)
        await asyncio.sleep(0.2)

    result = _run(_with_pool(handler, _outcome))[0]
    if expected is None:
        assert isinstance(result, http1.TransportError)
    else:
        assert result == (200, expected)


@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_a_clean_idle_connection_is_reused_on_either_loop(loop: str) -> None:
    """The reuse check reads the socket through the transport: on uvloop (the server's loop)
    too, a clean idle connection is reused rather than retired every time."""
    import uvloop

    handler = _serve_answers(*[b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"] * 20)

    async def work(pool: http1.Pool, target: http1.Target) -> list[tuple[int, bytes]]:
        return [await _post(pool, target) for _ in range(20)]

    run = uvloop.run if loop == "uvloop" else asyncio.run
    answers, connections = run(_with_pool(handler, work))
    assert answers == [(200, b"ok")] * 20 and connections == 1


def test_an_idle_connection_is_dropped_after_its_keep_alive_time() -> None:
    """Dropped by the client before an upstream's own idle timeout can race a reuse."""
    handler = _serve_answers(*[b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"] * 3, hold_s=2)

    async def work(pool: http1.Pool, target: http1.Target) -> list[tuple[int, bytes]]:
        answers = [await _post(pool, target), await _post(pool, target)]  # reused: well within the time
        await asyncio.sleep(0.3)
        return [*answers, await _post(pool, target)]

    answers, connections = _run(_with_pool(handler, work, keepalive_s=0.15))
    assert answers == [(200, b"ok")] * 3 and connections == 2


def test_the_upstream_client_keeps_idle_connections_less_long_than_common_servers() -> None:
    from gateway import upstream

    assert 0 < upstream._IDLE_S < 5  # uvicorn's and Node's default idle timeout
