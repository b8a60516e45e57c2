"""Real receivers for the SIEM stream on 127.0.0.1: a webhook (HTTP) and a syslog collector
(RFC 5424 over UDP, or TCP with RFC 6587 octet counting), each able to go down and come back on
the same port, as a collector restarting does.

    with WebhookReceiver() as hook:
        hook.down()          # the port is closed: connections are refused
        hook.up()
        hook.lines           # every line received, in order
"""

from __future__ import annotations

import socket
import socketserver
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["SyslogReceiver", "WebhookReceiver", "wait_for"]


def wait_for(predicate: Any, timeout_s: float = 15.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        time.sleep(0.02)


class _Reusable(ThreadingHTTPServer):
    allow_reuse_address = True
    daemon_threads = True


class WebhookReceiver:
    def __init__(self, tls: Any = None) -> None:
        """``tls``: a ``tests.support.tls.LoopbackTLS``: serve HTTPS with its certificate."""
        self.tls = tls
        self.lines: list[str] = []
        self.posts: list[dict[str, str]] = []  # headers of each POST
        self.status = 200  # what it answers (a 503 is "up but refusing")
        self.reject: Any = None  # body -> True: answer 413 to that POST (a receiver's size limit)
        self._lock = threading.Lock()
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self.port}/siem"
        self._server: ThreadingHTTPServer | None = None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                status = receiver.status
                if receiver.reject is not None and receiver.reject(body):
                    status = 413
                if status == 200:
                    with receiver._lock:
                        receiver.posts.append({k.lower(): v for k, v in self.headers.items()})
                        receiver.lines.extend(body.decode().splitlines())
                self.send_response(status)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                return None

        return Handler

    def up(self) -> None:
        self._server = _Reusable(("127.0.0.1", self.port), self._handler())
        if self.tls is not None:
            self._server.socket = self.tls.server_context().wrap_socket(self._server.socket, server_side=True)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def down(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> WebhookReceiver:
        self.up()
        return self

    def __exit__(self, *exc: object) -> None:
        self.down()


class SyslogReceiver:
    """``messages``: each syslog message received (header and JSON), in order."""

    def __init__(self, transport: str, tls: Any = None) -> None:
        """``transport``: ``udp``, ``tcp``, or ``tls`` (TCP with ``tls``'s certificate, RFC 5425)."""
        self.transport = transport
        self.tls = tls
        self.messages: list[str] = []
        self._lock = threading.Lock()
        kind = socket.SOCK_DGRAM if transport == "udp" else socket.SOCK_STREAM
        with socket.socket(socket.AF_INET, kind) as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self._server: socketserver.BaseServer | None = None
        self._conns: list[socket.socket] = []

    def _add(self, data: bytes) -> None:
        with self._lock:
            self.messages.append(data.decode())

    def up(self) -> None:
        receiver = self
        if self.transport == "udp":

            class UdpHandler(socketserver.BaseRequestHandler):
                def handle(self) -> None:
                    receiver._add(self.request[0])

            server: socketserver.BaseServer = socketserver.ThreadingUDPServer(("127.0.0.1", self.port), UdpHandler)
        else:

            class TcpHandler(socketserver.StreamRequestHandler):
                def setup(self) -> None:
                    super().setup()
                    receiver._conns.append(self.connection)

                def handle(self) -> None:
                    # RFC 6587 octet counting: "LEN SP MSG" again and again.
                    try:
                        while True:
                            digits = b""
                            while (c := self.rfile.read(1)) not in (b" ", b""):
                                digits += c
                            if not digits:
                                return
                            receiver._add(self.rfile.read(int(digits)))
                    except (OSError, ValueError):
                        return

            class Server(socketserver.ThreadingTCPServer):
                allow_reuse_address = True
                daemon_threads = True
                block_on_close = False

            server = Server(("127.0.0.1", self.port), TcpHandler)
            if self.transport == "tls":
                server.socket = self.tls.server_context().wrap_socket(server.socket, server_side=True)
        self._server = server
        threading.Thread(target=server.serve_forever, daemon=True).start()

    def down(self) -> None:
        """Stop listening and close every open connection (a collector that went away)."""
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        for conn in self._conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            conn.close()
        self._conns.clear()
        self._server = None

    def __enter__(self) -> SyslogReceiver:
        self.up()
        return self

    def __exit__(self, *exc: object) -> None:
        self.down()
