"""Run any ASGI app under a real uvicorn on a free 127.0.0.1 port, in a thread or a subprocess.

``ServerThread`` suits tests that inject seams into ``create_app``; ``GatewayProcess`` runs the
real ``tiergate serve`` in its own process group (for kill -9 and restart tests).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import uvicorn

__all__ = ["GatewayProcess", "ServerThread", "free_port", "serve", "wait_http"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _bound_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.set_inheritable(True)
    return sock


def wait_http(url: str, timeout_s: float = 30.0, ok: tuple[int, ...] = (200,)) -> None:
    """Poll ``url`` until it answers with one of ``ok``; raise after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=1.0).status_code in ok:
                return
        except httpx.HTTPError as exc:
            last = exc
        time.sleep(0.05)
    raise TimeoutError(f"{url} did not become ready: {last!r}")


class ServerThread:
    """uvicorn serving ``app`` in a daemon thread, with the lifespan run. ``options`` are more
    ``uvicorn.Config`` arguments (the gateway's come from ``gateway.serving.uvicorn_options``)."""

    def __init__(self, app: Any, *, lifespan: str = "on", log_level: str = "warning",
                 options: dict[str, Any] | None = None) -> None:  # fmt: skip
        self._sock = _bound_socket()
        self.port = int(self._sock.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, interface="asgi3", lifespan=lifespan, log_level=log_level, access_log=False,
                                timeout_graceful_shutdown=3, **(options or {}))  # fmt: skip
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]},
                                        daemon=True, name=f"uvicorn-{self.port}")  # fmt: skip

    def start(self, timeout_s: float = 30.0) -> ServerThread:
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self._server.started:
            if not self._thread.is_alive():
                raise RuntimeError("server thread exited during start-up (see the log above)")
            if time.monotonic() > deadline:
                raise TimeoutError("server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._sock.close()

    def __enter__(self) -> ServerThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextmanager
def serve(app: Any, **kwargs: Any) -> Iterator[ServerThread]:
    server = ServerThread(app, **kwargs).start()
    try:
        yield server
    finally:
        server.stop()


class GatewayProcess:
    """``tiergate serve --config PATH`` in its own process group on a free port."""

    def __init__(self, config: Path, *, env: dict[str, str] | None = None, cwd: Path | None = None,
                 log: Path | None = None, args: tuple[str, ...] = ()) -> None:  # fmt: skip
        self.port = free_port()
        self._args = args
        self.url = f"http://127.0.0.1:{self.port}"
        self._config = config
        self._env = {**os.environ, **(env or {}), "TIERGATE_SERVER__PORT": str(self.port),
                     "TIERGATE_SERVER__HOST": "127.0.0.1"}  # fmt: skip
        self._cwd = cwd
        self._log = log
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout_s: float = 180.0) -> GatewayProcess:
        out = open(self._log, "ab") if self._log else subprocess.DEVNULL  # noqa: SIM115 -- closed below
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gateway.cli", "serve", "--config", str(self._config), *self._args],
            env=self._env,
            cwd=self._cwd,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        if not isinstance(out, int):
            out.close()  # the child holds its own copy of the descriptor
        try:
            wait_http(self.url + "/healthz", timeout_s)
        except TimeoutError:
            self.kill()
            raise
        return self

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, sig)
            self.proc.wait(timeout=15)

    def stop(self) -> None:
        self.kill(signal.SIGTERM)

    def __enter__(self) -> GatewayProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.kill()
