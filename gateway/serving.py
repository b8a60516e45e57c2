"""How the gateway is served by uvicorn: the options taken from ``ServerSettings``, and the HTTP
protocol that bounds how long a client may take to send its request.

uvicorn bounds the idle time between requests (``timeout_keep_alive``) but nothing else: its
keep-alive timer stops at a request's first byte, and neither of its HTTP implementations has a
header or body timeout, so a client sending one byte every few seconds (slowloris) holds a
connection, and a task waiting on its body, for ever. :class:`GatewayHttpProtocol` is uvicorn's
httptools protocol with one deadline per request: the headers must be complete within
``header_timeout_s`` of the connection opening (or of the request's first byte on a kept-alive
connection) and the body within ``body_timeout_s`` after the headers. A client past its deadline
gets a 408 in the OpenAI error shape and the connection is closed; the app waiting for the body
sees ``http.disconnect``. Doing this in the protocol covers every route (the dashboard's forms as
well as the proxy's plain-ASGI routes) and the header phase, which no ASGI code can see.

The connection cap is checked by the same protocol rather than by uvicorn's
``limit_concurrency``: the refusal is then a 503 in the OpenAI error shape with ``Retry-After``
(uvicorn's is plain text), and ``max_connections`` means what it says (uvicorn counts the
connection asking, so N allowed N-1 others).
"""

from __future__ import annotations

import asyncio
import functools
import json
from dataclasses import dataclass
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from gateway.errors import error_body
from gateway.settings import ServerSettings

__all__ = ["ConnectionLimits", "GatewayHttpProtocol", "uvicorn_options"]


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """What one connection may take (picklable: uvicorn hands it to each worker process)."""

    header_timeout_s: float
    body_timeout_s: float
    max_connections: int | None


def uvicorn_options(server: ServerSettings) -> dict[str, Any]:
    """Keyword arguments for ``uvicorn.run`` / ``uvicorn.Config`` (``tiergate serve`` and tests)."""
    limits = ConnectionLimits(server.header_timeout_s, server.body_timeout_s, server.max_connections)
    return {
        # uvicorn calls ``http(config=..., server_state=..., app_state=..., _loop=...)`` for each
        # connection; a partial carries the limits without a Config subclass.
        "http": functools.partial(GatewayHttpProtocol, limits=limits),
        "timeout_keep_alive": server.keep_alive_s,
        "limit_concurrency": None,  # checked by GatewayHttpProtocol (see the module docstring)
    }


def _raw_response(status: bytes, body: dict[str, Any], extra: bytes = b"") -> bytes:
    payload = json.dumps(body).encode()
    return (b"HTTP/1.1 " + status + b"\r\ncontent-type: application/json\r\nconnection: close\r\n" + extra
            + b"content-length: " + str(len(payload)).encode() + b"\r\n\r\n" + payload)  # fmt: skip


_TIMED_OUT = _raw_response(b"408 Request Timeout", error_body(
    "the request was not received in time", "invalid_request_error", "request_timeout"))  # fmt: skip
_BUSY_BODY = json.dumps(error_body(
    "the gateway is at its connection limit; retry shortly", "service_unavailable", "server_busy")).encode()  # fmt: skip


async def _busy(scope: Any, receive: Any, send: Any) -> None:
    """The answer to a request beyond ``max_connections``; the connection closes after it."""
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(_BUSY_BODY)).encode()),
               (b"retry-after", b"1"), (b"connection", b"close")]  # fmt: skip
    await send({"type": "http.response.start", "status": 503, "headers": headers})
    await send({"type": "http.response.body", "body": _BUSY_BODY})


class GatewayHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a read deadline per request and the connection cap.

    One timer per request at most: armed when the connection opens (its first request) or at a
    later request's first byte, cancelled when the request is complete. Reaching the end of the
    headers only records the time; the timer, when it fires during the body, moves itself to the
    body's deadline. Requests that arrive whole in one read (nearly all) cost one timer.
    """

    def __init__(self, config: Any, server_state: Any, app_state: dict[str, Any],
                 _loop: asyncio.AbstractEventLoop | None = None, *, limits: ConnectionLimits) -> None:  # fmt: skip
        super().__init__(config, server_state, app_state, _loop)
        self._limits = limits
        self._timer: asyncio.TimerHandle | None = None
        self._started_at = 0.0  # when the deadline's clock started for this request
        self._headers_at: float | None = None  # end of this request's headers, once seen
        self._in_request = False  # some bytes of a request have arrived, not yet all of them

    # ---- deadlines ---------------------------------------------------------------------------

    def _arm(self) -> None:
        self._started_at = self.loop.time()
        self._headers_at = None
        self._timer = self.loop.call_at(self._started_at + self._limits.header_timeout_s, self._expired)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expired(self) -> None:
        self._timer = None
        if self.transport.is_closing():
            return
        now = self.loop.time()
        if self._headers_at is not None and now < self._headers_at + self._limits.body_timeout_s:
            self._timer = self.loop.call_at(self._headers_at + self._limits.body_timeout_s, self._expired)
            return
        if self.flow.read_paused:
            # uvicorn stopped reading (the app has not consumed the body yet, or a pipelined
            # request waits for the one before): the delay is ours, not the client's.
            self._timer = self.loop.call_at(now + self._limits.body_timeout_s, self._expired)
            return
        # 408 only where it is this request's one answer: before its headers, uvicorn's cycle is
        # still the previous request's (it must be done); after them, it is this request's (it
        # must not be answered yet, e.g. a 413 sent before the rest of the body came).
        cycle = self.cycle
        if self._headers_at is None:
            unanswered = cycle is None or cycle.response_complete
        else:
            unanswered = cycle is not None and not cycle.response_started
        if self._in_request and unanswered:
            self.transport.write(_TIMED_OUT)
        # An idle connection that never started a request is just closed. The app waiting for
        # this request's body gets http.disconnect when the connection is lost.
        self.transport.close()

    # ---- uvicorn's hooks ---------------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]  # uvicorn always passes a Transport
        super().connection_made(transport)
        self._arm()  # a connection must start, and finish, its first request's headers in time

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def handle_websocket_upgrade(self) -> None:
        self._disarm()  # from here the connection belongs to the websocket protocol
        super().handle_websocket_upgrade()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_request = True
        if self._timer is None:  # a later request on a kept-alive connection: its clock starts now
            self._arm()

    def on_headers_complete(self) -> None:
        self._headers_at = self.loop.time()
        cap = self._limits.max_connections
        if cap is not None and (len(self.connections) > cap or len(self.tasks) >= cap):
            app, self.app = self.app, _busy  # read by uvicorn for this request only
            try:
                super().on_headers_complete()
            finally:
                self.app = app
            return
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._in_request = False
        self._disarm()
        super().on_message_complete()
