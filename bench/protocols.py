"""Gateway overhead per wire protocol: chat, Anthropic messages and OpenAI responses, whole and
streamed, 1 KB prompt at concurrency 1, direct calls to the mock against one Tiergate serving all
three: the `messages` and `responses` cells of `bench/overhead.py --protocols`, next to a chat
cell measured the same way. Direct and Tiergate calls alternate in short rounds, so that drift in the machine's load
hits both sides alike.

    .venv/bin/python bench/protocols.py [--n 800] [--rounds 20]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.overhead import PY, TARGET_CPU, Proc, pin, prompt, start_upstream
from tests.support.servers import free_port, wait_http

# Per protocol: (path, body for a text and a stream flag, marker of the first content event).
CELLS: dict[str, tuple[str, Callable[[str, bool], dict[str, Any]], bytes]] = {
    "chat": ("/chat/completions", lambda t, s: {"model": "bench", "messages": [{"role": "user", "content": t}],
                                                "stream": s}, b'"content"'),
    "messages": ("/messages", lambda t, s: {"model": "bench", "max_tokens": 64, "stream": s,
                                            "messages": [{"role": "user", "content": t}]}, b"text_delta"),
    "responses": ("/responses", lambda t, s: {"model": "bench", "input": t, "stream": s}, b"output_text.delta"),
}  # fmt: skip


def start_tiergate(tmp: Path, upstream: str) -> tuple[Proc, str, str]:
    port = free_port()
    cfg = {
        "server": {"port": port},
        "audit": {"url": f"sqlite+aiosqlite:///{tmp / 'audit.db'}", "checkpoint_dir": str(tmp / "cp")},
        "state_dir": str(tmp / "var"),
        "upstreams": [{"name": "mock", "base_url": upstream, "kind": "shared", "max_tier": 2,
                       "models": {"bench": "mock-model"}, "context_window": 1_000_000,
                       "protocols": ["openai", "anthropic", "responses"]}],
    }  # fmt: skip
    path = tmp / "tiergate.yaml"
    path.write_text(json.dumps(cfg))
    env = {"TIERGATE_CONFIG": str(path)}
    made = subprocess.run([PY, "-m", "gateway.cli", "keys", "create", "--tenant", "bench", "--name", "bench"],
                          env={**os.environ, **env}, cwd=tmp, capture_output=True, check=True)  # fmt: skip
    key = json.loads(made.stdout.splitlines()[0])["key"]
    proc = Proc([*TARGET_CPU, PY, "-m", "gateway.cli", "serve"], env=env, cwd=tmp, log=tmp / "tiergate.log")
    wait_http(f"http://127.0.0.1:{port}/healthz", 120)
    return proc, f"http://127.0.0.1:{port}/v1", key


def calls(base: str, key: str, protocol: str, text: str, n: int, stream: bool) -> list[float]:
    """Seconds per call (whole answer) or to the first content event (streams) of ``n`` calls on one
    keep-alive connection, from a blocking socket (a Python HTTP client's own CPU would be most of
    what it measures)."""
    path, build, marker = CELLS[protocol]
    url = urllib.parse.urlsplit(base)
    body = json.dumps(build(text, stream)).encode()
    head = (f"POST {url.path}{path} HTTP/1.1\r\nHost: {url.netloc}\r\nAuthorization: Bearer {key}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode()  # fmt: skip
    out: list[float] = []
    with socket.create_connection((url.hostname, url.port)) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for i in range(n + 2):  # two warm-up requests
            t0 = time.perf_counter()
            sock.sendall(head + body)
            buf = b""
            took = None
            while True:
                data = sock.recv(65536)
                if not data:
                    raise RuntimeError("the server closed the connection")
                if not buf and not data.startswith(b"HTTP/1.1 200 "):
                    raise RuntimeError(f"{protocol}: not a 200: {data[:200]!r}")
                buf += data
                if stream:
                    if took is None and marker in buf:
                        took = time.perf_counter() - t0
                    if buf.endswith(b"\r\n0\r\n\r\n"):
                        break
                elif b"\r\n\r\n" in buf:
                    headers, _, rest = buf.partition(b"\r\n\r\n")
                    length = int(next(line.split(b":")[1] for line in headers.split(b"\r\n")
                                      if line.lower().startswith(b"content-length:")))  # fmt: skip
                    if len(rest) >= length:
                        took = time.perf_counter() - t0
                        break
            if i >= 2 and took is not None:
                out.append(took)
    return out


def run(n: int, *, rounds: int = 20, pinned: bool = True) -> str:
    print(pin(pinned), flush=True)
    lines = ["| protocol | answer | direct p50 ms | tiergate p50 ms | added p50 ms |", "|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory(prefix="tg-bench-") as tmp_s:
        tmp = Path(tmp_s)
        up_port = free_port()
        upstream = start_upstream(up_port)
        procs = [upstream]
        try:
            base_up = f"http://127.0.0.1:{up_port}/v1"
            tg, tg_url, tg_key = start_tiergate(tmp, base_up)
            procs.append(tg)
            text = prompt(1024, seed=7)
            for name in CELLS:
                for stream in (False, True):
                    # Many short rounds, each side's median per round, the median over rounds: a
                    # burst of load from other work spoils a round or two, not the figure.
                    ds: list[float] = []
                    ts: list[float] = []
                    for _ in range(rounds):
                        ds.append(statistics.median(calls(base_up, "none", name, text, n // rounds, stream)))
                        ts.append(statistics.median(calls(tg_url, tg_key, name, text, n // rounds, stream)))
                    d, t = statistics.median(ds) * 1000, statistics.median(ts) * 1000
                    what = "first event" if stream else "whole"
                    lines.append(f"| {name} | {what} | {d:.2f} | {t:.2f} | {t - d:+.2f} |")
                    print("  " + lines[-1], flush=True)
        finally:
            for p in reversed(procs):
                p.stop()
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=800, help="calls per cell and side")
    parser.add_argument("--rounds", type=int, default=20, help="alternating rounds per cell")
    parser.add_argument("--no-pin", action="store_true", help="leave every process free to use every CPU")
    args = parser.parse_args()
    print()
    print(run(args.n, rounds=args.rounds, pinned=not args.no_pin))


if __name__ == "__main__":
    main()
