"""Isolation under attack: a small tenant's latency while others send worst-case 8 MB bodies.

    .venv/bin/python bench/isolation.py                  # this tree
    .venv/bin/python bench/isolation.py --ref 89d4190    # and an older commit, same run
    .venv/bin/python bench/isolation.py --seconds 20     # longer phases

One mock upstream, one Tiergate process per target (one worker, pinned to a CPU of its own when
there are two), the load side on the other CPU. For each target, two phases of equal length:
quiet, then with four attacker clients each sending worst-case 8 MB bodies back to back (digit
groups in ``user``, hundreds of thousands of tiny strings in ``metadata``, a prompt dense with
identifiers). Measured throughout from a blocking-socket client (its own CPU is negligible): p50 and
p99 of a 1 KB chat (non-streaming) and of ``GET /healthz``, one request at a time, and the direct
call to the mock for the added median. Figures compare within one run only.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from overhead import pct, pin, prompt, start_tiergate, start_upstream  # noqa: E402 -- after the sys.path line: run as a script from the checkout

from tests.support.servers import free_port  # noqa: E402 -- after the sys.path line: run as a script from the checkout

MB = 1 << 20


def worst_cases() -> list[bytes]:
    """Three bodies of about 8 MB each, built to cost the classifier as much as possible."""
    digits = " ".join(f"{i % 10000:04d}" for i in range(8 * MB // 5))
    tiny = {f"k{i}": "x" for i in range(8 * MB // 12)}
    dense = "\n".join(f"row {i}: jane.doe{i}@acme-mail.de +49 30 1234{i % 10000:04d} DE41260500001562807131"
                      for i in range(8 * MB // 80))  # fmt: skip
    bodies = [
        {"model": "bench", "user": digits, "messages": [{"role": "user", "content": "hi"}]},
        {"model": "bench", "metadata": tiny, "messages": [{"role": "user", "content": "hi"}]},
        {"model": "bench", "messages": [{"role": "user", "content": dense}]},
    ]
    return [json.dumps(b).encode() for b in bodies]


class Raw:
    """One keep-alive HTTP/1.1 connection driven with blocking sockets."""

    def __init__(self, base: str) -> None:
        u = urllib.parse.urlsplit(base)
        self.host = u.netloc
        self.sock = socket.create_connection((u.hostname, u.port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def call(self, method: str, path: str, body: bytes = b"", key: str | None = None) -> int:
        head = f"{method} {path} HTTP/1.1\r\nHost: {self.host}\r\nContent-Type: application/json\r\n"
        if key:
            head += f"Authorization: Bearer {key}\r\n"
        self.sock.sendall((head + f"Content-Length: {len(body)}\r\n\r\n").encode() + body)
        data = b""
        while b"\r\n\r\n" not in data:
            data += self._recv()
        header, rest = data.split(b"\r\n\r\n", 1)
        status = int(header.split(b" ", 2)[1])
        lines = header.decode("latin-1").lower().split("\r\n")
        length = next((int(h.split(":", 1)[1]) for h in lines if h.startswith("content-length:")), None)
        if length is not None:
            while len(rest) < length:
                rest += self._recv()
        else:  # chunked
            while not rest.endswith(b"0\r\n\r\n"):
                rest += self._recv()
        return status

    def _recv(self) -> bytes:
        data = self.sock.recv(1 << 20)
        if not data:
            raise ConnectionError("closed")
        return data

    def close(self) -> None:
        self.sock.close()


def probe(base: str, key: str, seconds: float) -> dict[str, list[float]]:
    """1 KB chats and /healthz, one at a time, for ``seconds``."""
    body = json.dumps({"model": "bench", "messages": [{"role": "user", "content": prompt(1024, 1)}]}).encode()
    out: dict[str, list[float]] = {"chat": [], "healthz": []}
    conn = Raw(base)
    end = time.monotonic() + seconds
    try:
        while time.monotonic() < end:
            t = time.perf_counter()
            assert conn.call("POST", "/v1/chat/completions", body, key) == 200
            out["chat"].append(time.perf_counter() - t)
            t = time.perf_counter()
            assert conn.call("GET", "/healthz") == 200
            out["healthz"].append(time.perf_counter() - t)
    finally:
        conn.close()
    return out


def direct(upstream: str, seconds: float) -> list[float]:
    body = json.dumps({"model": "mock-model", "messages": [{"role": "user", "content": prompt(1024, 1)}]}).encode()
    conn = Raw(upstream.removesuffix("/v1"))
    out = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t = time.perf_counter()
        conn.call("POST", "/v1/chat/completions", body)
        out.append(time.perf_counter() - t)
    conn.close()
    return out


def attack(base: str, key: str, bodies: list[bytes], stop: threading.Event, statuses: list[int], i: int) -> None:
    while not stop.is_set():
        conn = Raw(base)
        try:
            while not stop.is_set():
                statuses.append(conn.call("POST", "/v1/chat/completions", bodies[i % len(bodies)], key))
                i += 1
        except (ConnectionError, OSError):
            statuses.append(0)  # the gateway closed the connection (after a refusal): reconnect
        finally:
            conn.close()


def run_target(name: str, source: Path, upstream: str, seconds: float, bodies: list[bytes]) -> list[str]:
    with tempfile.TemporaryDirectory() as d:
        proc, v1, key = start_tiergate(Path(d), upstream, source=source, max_body_bytes=16 * MB)
        base = v1.removesuffix("/v1")
        try:
            probe(base, key, 1.0)  # warm up
            quiet = probe(base, key, seconds)
            stop = threading.Event()
            statuses: list[int] = []
            threads = [threading.Thread(target=attack, args=(base, key, bodies, stop, statuses, i), daemon=True)
                       for i in range(4)]  # fmt: skip
            for t in threads:
                t.start()
            time.sleep(2.0)  # bodies uploading, workers busy
            loud = probe(base, key, seconds)
            stop.set()
            for t in threads:
                t.join(60)
        finally:
            proc.stop()
    counts = {s: statuses.count(s) for s in sorted(set(statuses))}
    rows = []
    for what in ("chat", "healthz"):
        q, l_ = quiet[what], loud[what]
        rows.append(f"| {name} | {what} | {pct(q, .5):.2f} | {pct(q, .99):.2f} | {pct(l_, .5):.2f} | "
                    f"{pct(l_, .99):.2f} | {pct(l_, .99) - pct(q, .99):+.2f} | {len(l_)} |")  # fmt: skip
    print(f"  {name}: attackers' answers {counts}", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", help="also measure this git commit (checked out in a temporary worktree)")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each phase")
    parser.add_argument("--no-pin", action="store_true")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} CPUs; {pin(not args.no_pin)}", flush=True)
    bodies = worst_cases()
    up_port = free_port()
    upstream = f"http://127.0.0.1:{up_port}/v1"
    mock = start_upstream(up_port)
    lines = ["| target | request | quiet p50 ms | quiet p99 ms | attacked p50 ms | attacked p99 ms | p99 rise ms | n |",
             "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    worktree = None
    try:
        base_direct = direct(upstream, min(5.0, args.seconds))
        targets = [("this tree", ROOT)]
        if args.ref:
            worktree = Path(tempfile.mkdtemp()) / "ref"
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(worktree), args.ref],
                           check=True, capture_output=True)  # fmt: skip
            targets.append((args.ref, worktree))
        for name, source in targets:
            lines += run_target(name, source, upstream, args.seconds, bodies)
    finally:
        mock.stop()
        if worktree is not None:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(worktree)], check=False)
    print(f"\ndirect 1 KB chat to the mock: p50 {pct(base_direct, 0.5):.2f} ms, p99 {pct(base_direct, 0.99):.2f} ms\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
