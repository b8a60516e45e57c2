"""One OpenAI-compatible upstream, with its failures translated where they enter.

The distinction that matters is whether the upstream may have seen the request: a connection
that never opened (or a pool that never handed one out) proves it did not, and only then — or on a
5xx answered before any byte was relayed — may the pipeline try the next upstream.

Requests go out through :mod:`gateway.http1`, a lean keep-alive client on httptools: against
the same local upstream it costs ≈ 50 µs of CPU per call, aiohttp ≈ 260 µs and httpx ≈ 720 µs,
and the gateway's whole budget is well under a millisecond. A URL that an egress proxy applies to
(HTTP(S)_PROXY, NO_PROXY) goes through aiohttp instead, which implements proxies and their
credentials; that path is rare and the same errors come out of both. Control-plane GETs (engine
manifests) keep an httpx client, shared with the engine's own code.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import httpx
import msgspec

from formats.sse import Event, SSEDecoder, SSELineTooLong
from gateway import http1
from gateway.errors import UpstreamError, UpstreamTimeout
from gateway.settings import UpstreamSettings

if TYPE_CHECKING:
    from gateway.proxied import ProxiedSession, Proxy

__all__ = [
    "Opened",
    "RetryableUpstreamError",
    "StreamTooLong",
    "UpstreamClient",
    "UpstreamRejected",
    "UpstreamResponse",
]


class RetryableUpstreamError(UpstreamError):
    """Nothing was relayed and the next eligible upstream may be tried."""

    def __init__(self, reason: str, upstream_status: int | None = None) -> None:
        super().__init__(code="upstream_unavailable" if upstream_status is None else "upstream_error")
        self.reason = reason
        self.upstream_status = upstream_status


class UpstreamRejected(UpstreamError):
    """The upstream answered 4xx; the client gets that status with a fixed message."""

    error_type = "invalid_request_error"
    default_code = "upstream_rejected"

    def __init__(self, upstream_status: int, upstream_code: str | None) -> None:
        label = f" ({upstream_code})" if upstream_code else ""
        super().__init__(f"the upstream rejected the request with HTTP {upstream_status}{label}")
        self.upstream_status = upstream_status
        self.upstream_code = upstream_code  # the upstream's own short code (probes judge by it)
        self.status_code = upstream_status  # type: ignore[misc]  # declared per class; this error carries the upstream's


class StreamTooLong(UpstreamTimeout):
    """A streamed answer ran past its upstream's ``timeouts.stream``; the connection was closed."""

    default_code = "stream_max_duration"
    default_message = "the stream ran past the gateway's time limit and was ended"


# How long an idle upstream connection is kept for reuse (see `UpstreamClient._get_pool`).
_IDLE_S = 4.0

# The longest SSE line accepted (one event); far above any real event, it bounds memory.
MAX_LINE_BYTES = 16 * 1024 * 1024


class _Body(Protocol):
    """An answer's body as either client gives it (:class:`gateway.http1.Response`, or aiohttp's
    through :class:`gateway.proxied.ProxiedBody`)."""

    status: int

    def iter_chunks(self) -> AsyncIterator[bytes]: ...
    def at_eof(self) -> bool: ...
    def release(self) -> None: ...
    def close(self) -> None: ...


class UpstreamResponse:
    """A 2xx answer whose body is still to be read; every read failure arrives as
    :class:`UpstreamTimeout` or :class:`UpstreamError` (code ``upstream_transport_error``)."""

    def __init__(self, response: _Body, *, max_stream_s: float | None = None,
                 max_bytes: int | None = None) -> None:  # fmt: skip
        self._response = response
        self._max_bytes = max_bytes
        self.status_code = response.status
        # The stream's clock starts with the head; one timer for the whole stream (armed while
        # its lines are read) closes the connection at the deadline, which ends a read waiting
        # on an upstream that trickles, or never ends its line, just as well as a fast one.
        self._deadline = None if max_stream_s is None else asyncio.get_running_loop().time() + max_stream_s
        self._cut = False

    def _cut_off(self) -> None:
        self._cut = True
        self._response.close()

    @contextlib.contextmanager
    def _under_deadline(self, late: type[UpstreamTimeout]) -> Iterator[None]:
        """Reads of the body under the answer's deadline: its timer closes the connection then,
        and a read that the close broke, or ended as if cleanly, raises ``late``."""
        timer = None
        if self._deadline is not None:
            timer = asyncio.get_running_loop().call_at(self._deadline, self._cut_off)
        try:
            with _translated():
                yield
            if self._cut:  # the close may also read as a clean end of the body
                raise late()
        except UpstreamError:
            if self._cut:  # the read the deadline's close broke
                raise late() from None
            raise
        finally:
            if timer is not None:
                timer.cancel()

    async def aread(self) -> bytes:
        """The whole body, bounded as a stream is: past the answer's deadline (from its head)
        :class:`UpstreamTimeout`, past ``max_bytes`` ``upstream_answer_too_large``; the connection
        is closed either way, so an upstream that trickles or never ends holds neither the request
        nor the gateway's memory."""
        with self._under_deadline(UpstreamTimeout):
            try:
                return await _read_at_most(self._response, math.inf if self._max_bytes is None else self._max_bytes)
            except ValueError:
                self._response.close()
                raise UpstreamError(code="upstream_answer_too_large",
                                    message="the upstream's answer was longer than the gateway accepts") from None  # fmt: skip

    async def aiter_events(self) -> AsyncIterator[Event]:
        """The body's server-sent events as they arrive (:mod:`formats.sse`, the one reader), no
        line over MAX_LINE_BYTES. Past the stream's deadline, :class:`StreamTooLong` (the
        connection is closed by then)."""
        decoder = SSEDecoder(max_line=MAX_LINE_BYTES)
        with self._under_deadline(StreamTooLong):
            async for piece in self._response.iter_chunks():
                try:
                    events = decoder.feed(piece)
                except SSELineTooLong:  # an upstream that never ends its line
                    raise UpstreamError(code="upstream_transport_error",
                                        message="a line of the upstream's stream was too long") from None  # fmt: skip
                for event in events:
                    yield event
        for event in decoder.close():
            yield event

    async def aclose(self) -> None:
        # A body read to its end hands the connection back to the pool; anything else (a client
        # that went away mid-stream) closes it, so that the upstream stops generating.
        if self._response.at_eof():
            self._response.release()
        else:
            self._response.close()


@dataclass(frozen=True, slots=True)
class Opened:
    """A response whose head arrived with a 2xx status; the body is not read yet."""

    response: UpstreamResponse


class UpstreamClient:
    def __init__(self, settings: UpstreamSettings, *, api_key: str | None = None) -> None:
        self.settings = settings
        t = settings.timeouts
        key = api_key
        if key is None and settings.api_key_env:
            key = os.environ.get(settings.api_key_env)
        self._headers = {"content-type": "application/json"}
        if key and settings.auth_header == "x-api-key":
            self._headers["x-api-key"] = key
        elif key:
            self._headers["authorization"] = f"Bearer {key}"
        self._base = settings.base_url.rstrip("/")
        # Neither client has a write timeout: the whole wait for the answer's head (pool, connect,
        # sending the body, then the first byte) is bounded instead, as httpx's timeouts did (in `_send`).
        self._head_timeout = t.pool + t.connect + t.write + t.read
        self._pool: http1.Pool | None = None
        self._targets: dict[str, http1.Target] = {}
        self._session: ProxiedSession | None = None
        self._proxies: dict[str, Proxy | None] = {}
        if _proxies_named():  # aiohttp's version is checked now, not at the first proxied request
            import gateway.proxied  # noqa: F401  # imported for that check
        self._control: httpx.AsyncClient | None = None
        self._control_timeout = httpx.Timeout(connect=t.connect, read=t.read, write=t.write, pool=t.pool)

    @property
    def client(self) -> httpx.AsyncClient:
        """The control-plane client (see module docstring), made on first use: making one loads
        the CA bundle (≈ 25 ms of CPU), which only on-prem upstreams' manifests need."""
        if self._control is None:
            self._control = httpx.AsyncClient(base_url=self._base, headers=self._headers, timeout=self._control_timeout)
        return self._control

    def _get_pool(self) -> http1.Pool:
        if self._pool is None:  # made on first use: a pool belongs to the loop it was made in
            t = self.settings.timeouts
            # Idle connections are dropped before common servers drop them (uvicorn and Node: 5 s):
            # one the upstream closes just as it is reused fails its request with a 502 that
            # cannot be retried (the upstream may have read it). httpx keeps them 5 s too.
            self._pool = http1.Pool(limit=512, keepalive_s=_IDLE_S, connect_s=t.connect, pool_s=t.pool,
                                    read_s=t.read)  # fmt: skip
        return self._pool

    def _target(self, url: str) -> http1.Target:
        found = self._targets.get(url)
        if found is None:
            found = self._targets[url] = http1.Target.of(url)
        return found

    async def _send(self, url: str, body: bytes, extra: dict[str, str] | None) -> _Body:
        """POST ``body`` to ``url``; returns once the answer's head arrived, never following a
        redirect (a 307 would re-send the prompt to wherever it points). Raises
        :class:`http1.ConnectFailed` when nothing can have been sent, else the client's errors
        (``_translated`` turns them into the gateway's).

        The auth header goes with each call, not as a session default: with an explicit proxy,
        aiohttp turns a default Authorization into Proxy-Authorization, which would hand the
        upstream's API key to the egress proxy. The proxy comes from `_proxy`, read once per URL:
        aiohttp's trust_env re-read the environment and ~/.netrc in a worker thread every call."""
        headers = {**extra, **self._headers} if extra else self._headers
        proxy = self._proxy(url)
        if proxy is None:
            target = self._target(url)
            try:
                head = http1.request_head(target, headers, len(body))
            except ValueError:
                raise UpstreamError(code="upstream_transport_error",
                                    message="a forwarded header cannot be sent") from None  # fmt: skip
            # The pool bounds the wait for the head itself (its own timer, no asyncio.timeout per call).
            return await self._get_pool().post(target, head, body, head_s=self._head_timeout)
        if self._session is None:
            from gateway.proxied import ProxiedSession

            self._session = ProxiedSession(self.settings.timeouts)
        async with asyncio.timeout(self._head_timeout):
            return await self._session.post(url, headers, body, proxy)

    def _proxy(self, url: str) -> Proxy | None:
        """The egress proxy for ``url`` from HTTP(S)_PROXY / NO_PROXY (None: none applies), read
        once per URL."""
        if url in self._proxies:
            return self._proxies[url]
        found = None
        # aiohttp's rule starts from the proxies the environment names for the URL's scheme: none,
        # and no proxy applies, without importing it
        if urllib.parse.urlsplit(url).scheme in _proxies_named():
            from gateway.proxied import proxy_for

            found = proxy_for(url)
        self._proxies[url] = found
        return found

    async def open(self, path: str, body: bytes, headers: dict[str, str] | None = None) -> Opened:
        """Send ``body`` (with the protocol's forwarded ``headers``); return once a 2xx head
        arrived. Raises the translated errors above."""
        try:
            with _translated():
                response = await self._send(self._base + path, body, headers)
        except http1.ConnectFailed as exc:
            raise RetryableUpstreamError(exc.reason) from None
        except TimeoutError:  # aiohttp's ServerTimeoutError is one too
            raise UpstreamTimeout() from None
        if response.status >= 500:
            response.release()
            raise RetryableUpstreamError(f"http_{response.status}", response.status)
        if response.status >= 400:
            code = await _error_code(response, self.settings.timeouts.stream)
            raise UpstreamRejected(response.status, code)
        if response.status >= 300 or response.status < 200:
            response.release()
            raise UpstreamError(code="upstream_redirect",
                                message=f"the upstream answered HTTP {response.status}; redirects are not followed")  # fmt: skip
        return Opened(UpstreamResponse(response, max_stream_s=self.settings.timeouts.stream,
                                       max_bytes=self.settings.max_answer_bytes))  # fmt: skip

    async def count_tokens(self, body: dict[str, object], path: str | None = None,
                           headers: dict[str, str] | None = None) -> int:  # fmt: skip
        """The upstream's own prompt-token count from its ``tokenize_url`` (vLLM's /tokenize
        shape: ``{"count": n}``), or from a protocol's own counting route under ``base_url``
        (``path``: Anthropic's ``/messages/count_tokens``, ``{"input_tokens": n}``). Any failure
        raises :class:`UpstreamError`: a prompt that could not be counted must not be sent where
        its length matters."""
        url = self._base + path if path is not None else self.settings.tokenize_url
        field = "input_tokens" if path is not None else "count"
        if url is None:
            raise UpstreamError(code="prompt_not_counted", message="this upstream has no tokenize_url")
        failed = UpstreamError(code="prompt_not_counted", message="the upstream could not count the prompt")
        try:
            async with asyncio.timeout(self._head_timeout):
                response = await self._send(url, msgspec.json.encode(body), headers)
                try:
                    if response.status != 200:
                        raise failed
                    data = msgspec.json.decode(await _read_at_most(response, self.settings.max_answer_bytes))
                finally:
                    _done_with(response)
        except (ConnectionError, TimeoutError, ValueError):
            raise failed from None
        count = data.get(field) if isinstance(data, dict) else None
        if type(count) is not int or count < 0:
            raise failed
        return count

    async def get_json(self, path: str) -> object:
        response = await self.client.get(path)
        response.raise_for_status()
        return response.json()

    async def aclose(self) -> None:
        if self._control is not None:
            await self._control.aclose()
        if self._session is not None:
            await self._session.close()
        if self._pool is not None:
            await self._pool.close()


class _translated:
    """Turn either client's failures into the gateway's errors (a context manager)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        if exc is None or isinstance(exc, (UpstreamError, UpstreamTimeout, asyncio.CancelledError, GeneratorExit,
                                           http1.ConnectFailed)):  # fmt: skip
            return  # ConnectFailed: the caller decides (nothing was sent: the next upstream may be tried)
        if isinstance(exc, TimeoutError):  # aiohttp's read timeouts included
            raise UpstreamTimeout() from None
        if isinstance(exc, ConnectionError):  # aiohttp's failures included (gateway.proxied)
            raise UpstreamError(code="upstream_transport_error", message=_transport(exc)) from None


def _transport(exc: BaseException) -> str:
    return f"upstream transport failure ({getattr(exc, 'kind', type(exc).__name__)})"


def _proxies_named() -> dict[str, str]:
    """The proxies the environment names, by scheme (``urllib.request.getproxies``, as aiohttp reads them)."""
    return {k: v for k, v in urllib.request.getproxies().items() if k in ("http", "https")}


async def _read_at_most(response: _Body, limit: float) -> bytes:
    """The whole body, or ValueError once it passes ``limit`` bytes (nothing more is read)."""
    parts: list[bytes] = []
    size = 0
    async for piece in response.iter_chunks():
        size += len(piece)
        if size > limit:
            raise ValueError("the upstream's answer is longer than the gateway reads")
        parts.append(piece)
    return b"".join(parts)


def _done_with(response: _Body) -> None:
    # read to its end: back to the pool; cut short: closed, its rest never read as the next answer
    if response.at_eof():
        response.release()
    else:
        response.close()


# The most of an error answer read for its code: error JSON is a few hundred bytes.
MAX_ERROR_BYTES = 64 * 1024


async def _error_code(response: _Body, within_s: float) -> str | None:
    """Only the upstream's short error code travels on: its message may quote the prompt. The
    body is read as a whole answer's is, bounded in size and time (an upstream whose error never
    ends must hold neither the request nor the gateway's memory); past either, no code."""
    try:
        async with asyncio.timeout(within_s):
            raw = await _read_at_most(response, MAX_ERROR_BYTES)
        data = msgspec.json.decode(raw)
        code = data.get("error", {}).get("code") or data.get("error", {}).get("type")
    except Exception:  # noqa: BLE001 -- an unreadable error body only loses its code
        code = None
    finally:
        _done_with(response)
    if isinstance(code, str) and code.replace("_", "").isalnum() and len(code) <= 64:
        return code
    return None
