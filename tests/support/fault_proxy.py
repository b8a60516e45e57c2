"""A small asyncio TCP fault proxy: put it between the gateway and any dependency.

No Toxiproxy or ``tc netem`` on these machines, so this plays their part on 127.0.0.1:

    with FaultProxy("127.0.0.1", 5432) as proxy:      # listens on proxy.port
        ...point the gateway at 127.0.0.1:proxy.port...
        proxy.latency(0.2)      # every chunk, both directions, waits 0.2 s (open connections too)
        proxy.blackhole()       # bytes are swallowed, nothing answers (open connections too)
        proxy.pause()           # bytes are held, not lost, until heal() (a SIGSTOPped server)
        proxy.reset_after(300)  # new connections: RST after 300 bytes towards the client
        proxy.refuse()          # nothing listens: connects get ECONNREFUSED
        proxy.reset_all()       # RST every open connection now
        proxy.heal()            # back to a plain pass-through, listening again

The proxy runs its own event loop in a daemon thread, so it works the same whether the code under
test runs in this process (uvicorn in a thread) or in a child process.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import threading
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any, Self, TypeVar

__all__ = ["FaultProxy", "ProxyStats"]

T = TypeVar("T")
_CHUNK = 65536


@dataclass
class ProxyStats:
    """Counters since start (read them after a fault to prove it actually bit)."""

    accepted: int = 0
    upstream_bytes: int = 0  # towards the target
    downstream_bytes: int = 0  # towards the client
    resets: int = 0
    swallowed_bytes: int = 0


def _rst(writer: asyncio.StreamWriter) -> None:
    """Close with a TCP RST (SO_LINGER 0) rather than a clean FIN."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


class _Conn:
    def __init__(self, client: asyncio.StreamWriter, reset_after: int | None) -> None:
        self.client = client
        self.target: asyncio.StreamWriter | None = None
        self.reset_after = reset_after
        self.sent_down = 0

    def reset(self) -> None:
        _rst(self.client)
        if self.target is not None:
            _rst(self.target)


class FaultProxy:
    def __init__(self, target_host: str, target_port: int, *, connect_timeout_s: float = 5.0) -> None:
        self.target = (target_host, target_port)
        self.stats = ProxyStats()
        self._connect_timeout = connect_timeout_s
        self._delay = 0.0
        self._blackhole = False
        self._reset_after: int | None = None
        self._flowing: asyncio.Event | None = None  # cleared while paused; made in the loop
        self._conns: set[_Conn] = set()
        self._server: asyncio.base_events.Server | None = None
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True, name="fault-proxy")
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        self.port = int(probe.getsockname()[1])
        probe.close()

    # ---- lifecycle ---------------------------------------------------------------------------

    def start(self) -> Self:
        self._thread.start()
        self._call(self._listen())
        return self

    def stop(self) -> None:
        if not self._thread.is_alive():
            return
        self._call(self._shutdown())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        self._loop.close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    # ---- faults (callable from any thread) ---------------------------------------------------

    def latency(self, seconds: float) -> None:
        self._delay = seconds

    def blackhole(self) -> None:
        self._blackhole = True

    def pause(self) -> None:
        """Hold every byte in both directions (open connections too) until :meth:`heal`."""
        self._call(self._set_flowing(False))

    def reset_after(self, n_bytes: int | None) -> None:
        """Connections opened from now on get a RST after ``n_bytes`` sent to the client."""
        self._reset_after = n_bytes

    def refuse(self) -> None:
        """Stop listening (new connects are refused) and reset every open connection."""
        self._call(self._close_listener())
        self.reset_all()

    def reset_all(self) -> None:
        self._call(self._reset_all())

    def heal(self) -> None:
        self._delay = 0.0
        self._blackhole = False
        self._reset_after = None
        self._call(self._set_flowing(True))
        if self._server is None:
            self._call(self._listen())

    @property
    def open_connections(self) -> int:
        return len(self._conns)

    # ---- internals (proxy thread) ------------------------------------------------------------

    def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=10)

    async def _set_flowing(self, flowing: bool) -> None:
        assert self._flowing is not None
        if flowing:
            self._flowing.set()
        else:
            self._flowing.clear()

    async def _listen(self) -> None:
        if self._flowing is None:
            self._flowing = asyncio.Event()
            self._flowing.set()
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port, reuse_address=True)

    async def _close_listener(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None

    async def _reset_all(self) -> None:
        for conn in list(self._conns):
            conn.reset()
            self.stats.resets += 1
        self._conns.clear()

    async def _shutdown(self) -> None:
        await self._close_listener()
        await self._reset_all()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.stats.accepted += 1
        conn = _Conn(writer, self._reset_after)
        self._conns.add(conn)
        try:
            if self._blackhole:
                await self._swallow(reader)
                return
            try:
                t_reader, t_writer = await asyncio.wait_for(
                    asyncio.open_connection(*self.target), self._connect_timeout
                )
            except (OSError, TimeoutError):
                conn.reset()
                return
            conn.target = t_writer
            # Each direction ends on its own (half-close); a reset in either closes both.
            await asyncio.gather(
                self._pipe(reader, t_writer, conn, downstream=False),
                self._pipe(t_reader, writer, conn, downstream=True),
                return_exceptions=True,
            )
        finally:
            self._conns.discard(conn)
            with contextlib.suppress(Exception):
                writer.close()
            if conn.target is not None:
                with contextlib.suppress(Exception):
                    conn.target.close()

    async def _swallow(self, reader: asyncio.StreamReader) -> None:
        while data := await reader.read(_CHUNK):
            self.stats.swallowed_bytes += len(data)

    async def _pipe(
        self, src: asyncio.StreamReader, dst: asyncio.StreamWriter, conn: _Conn, *, downstream: bool
    ) -> None:
        try:
            while True:
                data = await src.read(_CHUNK)
                if not data:
                    with contextlib.suppress(OSError, RuntimeError):
                        if dst.can_write_eof():
                            dst.write_eof()
                    return
                # A blackhole that starts mid-connection swallows from then on ("paused" server).
                while self._blackhole:
                    self.stats.swallowed_bytes += len(data)
                    data = await src.read(_CHUNK)
                    if not data:
                        return
                assert self._flowing is not None
                await self._flowing.wait()
                if self._delay:
                    await asyncio.sleep(self._delay)
                if downstream and conn.reset_after is not None:
                    room = conn.reset_after - conn.sent_down
                    if len(data) >= room:
                        dst.write(data[:room])
                        with contextlib.suppress(OSError):
                            await dst.drain()
                        conn.sent_down += room
                        self.stats.downstream_bytes += room
                        self.stats.resets += 1
                        conn.reset()
                        return
                    conn.sent_down += len(data)
                dst.write(data)
                await dst.drain()
                if downstream:
                    self.stats.downstream_bytes += len(data)
                else:
                    self.stats.upstream_bytes += len(data)
        except (OSError, RuntimeError, asyncio.IncompleteReadError):
            conn.reset()
