"""Where the signed lines go: a file, syslog (RFC 5424 over UDP, TCP or TLS) or an HTTPS webhook.

A sink's ``deliver(lines)`` returns once the sink has them and raises :class:`SinkDown`
otherwise; the streamer keeps undelivered lines in the outbox and tries again later. What "has
them" means differs: a file is fsynced; a webhook answered 2xx; a TCP syslog connection took the
bytes (plain syslog has no acknowledgement: a collector that dies with them in its socket buffer
loses them; the connection is checked for a peer that has gone before each batch); UDP is sent
and never known to arrive.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import ssl
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

import httpx

__all__ = [
    "MAX_DATAGRAM",
    "FileSink",
    "Sink",
    "SinkDown",
    "SinkRejected",
    "SyslogSink",
    "WebhookSink",
    "syslog_frame",
    "tls_context",
]


def tls_context(ca_file: Path | None) -> ssl.SSLContext:
    """Certificate and host name always verified; ``ca_file`` replaces the system's trust store."""
    return ssl.create_default_context(cafile=str(ca_file) if ca_file is not None else None)


class SinkDown(Exception):
    """The sink did not take the lines (the message names the cause's class, never data)."""


class SinkRejected(SinkDown):
    """The sink refuses these lines for good (a datagram too large, an HTTP 4xx): retrying the
    same lines cannot succeed."""


# The largest syslog message one UDP datagram carries over IPv4 (65,535 less the headers).
MAX_DATAGRAM = 65_507


class Sink(Protocol):
    async def deliver(self, lines: list[bytes]) -> None: ...

    async def aclose(self) -> None: ...


class FileSink:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)

    def _append(self, lines: list[bytes]) -> None:
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)
        try:
            os.write(fd, b"".join(line + b"\n" for line in lines))
            os.fsync(fd)
        finally:
            os.close(fd)

    async def deliver(self, lines: list[bytes]) -> None:
        try:
            await asyncio.to_thread(self._append, lines)
        except OSError as exc:
            raise SinkDown(type(exc).__name__) from None

    async def aclose(self) -> None:
        return None


def syslog_frame(line: bytes, *, facility: int, app_name: str, hostname: str, msgid: str = "audit") -> bytes:
    """RFC 5424: ``<PRI>1 TIMESTAMP HOSTNAME APP-NAME PROCID MSGID - MSG`` (severity notice)."""
    pri = facility * 8 + 5
    stamp = datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
    head = f"<{pri}>1 {stamp} {hostname or '-'} {app_name} {os.getpid()} {msgid} - "
    return head.encode("ascii", "replace") + line


class SyslogSink:
    def __init__(self, host: str, port: int, *, transport: str, facility: int, app_name: str,
                 timeout_s: float, ca_file: Path | None = None) -> None:  # fmt: skip
        self.host, self.port, self.transport = host, port, transport
        self._tls = tls_context(ca_file) if transport == "tls" else None
        self.facility, self.app_name, self.timeout_s = facility, app_name, timeout_s
        self.hostname = socket.gethostname()[:255]
        self._writer: asyncio.StreamWriter | None = None
        self._reader: asyncio.StreamReader | None = None
        self._udp: socket.socket | None = None

    def _frame(self, line: bytes) -> bytes:
        return syslog_frame(line, facility=self.facility, app_name=self.app_name, hostname=self.hostname)

    async def deliver(self, lines: list[bytes]) -> None:
        try:
            if self.transport == "udp":
                self._send_udp(lines)
            else:
                await self._send_tcp(lines)
        except SinkRejected:
            raise
        except (OSError, TimeoutError, asyncio.IncompleteReadError, ssl.SSLError) as exc:
            await self.aclose()
            raise SinkDown(type(exc).__name__) from None

    def _send_udp(self, lines: list[bytes]) -> None:
        frames = [self._frame(line) for line in lines]
        if any(len(f) > MAX_DATAGRAM for f in frames):
            raise SinkRejected("a line is larger than one UDP datagram")
        if self._udp is None:
            self._udp = socket.socket(socket.AF_INET6 if ":" in self.host else socket.AF_INET, socket.SOCK_DGRAM)
            self._udp.connect((self.host, self.port))
        for frame in frames:
            self._udp.send(frame)

    async def _send_tcp(self, lines: list[bytes]) -> None:
        if self._writer is not None and (self._reader is None or self._reader.at_eof() or self._writer.is_closing()):
            await self.aclose()  # the collector closed its end: what we write now would be lost
        if self._writer is None:
            async with asyncio.timeout(self.timeout_s):
                self._reader, self._writer = await asyncio.open_connection(self.host, self.port, ssl=self._tls)
        await asyncio.sleep(0)  # let a pending FIN from the collector be read first
        if self._reader is not None and self._reader.at_eof():
            raise ConnectionResetError
        # RFC 6587 octet counting: "LEN SP MSG", so a line break can never split a message.
        frames = [self._frame(line) for line in lines]
        self._writer.write(b"".join(str(len(f)).encode() + b" " + f for f in frames))
        async with asyncio.timeout(self.timeout_s):
            await self._writer.drain()

    async def aclose(self) -> None:
        if self._writer is not None:
            self._writer.close()
            with contextlib.suppress(Exception):
                await self._writer.wait_closed()
        self._writer = self._reader = None
        if self._udp is not None:
            self._udp.close()
            self._udp = None


class WebhookSink:
    """POSTs a batch as ``application/x-ndjson``; any 2xx is delivery, anything else a retry."""

    def __init__(self, url: str, *, headers: dict[str, str], timeout_s: float,
                 ca_file: Path | None = None) -> None:  # fmt: skip
        self.url = url
        self._client = httpx.AsyncClient(timeout=timeout_s, headers=headers, verify=tls_context(ca_file),
                                         follow_redirects=False, trust_env=True)  # fmt: skip

    async def deliver(self, lines: list[bytes]) -> None:
        body = b"".join(line + b"\n" for line in lines)
        try:
            r = await self._client.post(self.url, content=body, headers={"content-type": "application/x-ndjson"})
        except httpx.HTTPError as exc:
            raise SinkDown(type(exc).__name__) from None
        if 400 <= r.status_code < 500 and r.status_code not in (401, 403, 408, 429):
            # The request itself is refused (too large, malformed for this receiver); a refused
            # credential or a throttle may pass later, so those are retried like a 5xx.
            raise SinkRejected(f"HTTP {r.status_code}")
        if not 200 <= r.status_code < 300:
            raise SinkDown(f"HTTP {r.status_code}")

    async def aclose(self) -> None:
        await self._client.aclose()
