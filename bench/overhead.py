"""Gateway overhead: direct calls vs Tiergate (vs LiteLLM proxy with --litellm), one mock upstream.

    .venv/bin/python bench/overhead.py             # direct vs Tiergate
    .venv/bin/python bench/overhead.py --litellm   # also LiteLLM (installed into a temp venv)
    .venv/bin/python bench/overhead.py --quick     # fewer requests (a smoke run)
    .venv/bin/python bench/overhead.py --split     # in-process: pipeline with a null audit store
                                                   # vs the real one (where the CPU goes)
    .venv/bin/python bench/overhead.py --split --tracing   # the real store, tracing off vs on

Each target runs as its own process with one worker; the mock upstream (tests/support's ledgered
fake, plain ASGI) runs in another. For every target, concurrency (1, 8, 64) and prompt size
(1 KB, 100 KB): p50/p99 latency and the p50/p99 *added* over direct calls, requests/s, CPU time
per request of the target process (from /proc), and streaming time-to-first-byte (concurrency 1).
Figures are only compared within one run (same machine, same load).

The non-streaming cells are driven by wrk when it is installed (`apt-get install wrk`): a Python
client costs more CPU per request than the proxy it measures, and everything shares two cores, so
with it the rig, not the target, caps requests/s. Streaming time-to-first-byte then comes from a
blocking-socket client for the same reason. `--python-load` keeps the httpx client for both.
Each target runs pinned to a CPU of its own, the load side on the rest (`--no-pin` to not).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from migrations import upgrade  # noqa: E402
from tests.support.servers import free_port, wait_http  # noqa: E402

PY = sys.executable
CLK_TCK = os.sysconf("SC_CLK_TCK")
WORDS = ("the quarterly plan needs review before we ship the new release to every region while "
         "keeping latency low and costs predictable across teams and vendors").split()


def prompt(size: int, seed: int) -> str:
    rng = random.Random(seed)
    out: list[str] = []
    n = 0
    while n < size:
        w = rng.choice(WORDS)
        out.append(w)
        n += len(w) + 1
    return " ".join(out)[:size]


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process and its children that were waited for, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / CLK_TCK


class Proc:
    def __init__(self, args: list[str], env: dict[str, str] | None = None, cwd: Path | None = None,
                 log: Path | None = None) -> None:  # fmt: skip
        out = open(log, "wb") if log else subprocess.DEVNULL  # noqa: SIM115
        self.p = subprocess.Popen(args, env={**os.environ, **(env or {})}, cwd=cwd, stdout=out,
                                  stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip

    def stop(self) -> None:
        if self.p.poll() is None:
            os.killpg(self.p.pid, signal.SIGTERM)
            try:
                self.p.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.p.pid, signal.SIGKILL)
                self.p.wait()


# With --pin (the default on two or more CPUs) the target under test gets a CPU of its own and the
# load side (this process, wrk, the mock) keeps the others: the proxy's threads then wake each
# other on one CPU instead of across two (a cross-CPU wake-up costs tens of microseconds on these
# VMs), and the load generator never steals the target's core. Every target is pinned the same way.
TARGET_CPU: list[str] = []


def pin(enabled: bool) -> str:
    cpus = sorted(os.sched_getaffinity(0))
    if not enabled or len(cpus) < 2 or not shutil.which("taskset"):
        return "not pinned"
    target, load = cpus[-1], set(cpus[:-1])
    os.sched_setaffinity(0, load)  # inherited by the mock and the load generators started later
    TARGET_CPU[:] = ["taskset", "-c", str(target)]
    return f"target on CPU {target}, load side on CPU {','.join(map(str, sorted(load)))}"


def start_upstream(port: int) -> Proc:
    code = textwrap.dedent(f"""
        import sys, uvicorn
        sys.path.insert(0, {str(ROOT)!r})
        from tests.support.fake_upstream import FakeUpstream, Scripted
        fake = FakeUpstream(name="mock", keep_ledger=False)
        fake.script = lambda r: Scripted(content="The answer is short.", chunks=["The ", "answer ", "is ", "short."])
        uvicorn.run(fake.app, host="127.0.0.1", port={port}, log_level="warning", access_log=False,
                    interface="asgi3", lifespan="off")
    """)
    proc = Proc([PY, "-c", code])
    wait_http(f"http://127.0.0.1:{port}/v1/models", 30)
    return proc


def start_tiergate(tmp: Path, upstream: str, *, source: Path | None = None,
                   max_body_bytes: int = 4 * 1024 * 1024) -> tuple[Proc, str, str]:  # fmt: skip
    """``tiergate serve`` on the embedded defaults; ``source``: the tree to run (a worktree of
    another commit), else the installed one."""
    port = free_port()
    cfg = {
        "server": {"port": port, "max_body_bytes": max_body_bytes},
        "audit": {"url": f"sqlite+aiosqlite:///{tmp / 'audit.db'}", "checkpoint_dir": str(tmp / "cp")},
        "state_dir": str(tmp / "var"),
        "upstreams": [{"name": "mock", "base_url": upstream, "kind": "shared", "max_tier": 2,
                       "models": {"bench": "mock-model"}, "context_window": 10_000_000}],
    }  # fmt: skip
    path = tmp / "tiergate.yaml"
    path.write_text(json.dumps(cfg))
    env = {"TIERGATE_CONFIG": str(path), **({"PYTHONPATH": str(source)} if source else {})}
    made = subprocess.run([PY, "-m", "gateway.cli", "keys", "create", "--tenant", "bench", "--name", "bench"],
                          env={**os.environ, **env}, cwd=tmp, capture_output=True, check=True)  # fmt: skip
    key = json.loads(made.stdout.splitlines()[0])["key"]
    proc = Proc([*TARGET_CPU, PY, "-m", "gateway.cli", "serve"], env=env, cwd=tmp, log=tmp / "tiergate.log")
    wait_http(f"http://127.0.0.1:{port}/healthz", 120)
    return proc, f"http://127.0.0.1:{port}/v1", key


def start_litellm(tmp: Path, upstream: str) -> tuple[Proc, str, str]:
    venv = tmp / "litellm-venv"
    if not (venv / "bin" / "litellm").exists():
        subprocess.run([PY, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "litellm[proxy]"], check=True)
    port = free_port()
    master = "sk-" + os.urandom(32).hex()  # the proxy refuses to start without one
    (tmp / "litellm.yaml").write_text(json.dumps({
        "model_list": [{"model_name": "bench", "litellm_params": {
            "model": "openai/mock-model", "api_base": upstream, "api_key": "none"}}],
        "litellm_settings": {"drop_params": True, "telemetry": False},
    }))  # fmt: skip
    proc = Proc([*TARGET_CPU, str(venv / "bin" / "litellm"), "--config", str(tmp / "litellm.yaml"), "--port", str(port),
                 "--num_workers", "1"], env={"LITELLM_TELEMETRY": "False", "LITELLM_MASTER_KEY": master}, cwd=tmp,
                log=tmp / "litellm.log")  # fmt: skip
    wait_http(f"http://127.0.0.1:{port}/health/liveliness", 180)
    return proc, f"http://127.0.0.1:{port}/v1", master


@dataclass
class Row:
    target: str
    size: int
    concurrency: int
    requests: int
    p50_ms: float
    p99_ms: float
    rps: float
    cpu_ms: float | None
    ttfb_p50_ms: float | None = None


async def load(base: str, key: str, text: str, concurrency: int, n: int, stream: bool) -> tuple[list[float], float]:
    """Latencies (s) of ``n`` chat requests at ``concurrency``; for streams, time to first content byte."""
    body = {"model": "bench", "messages": [{"role": "user", "content": text}], "stream": stream}
    lat: list[float] = []
    errors: list[int] = []
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits,
                                 headers={"authorization": f"Bearer {key}"}) as client:  # fmt: skip
        queue = list(range(n))

        async def worker() -> None:
            while queue:
                queue.pop()
                t0 = time.perf_counter()
                try:
                    await one(t0)
                except httpx.HTTPError:
                    errors.append(1)  # counted and reported; a dropped request has no latency

        async def one(t0: float) -> None:
            if stream:
                async with client.stream("POST", "/chat/completions", json=body) as r:
                    r.raise_for_status()
                    first = None
                    async for chunk in r.aiter_bytes():
                        if first is None and b'"content"' in chunk:
                            first = time.perf_counter() - t0
                    lat.append(first if first is not None else time.perf_counter() - t0)
            else:
                r = await client.post("/chat/completions", json=body)
                r.raise_for_status()
                lat.append(time.perf_counter() - t0)

        for _ in range(min(2, n)):  # warm up connections and caches
            queue.append(-1)
        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        wall = time.perf_counter() - start
    if errors:
        print(f"    ({len(errors)} of {n} requests failed at the transport level)", flush=True)
    if not lat:
        lat.append(float("nan"))
    return lat, wall


_WRK_SCRIPT = """wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer %s"
wrk.body = [==[%s]==]
"""
_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3}


def load_wrk(base: str, key: str, text: str, concurrency: int, seconds: float) -> tuple[float, float, float, int]:
    """p50 ms, p99 ms, requests/s and request count from wrk (a C load generator: at these rates a
    Python client spends more CPU than the proxy it measures, on the same two cores)."""
    body = json.dumps({"model": "bench", "messages": [{"role": "user", "content": text}], "stream": False})
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(_WRK_SCRIPT % (key, body))
    try:
        url = base + "/chat/completions"
        out = subprocess.run(["wrk", "-t1", f"-c{concurrency}", f"-d{seconds:g}s", "--timeout", "60s", "--latency",
                              "-s", f.name, url],
                             capture_output=True, text=True, check=True).stdout  # fmt: skip
    finally:
        os.unlink(f.name)
    if "Non-2xx" in out:
        raise RuntimeError("wrk saw failed requests:\n" + out)
    for line in out.splitlines():
        if "Socket errors" in line:
            print(f"    (wrk: {line.strip()})", flush=True)
    lat: dict[str, float] = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] in ("50%", "99%"):
            value = parts[1]
            unit = next(u for u in ("us", "ms", "s") if value.endswith(u))
            lat[parts[0]] = float(value[: -len(unit)]) * _UNITS[unit]
    n = int(next(line.split()[0] for line in out.splitlines() if " requests in " in line))
    rps = float(next(line.split()[1] for line in out.splitlines() if line.startswith("Requests/sec:")))
    return lat["50%"], lat["99%"], rps, n


def ttfb_lean(base: str, key: str, text: str, n: int) -> list[float]:
    """Seconds to the first content event of ``n`` streamed chats, one keep-alive connection, from a
    blocking socket: the same rig idea as wrk (an httpx client's own CPU would be most of what it
    measures). The answer's end is the chunked body's last chunk."""
    url = urllib.parse.urlsplit(base)
    body = json.dumps({"model": "bench", "messages": [{"role": "user", "content": text}], "stream": True}).encode()
    head = (f"POST {url.path}/chat/completions HTTP/1.1\r\nHost: {url.netloc}\r\nAuthorization: Bearer {key}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode()  # fmt: skip
    request = head + body
    out: list[float] = []
    with socket.create_connection((url.hostname, url.port)) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for i in range(n + 2):  # two warm-up requests
            t0 = time.perf_counter()
            sock.sendall(request)
            seen = b""
            first = None
            while not seen.endswith(b"\r\n0\r\n\r\n"):
                data = sock.recv(65536)
                if not data:
                    raise RuntimeError("the server closed the connection")
                if first is None and b'"content"' in data:
                    first = time.perf_counter() - t0
                if not seen and not data.startswith(b"HTTP/1.1 200 "):
                    raise RuntimeError(f"not a 200: {data[:80]!r}")
                seen = seen[-16:] + data
            if i >= 2 and first is not None:
                out.append(first)
    return out


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def measure(name: str, base: str, key: str, pid: int | None, plan: list[tuple[int, int, int]],
            wrk_seconds: float | None = None) -> list[Row]:  # fmt: skip
    rows = []
    for size, conc, n in plan:
        text = prompt(size, seed=size + conc)
        if wrk_seconds:
            load_wrk(base, key, text, conc, 1)  # warm up connections and caches
            before = cpu_seconds(pid) if pid else None
            p50, p99, rps, count = load_wrk(base, key, text, conc, wrk_seconds)
        else:
            before = cpu_seconds(pid) if pid else None
            lat, wall = asyncio.run(load(base, key, text, conc, n, stream=False))
            p50, p99, rps, count = pct(lat, 0.5), pct(lat, 0.99), len(lat) / wall, len(lat)
        cpu = (cpu_seconds(pid) - before) / count * 1000 if pid and before is not None else None
        ttfb = None
        if conc == 1 and wrk_seconds:
            ttfb = statistics.median(ttfb_lean(base, key, text, max(40, n))) * 1000
        elif conc == 1:
            firsts, _ = asyncio.run(load(base, key, text, 1, max(10, n // 4), stream=True))
            ttfb = statistics.median(firsts) * 1000
        rows.append(Row(name, size, conc, count, p50, p99, rps, cpu, ttfb))
        print(f"  {name:9} {size // 1024:>4} KB c={conc:<3} p50 {rows[-1].p50_ms:7.2f} ms  p99 "
              f"{rows[-1].p99_ms:7.2f} ms  {rows[-1].rps:7.1f} req/s  cpu/req "
              f"{'-' if cpu is None else f'{cpu:.2f} ms'}  ttfb {'-' if ttfb is None else f'{ttfb:.2f} ms'}",
              flush=True)  # fmt: skip
    return rows


def report(rows: list[Row]) -> str:
    direct = {(r.size, r.concurrency): r for r in rows if r.target == "direct"}
    lines = ["| target | prompt | conc | p50 ms | p99 ms | added p50 | added p99 | req/s | CPU/req ms | TTFB ms | added TTFB |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for r in rows:
        d = direct[(r.size, r.concurrency)]
        added = "" if r.target == "direct" else f"{r.p50_ms - d.p50_ms:+.2f}"
        added99 = "" if r.target == "direct" else f"{r.p99_ms - d.p99_ms:+.2f}"
        ttfb = "" if r.ttfb_p50_ms is None else f"{r.ttfb_p50_ms:.2f}"
        added_ttfb = "" if r.ttfb_p50_ms is None or r.target == "direct" or d.ttfb_p50_ms is None else \
            f"{r.ttfb_p50_ms - d.ttfb_p50_ms:+.2f}"  # fmt: skip
        cpu = "" if r.cpu_ms is None else f"{r.cpu_ms:.2f}"
        lines.append(f"| {r.target} | {r.size // 1024} KB | {r.concurrency} | {r.p50_ms:.2f} | {r.p99_ms:.2f} | "
                     f"{added} | {added99} | {r.rps:.0f} | {cpu} | {ttfb} | {added_ttfb} |")  # fmt: skip
    return "\n".join(lines)


def split(size: int, n: int, *, tracing: bool = False) -> dict[str, tuple[float, float]]:
    """CPU and wall per request in one process (httpx ASGI transport into the app, the mock
    upstream in a process of its own), once with an audit store that does nothing and once with
    the real SQLite store."""
    from datetime import UTC, datetime

    from audit.types import KeyInfo

    class NullStore:
        async def authenticate(self, key: str) -> KeyInfo:
            return KeyInfo("0" * 16, "t", "n", 3, None, datetime.now(UTC))

        async def record_request(self, rec: object) -> int:
            return 1

        async def record_outcome(self, out: object, *, lazy: bool = False) -> int:
            return 1

        record_event = record_request

        async def record_refusal(self, rec: object, out: object) -> int:
            return 1

        async def ping(self, timeout_s: float = 5) -> None:
            return None

    out: dict[str, tuple[float, float]] = {}
    up_port = free_port()
    upstream = start_upstream(up_port)
    try:
        modes = ("real store", "real store, traced") if tracing else ("null store", "real store")
        for mode in modes:
            out[mode] = _split_one(mode, size, n, up_port, NullStore)
    finally:
        upstream.stop()
    return out


def _split_one(mode: str, size: int, n: int, up_port: int, null_store: type) -> tuple[float, float]:
    """One mode of :func:`split`: a fresh app and temporary state, timed after a warm-up."""
    from gateway.app import create_app
    from gateway.settings import Settings
    from tests.support.harness import SECRETS

    with tempfile.TemporaryDirectory(prefix="tg-split-") as tmp_s:
        tmp = Path(tmp_s)
        settings = Settings(secrets=SECRETS, state_dir=str(tmp / "var"),
                            audit={"url": f"sqlite+aiosqlite:///{tmp / 'a.db'}", "checkpoint_dir": str(tmp / "cp")},
                            upstreams=[{"name": "mock", "base_url": f"http://127.0.0.1:{up_port}/v1", "kind": "shared",
                                        "max_tier": 2, "models": {"bench": "m"}, "context_window": 1_000_000}],
                            tracing={"enabled": mode.endswith("traced")})  # fmt: skip
        app = create_app(settings, store=null_store() if mode == "null store" else None)

        async def run() -> tuple[float, float]:
            async with app.lifespan():
                state = app.state.gateway
                key = "tg_x"
                if mode.startswith("real store"):
                    await upgrade(state.store)
                    key, _ = await state.store.create_key("t", "n", 3, None)
                body = json.dumps({"model": "bench", "messages": [{"role": "user", "content": prompt(size, 1)}]})
                async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gw",
                                             headers={"authorization": f"Bearer {key}"}) as c:  # fmt: skip
                    for _ in range(20):
                        (await c.post("/v1/chat/completions", content=body)).raise_for_status()
                    t0, c0 = time.perf_counter(), time.process_time()
                    for _ in range(n):
                        await c.post("/v1/chat/completions", content=body)
                    return (time.process_time() - c0) / n * 1000, (time.perf_counter() - t0) / n * 1000

        result = asyncio.run(run())
        print(f"  {mode:10} {size // 1024:>4} KB  cpu/req {result[0]:.2f} ms  wall/req {result[1]:.2f} ms",
              flush=True)  # fmt: skip
        return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--litellm", action="store_true", help="also measure LiteLLM proxy (pip installs it)")
    parser.add_argument("--quick", action="store_true", help="fewer requests per cell")
    parser.add_argument("--litellm-dir", type=Path, default=None, help="reuse a LiteLLM venv folder")
    parser.add_argument("--split", action="store_true", help="only the in-process null vs real store split")
    parser.add_argument("--tracing", action="store_true",
                        help="with --split: the real store with tracing off vs on (OTLP/HTTP to a local receiver)")
    parser.add_argument("--no-pin", action="store_true", help="leave every process free to use every CPU")
    parser.add_argument("--python-load", action="store_true",
                        help="drive the non-streaming cells with the Python client even where wrk is installed")
    parser.add_argument("--protocols", action="store_true",
                        help="only the per-protocol cells: chat, messages, responses, whole and streamed (bench/protocols.py)")
    args = parser.parse_args()
    if args.protocols:
        from bench.protocols import run

        print()
        print(run(100 if args.quick else 800, rounds=10 if args.quick else 20, pinned=not args.no_pin))
        return
    if args.split:
        receiver = None
        if args.tracing:
            from tests.support.otlp import OtlpReceiver

            receiver = OtlpReceiver().__enter__()
            os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = receiver.url
        for size, n in ((1024, 300), (100 * 1024, 40)):
            split(size, n, tracing=args.tracing)
        if receiver is not None:
            print(f"  spans received by the OTLP receiver: {len(receiver.spans())}")
        return
    scale = 0.25 if args.quick else 1.0
    plan = []
    for size, base_n in ((1024, 400), (100 * 1024, 60)):
        for conc in (1, 8, 64):
            plan.append((size, conc, max(conc, int(base_n * scale * (1 if conc == 1 else 2)))))
    print(pin(not args.no_pin), flush=True)
    wrk_s = None if args.python_load or not shutil.which("wrk") else (3.0 if args.quick else 8.0)
    print(f"load generator: {'wrk, ' + str(wrk_s) + ' s per cell; streaming TTFB from a blocking socket' if wrk_s else 'Python (httpx)'}",
          flush=True)  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="tg-bench-") as tmp_s:
        tmp = Path(tmp_s)
        up_port = free_port()
        upstream = start_upstream(up_port)
        procs = [upstream]
        try:
            base_up = f"http://127.0.0.1:{up_port}/v1"
            rows = measure("direct", base_up, "none", upstream.p.pid, plan, wrk_s)
            tg, tg_url, tg_key = start_tiergate(tmp, base_up)
            procs.append(tg)
            rows += measure("tiergate", tg_url, tg_key, tg.p.pid, plan, wrk_s)
            if args.litellm:
                lite_dir = args.litellm_dir or tmp
                lite, lite_url, lite_key = start_litellm(lite_dir, base_up)
                procs.append(lite)
                rows += measure("litellm", lite_url, lite_key, lite.p.pid, plan, wrk_s)
        finally:
            for p in reversed(procs):
                p.stop()
    print()
    print(report(rows))


if __name__ == "__main__":
    main()
