"""A lean HTTP/1.1 client for the request path: pooled keep-alive connections, each request
written at once, the answer parsed by httptools (the parser uvicorn already uses for the server
side).

Why not aiohttp for these calls: against the same local upstream, an aiohttp ``post`` + ``read``
+ ``release`` cost ≈ 260 µs of CPU and this ≈ 50 µs (``bench/RESULTS.md``, issue 15), and the
gateway's whole budget per 1 KB request is well under a millisecond. What is left out on purpose:
proxies (``gateway.upstream`` sends a URL that an egress proxy applies to through aiohttp), redirects
(never followed anyway), cookies (never kept), HTTP/2, and compression other than gzip and deflate
(none is asked for; an upstream that compresses anyway with something else is a transport error).

Failures come out as three kinds, because the caller's decision turns on them: :class:`ConnectFailed`
(no connection was handed out: the upstream cannot have seen the request), :class:`ReadTimeout`
(no byte for ``read_s`` while a reader waited), and :class:`TransportError` (anything else: the
connection broke or the answer could not be read, after the request may have been seen).
"""

from __future__ import annotations

import asyncio
import re
import select
import ssl
import zlib
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass
from urllib.parse import urlsplit

import httptools

__all__ = ["ConnectFailed", "Pool", "ReadTimeout", "Response", "Target", "TransportError"]


class ConnectFailed(ConnectionError):
    """No connection was handed out (refused, unreachable, timed out, or the pool stayed full):
    nothing was sent."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class TransportError(ConnectionError):
    """The connection failed, or the answer was not readable HTTP, after the request may have
    been sent."""


class ReadTimeout(TimeoutError):
    """No byte arrived for ``read_s`` while a reader waited for one."""


# Bounds on what an upstream can make us hold: the answer's head (and any run of bytes the parser
# takes in without a callback: a header or trailer that never ends), body bytes read ahead of a
# consumer that is slower than the upstream (reading pauses past the high mark), and what one read
# of a compressed body may inflate to.
MAX_HEAD_BYTES = 64 * 1024
_HIGH_WATER = 256 * 1024
_LOW_WATER = 64 * 1024
_INFLATE_STEP = 256 * 1024
_UNSAFE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")  # control characters but TAB: CR, LF, NUL among them
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
# Headers that frame the request or the connection: the client writes its own, a caller's never.
_FRAMING = frozenset({"host", "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "te",
                      "trailer", "proxy-connection", "expect"})  # fmt: skip


@dataclass(frozen=True, slots=True)
class Target:
    """Where a URL's requests go, parsed once per URL."""

    key: tuple[str, str, int]  # scheme, host, port: the pool's key
    host: str
    port: int
    tls: bool
    request_target: str  # path and query, as sent on the request line
    host_header: str

    @classmethod
    def of(cls, url: str) -> Target:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {parts.scheme}://…")
        tls = parts.scheme == "https"
        port = parts.port or (443 if tls else 80)
        host = parts.hostname
        shown = f"[{host}]" if ":" in host else host
        host_header = shown if port == (443 if tls else 80) else f"{shown}:{port}"
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        return cls((parts.scheme, host, port), host, port, tls, target, host_header)


def request_head(target: Target, headers: dict[str, str], length: int) -> bytes:
    """The request line and headers of a POST of ``length`` bytes. Refused, never sent: a
    name that is not an HTTP token, a value with a control character other than TAB (CR, LF and
    NUL among them), and a header that frames the request or the connection (``content-length``,
    ``transfer-encoding``, ``host`` …: only this client writes those)."""
    lines = [f"POST {target.request_target} HTTP/1.1", f"host: {target.host_header}", f"content-length: {length}"]
    for name, value in headers.items():
        if not _TOKEN.fullmatch(name) or _UNSAFE.search(value):
            raise ValueError("a header name is not a token, or its value holds a control character")
        if name.lower() in _FRAMING:
            raise ValueError("a caller may not set a header that frames the request")
        lines.append(f"{name}: {value}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


class _Connection(asyncio.Protocol):
    """One connection; at most one request on it at a time (no pipelining).

    A connection is reused only when its last answer ended cleanly on its own framing and
    nothing else arrived: bytes past the answer, in the same read or later, retire it (they are
    never read as part of an answer, nor as the next one)."""

    def __init__(self, pool: Pool, key: tuple[str, str, int]) -> None:
        self._pool = pool
        self.key = key
        self.loop = pool.loop
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.busy = False
        self.generation = 0  # one per request sent: a Response answers only for its own
        self._expiry: asyncio.TimerHandle | None = None
        self._reset()

    def _reset(self) -> None:
        self._parser: httptools.HttpResponseParser | None = None
        self.status = 0
        self.headers: list[tuple[bytes, bytes]] = []
        self._head_bytes = 0
        self._stalled = 0  # bytes fed since the parser last called back
        self._progress = False
        self._head: asyncio.Future[None] | None = None
        self._chunks: deque[bytes] = deque()
        self._buffered = 0
        self._paused = False
        self._waiter: asyncio.Future[None] | None = None
        self._waiting_since = 0.0
        self._last_data = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._read_s: float | None = None
        self._head_by: float | None = None
        self.complete = False
        self._dirty = False  # something arrived past the answer: never reused
        self._keep_alive = False
        self._until_close = False  # a body that ends when the connection does
        self._coding: bytes | None = None  # gzip or deflate, inflated as the consumer reads
        self._decoder: zlib._Decompress | None = None
        self._inflating = b""  # compressed input the decoder has not taken yet
        self._inflated_any = False  # output came: a "deflate" answer is zlib-wrapped, not raw
        self._deflate_prefix = b""  # input before the first output (replayed as raw deflate)
        self._compressed_in = 0
        self.error: BaseException | None = None

    # ---- asyncio's callbacks --------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # a stream transport: create_connection's

    def data_received(self, data: bytes) -> None:
        parser = self._parser
        if parser is None or self.complete:  # bytes nobody asked for: retire the connection
            self._retire()
            return
        self._last_data = self.loop.time()
        self._progress = False
        try:
            parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._fail(TransportError("the upstream switched protocols"))
            return
        except httptools.HttpParserError as exc:
            if self.complete and self.error is None:  # junk after a whole answer: it stands, the connection goes
                self._retire()
                return
            self._fail(self.error or TransportError(f"the upstream's answer is not HTTP/1.1 ({type(exc).__name__})"))
            return
        if self._dirty:
            self._retire()
            return
        # httptools holds a header line (or a chunk's extensions) until it ends: a line that
        # never ends grows without a callback, so such a run is bounded here, not per header.
        self._stalled = 0 if self._progress else self._stalled + len(data)
        if self._stalled > MAX_HEAD_BYTES:
            self._fail(TransportError("the upstream's answer head is too large"))

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._pool.forget(self)
        self._cancel_timer()
        if self._parser is not None and not self.complete and self.error is None:
            if exc is None and self._until_close and self._head is not None and self._head.done():
                self._finish_body(keep_alive=False)  # the answer's framing: it ends with the connection
            else:
                self._fail(TransportError("the upstream closed the connection before its answer ended"))

    # ---- httptools' callbacks -------------------------------------------------------------

    def on_message_begin(self) -> None:
        self._progress = True
        if self.complete:  # a second answer in the same read: ignored, and the connection retired
            self._dirty = True

    def on_status(self, status: bytes) -> None:
        self._progress = True

    def on_header(self, name: bytes, value: bytes) -> None:
        self._progress = True
        if self._dirty:
            return
        self._head_bytes += len(name) + len(value) + 4
        if self._head_bytes > MAX_HEAD_BYTES:
            self.error = TransportError("the upstream's answer head is too large")
            raise httptools.HttpParserError("head too large")  # stops the parser; data_received reports
        if self.status == 0:  # trailers after a chunked body are read, not kept
            self.headers.append((name.lower(), value))

    def on_headers_complete(self) -> None:
        self._progress = True
        if self._dirty:
            return
        assert self._parser is not None
        status = self._parser.get_status_code()
        if 100 <= status < 200:  # an interim answer (103 Early Hints): the real one follows
            self.headers = []
            return
        self.status = status
        length = chunked = False
        for name, value in self.headers:
            if name == b"content-length":
                length = True
            elif name == b"transfer-encoding":
                chunked = b"chunked" in value.lower()
            elif name == b"content-encoding":
                coding = value.strip().lower()
                if coding in (b"gzip", b"x-gzip", b"deflate"):
                    self._coding = coding
                    self._decoder = zlib.decompressobj(zlib.MAX_WBITS | 32)  # gzip or zlib, by header
                elif coding not in (b"", b"identity"):
                    self.error = TransportError("the upstream's answer uses a content coding not supported")
                    raise httptools.HttpParserError("content coding")
        self._until_close = not length and not chunked and status not in (204, 304)
        if self._head is not None and not self._head.done():
            self._head.set_result(None)

    def on_body(self, body: bytes) -> None:
        self._progress = True
        if self._dirty:
            return
        self._chunks.append(body)  # as it came (compressed, if so): inflated as it is read
        self._buffered += len(body)
        if self._buffered > _HIGH_WATER and not self._paused and self.transport is not None:
            self._paused = True
            self.transport.pause_reading()
        self._wake()

    def on_message_complete(self) -> None:
        self._progress = True
        if self._dirty:
            return
        if self.status == 0:  # the interim answer's end
            return
        assert self._parser is not None
        self._finish_body(keep_alive=self._parser.should_keep_alive())

    # ---- the request ----------------------------------------------------------------------

    def _finish_body(self, *, keep_alive: bool) -> None:
        self.complete = True
        self._keep_alive = keep_alive
        self._cancel_timer()
        self._wake()

    def send(self, head: bytes, body: bytes, read_s: float | None, head_by: float | None) -> asyncio.Future[None]:
        """Write the request; the returned future is done once the answer's head arrived (or
        fails with :class:`ReadTimeout` past ``head_by``, a loop time, whatever arrived before)."""
        assert self.transport is not None and not self.busy
        self._reset()
        self.generation += 1
        self.busy = True
        self._parser = httptools.HttpResponseParser(self)
        self._head = self.loop.create_future()
        self._read_s = read_s
        self._head_by = head_by
        now = self._last_data = self._waiting_since = self.loop.time()
        if read_s is not None or head_by is not None:
            self._timer = self.loop.call_at(self._next_check(now, True), self._check_read)
        if len(body) < 16 * 1024:
            self.transport.write(head + body)  # one segment: the usual 1 KB chat
        else:
            self.transport.write(head)  # two writes rather than a concatenated copy of megabytes
            self.transport.write(body)
        return self._head

    def _next_check(self, since: float, head_pending: bool) -> float:
        at = since + self._read_s if self._read_s is not None else float("inf")
        if head_pending and self._head_by is not None:
            at = min(at, self._head_by)
        return at

    def _check_read(self) -> None:
        """The read timer: a timeout only while someone waits for bytes that do not come, or
        while the head is awaited past its deadline."""
        self._timer = None
        if self.complete or self.closed:
            return
        now = self.loop.time()
        head_pending = self._head is not None and not self._head.done()
        waiting = head_pending or (self._waiter is not None and not self._waiter.done())
        since = max(self._last_data, self._waiting_since)
        if head_pending and self._head_by is not None and now >= self._head_by:
            self._fail(ReadTimeout())
            return
        if self._read_s is not None and waiting and now - since >= self._read_s:
            self._fail(ReadTimeout())
            return
        at = self._next_check(since if waiting else now, head_pending)
        if at != float("inf"):
            self._timer = self.loop.call_at(at, self._check_read)

    async def read_chunk(self) -> bytes | None:
        """The next piece of the body (inflated, at most ``_INFLATE_STEP`` at a time when the
        answer is compressed), or None at its end."""
        while True:
            if self.error is not None:
                raise self.error
            if self._inflating:
                out = self._inflate(self._inflating)
                if out:
                    return out
                continue
            if self._chunks:
                chunk = self._chunks.popleft()
                self._buffered -= len(chunk)
                if self._paused and self._buffered < _LOW_WATER and self.transport is not None:
                    self._paused = False
                    self.transport.resume_reading()
                if self._decoder is None:
                    return chunk
                out = self._inflate(chunk)
                if out:
                    return out
                continue
            if self.complete:
                if self._decoder is not None and not self._decoder.eof and self._compressed_in:
                    # a compressed body that ended before its stream did: cut, not whole
                    # (an empty body labelled gzip, as 204s and errors come, is empty)
                    self.error = TransportError("the upstream's compressed answer ended early")
                    raise self.error
                return None
            self._waiter = self.loop.create_future()
            now = self._waiting_since = self.loop.time()
            if self._read_s is not None and (self._timer is None or self._timer.when() > now + self._read_s):
                # the timer was armed while nobody waited: due no later than read_s from now
                if self._timer is not None:
                    self._timer.cancel()
                self._timer = self.loop.call_at(now + self._read_s, self._check_read)
            try:
                await self._waiter
            finally:
                self._waiter = None

    def _inflate(self, data: bytes) -> bytes:
        decoder = self._decoder
        assert decoder is not None
        self._compressed_in += len(data)
        if decoder.eof and data:
            self._beyond_end()
        if self._coding == b"deflate" and not self._inflated_any:
            self._deflate_prefix += data
        try:
            out = decoder.decompress(data, _INFLATE_STEP)
        except zlib.error:
            if self._coding == b"deflate" and not self._inflated_any:
                # "deflate" as many servers send it: raw, without the zlib header
                replay, self._deflate_prefix = self._deflate_prefix, b""
                self._decoder = zlib.decompressobj(-zlib.MAX_WBITS)
                self._inflated_any = True
                self._compressed_in -= len(replay)
                return self._inflate(replay)
            self.error = TransportError("the upstream's compressed answer is corrupt")
            self._dirty = True
            raise self.error from None
        if out:
            self._inflated_any = True
            self._deflate_prefix = b""
        if decoder.eof and decoder.unused_data:
            self._beyond_end()
        self._inflating = decoder.unconsumed_tail
        return out

    def _beyond_end(self) -> None:
        """Bytes after the compressed stream's end (a second gzip member, padding): not read as
        the answer, and not dropped silently either (the answer would be cut without a word)."""
        self.error = TransportError("the upstream's compressed answer has data after its end")
        self._dirty = True
        raise self.error

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _fail(self, exc: BaseException) -> None:
        if self.error is None:
            self.error = exc
        for fut in (self._head, self._waiter):
            if fut is not None and not fut.done():
                fut.set_exception(self.error)
                fut.exception()  # retrieved here too: a caller that gave up must not log it
        self._dirty = True
        self.close()

    def _retire(self) -> None:
        """Not reusable, though the answer (if any) stands: bytes past it arrived."""
        self._dirty = True
        if not self.busy:
            self.close()
        elif self.transport is not None:
            self.transport.abort()  # connection_lost follows; a complete answer is not failed by it

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def release(self) -> None:
        """Back to the pool when the answer was read to its end on a connection that stays
        open; closed otherwise (an unread body would be read as the next answer's start)."""
        if not self.busy:
            return
        self.busy = False
        self._cancel_timer()
        unsent = self.transport is not None and self.transport.get_write_buffer_size() > 0
        if (
            self.complete
            and self._keep_alive
            and not self._dirty
            and self.error is None
            and not self.closed
            and not unsent
        ):  # an upstream that answered before reading the whole request
            self._parser = None
            self._chunks.clear()  # read or not, the answer is whole: the connection is clean
            self._inflating = b""
            if self._paused and self.transport is not None:
                self._paused = False
                self.transport.resume_reading()
            self._pool.put_back(self)
        else:
            self.close()

    def close(self) -> None:
        """Close now: a reader still waiting on this answer is failed at once, and an answer
        not read to its end (or bytes not yet sent) makes it an abort, not a graceful close."""
        self.busy = False
        self._cancel_timer()
        if self._expiry is not None:
            self._expiry.cancel()
            self._expiry = None
        if self.closed:
            return
        self.closed = True
        self._pool.forget(self)
        unfinished = self._parser is not None and not self.complete
        if unfinished and self.error is None:
            self.error = TransportError("the connection was closed before its answer ended")
            for fut in (self._head, self._waiter):
                if fut is not None and not fut.done():
                    fut.set_exception(self.error)
                    fut.exception()
        if self.transport is not None:
            if unfinished or self._dirty:
                self.transport.abort()
            else:
                self.transport.close()


def _readable(transport: asyncio.Transport) -> bool:
    """Whether an idle connection's socket holds bytes (or its end) the loop has not read yet: an
    answer nobody asked for, which must not be read as the next request's (urllib3 and httpcore
    check the same before reuse). One zero-timeout select."""
    sock = transport.get_extra_info("socket")
    if sock is None:
        return True
    ssl_object = transport.get_extra_info("ssl_object")
    if ssl_object is not None and ssl_object.pending():
        return True
    try:
        return bool(select.select([sock.fileno()], [], [], 0)[0])
    except (OSError, ValueError):
        return True


class Response:
    """An answer whose head arrived; its body is read with :meth:`read` or :meth:`iter_chunks`,
    and :meth:`release` hands the connection back (or closes it when the body was not read to its
    end). After release or close the handle is spent: it can never reach the connection's next request."""

    __slots__ = ("_conn", "_generation", "headers", "status")

    def __init__(self, conn: _Connection) -> None:
        self._conn: _Connection | None = conn
        self._generation = conn.generation
        self.status = conn.status
        self.headers = conn.headers

    def _own(self) -> _Connection:
        conn = self._conn
        if conn is None or conn.generation != self._generation:
            raise TransportError("this answer was already released")
        return conn

    def header(self, name: bytes) -> bytes | None:
        return next((v for n, v in self.headers if n == name), None)

    async def read(self) -> bytes:
        parts = []
        while (chunk := await self._own().read_chunk()) is not None:
            parts.append(chunk)
        return b"".join(parts)

    async def iter_chunks(self) -> AsyncIterator[bytes]:
        # the handle is checked at every step: an iterator resumed after release reads nothing
        while (chunk := await self._own().read_chunk()) is not None:
            yield chunk

    def at_eof(self) -> bool:
        conn = self._conn
        if conn is None or conn.generation != self._generation:
            return False
        return conn.complete and not conn._chunks and not conn._inflating

    def release(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None and conn.generation == self._generation:
            conn.release()

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None and conn.generation == self._generation:
            conn.close()


class Pool:
    """Keep-alive connections per (scheme, host, port), at most ``limit`` open in all."""

    def __init__(self, *, limit: int = 512, keepalive_s: float = 30.0, connect_s: float = 10.0,
                 pool_s: float = 10.0, read_s: float | None = None) -> None:  # fmt: skip
        self.loop = asyncio.get_running_loop()  # a pool belongs to the loop it was made in
        self._limit = limit
        self._keepalive = keepalive_s
        self._connect_s = connect_s
        self._pool_s = pool_s
        self._read_s = read_s
        self._idle: dict[tuple[str, str, int], list[_Connection]] = {}
        self._open = 0
        self._connections: set[_Connection] = set()
        self._slots: deque[asyncio.Future[None]] = deque()
        self._ssl: ssl.SSLContext | None = None
        self._closed = False

    async def post(self, target: Target, head: bytes, body: bytes, *, head_s: float | None = None) -> Response:
        """Send a request; return once its answer's head arrived. ``head_s`` bounds the whole
        wait for the head: for a connection, then for the answer (:class:`ConnectFailed` or
        :class:`ReadTimeout` past it)."""
        by = None if head_s is None else self.loop.time() + head_s
        conn = await self._acquire(target, by)
        if by is not None and self.loop.time() >= by:  # nothing sent yet: the caller may try elsewhere
            self.put_back(conn)
            raise ConnectFailed("PoolTimeout")
        try:
            await conn.send(head, body, self._read_s, by)
        except BaseException:
            conn.close()
            raise
        return Response(conn)

    async def _acquire(self, target: Target, by: float | None = None) -> _Connection:
        deadline: float | None = None
        while True:
            if self._closed:
                raise ConnectFailed("PoolClosed")
            idle = self._idle.get(target.key)
            while idle:
                conn = idle.pop()
                if conn._expiry is not None:
                    conn._expiry.cancel()
                    conn._expiry = None
                if (
                    not conn.closed
                    and conn.transport is not None
                    and not conn.transport.is_closing()
                    and not _readable(conn.transport)
                ):
                    return conn
                conn._dirty = True  # closed, or bytes (or the end) waiting that nobody asked for
                conn.close()
            if self._open < self._limit:
                break
            spare = next((c for conns in self._idle.values() for c in conns), None)
            if spare is not None:  # full, but an idle connection elsewhere can make room
                spare.close()
                continue
            # Full: wait for a connection to close or to come back to the pool.
            deadline = deadline or min(self.loop.time() + self._pool_s, by or float("inf"))
            slot = self.loop.create_future()
            self._slots.append(slot)
            try:
                async with asyncio.timeout_at(deadline):
                    await slot
            except BaseException as exc:
                if slot.done() and not slot.cancelled():
                    self._wake_one()  # granted as this waiter gave up: the next one looks instead
                if isinstance(exc, TimeoutError):
                    raise ConnectFailed("PoolTimeout") from None
                raise
            finally:
                if slot in self._slots:
                    self._slots.remove(slot)
        self._open += 1
        conn = _Connection(self, target.key)
        self._connections.add(conn)
        connect_by = self.loop.time() + self._connect_s
        try:
            async with asyncio.timeout_at(min(connect_by, by) if by is not None else connect_by):
                await self.loop.create_connection(
                    lambda: conn, target.host, target.port,
                    ssl=self._context() if target.tls else None,
                    server_hostname=target.host if target.tls else None,
                )  # fmt: skip
        except TimeoutError:
            self.forget(conn)
            raise ConnectFailed("ConnectionTimeoutError") from None
        except (OSError, ssl.SSLError) as exc:
            self.forget(conn)
            raise ConnectFailed("ClientConnectorError") from exc
        except BaseException:
            self.forget(conn)
            raise
        return conn

    def _context(self) -> ssl.SSLContext:
        if self._ssl is None:  # made on first use: loading the CA store costs milliseconds
            self._ssl = ssl.create_default_context()
        return self._ssl

    def put_back(self, conn: _Connection) -> None:
        if self._closed:
            conn.close()
            return
        conn._expiry = self.loop.call_later(self._keepalive, conn.close)
        self._idle.setdefault(conn.key, []).append(conn)
        self._wake_one()

    def forget(self, conn: _Connection) -> None:
        """A connection is gone: its slot is free for a waiter."""
        if conn in self._connections:
            self._connections.discard(conn)
            self._open -= 1
            idle = self._idle.get(conn.key)
            if idle and conn in idle:
                idle.remove(conn)
            self._wake_one()

    def _wake_one(self) -> None:
        """A slot freed or a connection back: the longest waiter looks again."""
        while self._slots:
            slot = self._slots.popleft()
            if not slot.done():
                slot.set_result(None)
                break

    async def close(self) -> None:
        self._closed = True
        for conn in list(self._connections):
            conn.close()
        while self._slots:  # waiters wake and find the pool closed
            slot = self._slots.popleft()
            if not slot.done():
                slot.set_result(None)
        await asyncio.sleep(0)  # let the transports' close callbacks run in this loop
