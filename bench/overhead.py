"""Gateway overhead: direct calls vs Tiergate (vs LiteLLM's proxy with --litellm), one mock upstream.

    .venv/bin/python bench/overhead.py --litellm          # direct, Tiergate, LiteLLM 1.108.7
    .venv/bin/python bench/overhead.py --ref HEAD~1       # and the Tiergate of another commit, same run
    .venv/bin/python bench/overhead.py --cells big        # only the 1 MB / 3 MB cells
    .venv/bin/python bench/overhead.py --quick            # one short round (a smoke run)
    .venv/bin/python bench/overhead.py --split            # in-process: pipeline with a null audit store
                                                          # vs the real one (where the CPU goes)
    .venv/bin/python bench/overhead.py --split --tracing  # the real store, tracing off vs on
    .venv/bin/python bench/overhead.py --cells audit --prefill 200000 --ref HEAD~1
                                                          # on a log that already holds 200,000 requests

Each target runs as its own process with one worker; the mock upstream (tests/support's ledgered
fake, plain ASGI) runs in another. Every request carries a **unique, realistic body**: a chat of a
system prompt, one to three earlier turns and a long last message (prose, a stack trace, code),
generated from a seed, with the request's own number in the last message — numbers are unique over
the whole run. Cells: 1 KB at concurrency 1, 8, 64; 100 KB at 1 and 8; 1 MB and 3 MB at 1, plain
and with identifiers (e-mail addresses and phone numbers every ~300 characters, which Tiergate
strips); and, labelled "(one body)", 1 KB with the same bytes every time, as wrk-style rigs send.
For each: p50/p99 latency and the p50 *added* over the direct call of the same round, requests/s,
CPU time per request of the target's process tree (from /proc: the classification workers too),
and the added time to the first streamed content byte (concurrency 1, up to 100 KB).

The load is wrk (one thread; `apt-get install wrk`), its Lua script numbering every request: a
Python client costs more CPU per request than the proxy it measures, on the same two cores. The
first byte comes from a blocking-socket client. Each target runs pinned to a CPU of its own, the
load side and the mock on the rest (`--no-pin` to not). Rounds (`--repeats`) go over every cell and
target in turn (every other round the targets in reverse order), so a shared machine's drift falls on all of them; the table gives the median over
rounds with (min – max). The machine is printed at the start and the end. Figures are compared
only within one run.
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
import sqlite3
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

from migrations import upgrade  # noqa: E402 -- after the sys.path line: run as a script from the checkout
from tests.support.servers import free_port, wait_http  # noqa: E402 -- after the sys.path line: run as a script from the checkout

PY = sys.executable
CLK_TCK = os.sysconf("SC_CLK_TCK")
WORDS = (
    "the quarterly plan needs review before we ship the new release to every region while "
    "keeping latency low and costs predictable across teams and vendors"
).split()


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
        out = open(log, "wb") if log else subprocess.DEVNULL  # noqa: SIM115 -- the child process writes it for its whole life
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


# The same for a tree from before `tiergate config prefilter` (0f6440c, 2026-12-06).
_PREFILTER_BEFORE_THE_COMMAND = """
import os
from gateway.commands._common import load_or_exit
from gateway.prefilter import attach_prefilter, cache_dir_for
from tiers import Classifier
settings = load_or_exit(os.environ["TIERGATE_CONFIG"])
raise SystemExit(0 if attach_prefilter(Classifier(settings.tiers), cache_dir_for(settings), lambda: None).result() else 1)
"""


def start_tiergate(tmp: Path, upstream: str, *, source: Path | None = None,
                   max_body_bytes: int = 4 * 1024 * 1024, audit_url: str | None = None,
                   workers: int = 1) -> tuple[Proc, str, str]:  # fmt: skip
    """``tiergate serve`` on the embedded defaults (or the audit log at ``audit_url``, migrated
    first); ``source``: the tree to run (a worktree of another commit), else this one."""
    port = free_port()
    cfg: dict[str, Any] = {
        "server": {"port": port, "max_body_bytes": max_body_bytes, "workers": workers},
        "audit": {"url": audit_url or f"sqlite+aiosqlite:///{tmp / 'audit.db'}", "checkpoint_dir": str(tmp / "cp")},
        "state_dir": str(tmp / "var"),
        "upstreams": [{"name": "mock", "base_url": upstream, "kind": "shared", "max_tier": 2,
                       "models": {"bench": "mock-model"}, "context_window": 10_000_000}],
    }  # fmt: skip
    if audit_url:  # not embedded: secrets must be given, migrations run on request
        from tests.support.harness import SECRETS

        cfg["secrets"] = SECRETS
    path = tmp / "tiergate.yaml"
    path.write_text(json.dumps(cfg))
    # PYTHONPATH even for this tree: a package newer than the editable install's map still imports.
    env = {"TIERGATE_CONFIG": str(path), "PYTHONPATH": str(source or ROOT)}
    if audit_url:
        subprocess.run([PY, "-m", "gateway.cli", "db", "upgrade"], env={**os.environ, **env}, cwd=tmp,
                       capture_output=True, check=True)  # fmt: skip
    made = subprocess.run([PY, "-m", "gateway.cli", "keys", "create", "--tenant", "bench", "--name", "bench"],
                          env={**os.environ, **env}, cwd=tmp, capture_output=True, check=True)  # fmt: skip
    key = json.loads(made.stdout.splitlines()[0])["key"]
    # The first pass compiled ahead (a tree that has it), not by the first start while cells run:
    # that is ~10 s of the pinned CPU. A fixed string hashing lets trees from before 2026-12-06,
    # whose database key changed with it, find theirs too. Older trees: no command, no matter.
    env["PYTHONHASHSEED"] = "0"
    for step in (["-m", "gateway.cli", "config", "prefilter"], ["-c", _PREFILTER_BEFORE_THE_COMMAND]):
        if subprocess.run([PY, *step], env={**os.environ, **env}, cwd=tmp, capture_output=True).returncode == 0:
            break
    proc = Proc([*TARGET_CPU, PY, "-m", "gateway.cli", "serve"], env=env, cwd=tmp, log=tmp / "tiergate.log")
    wait_http(f"http://127.0.0.1:{port}/healthz", 120)
    return proc, f"http://127.0.0.1:{port}/v1", key


LITELLM = "1.108.7"  # the version of the earlier runs and of issue 15's rig


def start_litellm(tmp: Path, upstream: str) -> tuple[Proc, str, str]:
    """LiteLLM's proxy from its own venv under ``tmp`` (made there from PyPI on first use)."""
    venv = tmp / "litellm-venv"
    if not (venv / "bin" / "litellm").exists():
        subprocess.run([PY, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", f"litellm[proxy]=={LITELLM}"], check=True)
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


# -- realistic, unique bodies ---------------------------------------------------------------------

_SYSTEM = ("You are a careful assistant for the operations team. Answer briefly, cite the runbook "
           "section you used, and ask before changing anything in production.")  # fmt: skip
_USER = [
    "Can you summarise the incident from last night and list what we still have to follow up on?",
    "The deploy to eu-west failed twice with a timeout on the health check; what should I look at first?",
    'Here is the stack trace from the worker:\n  File "worker.py", line 88, in run\n    batch = queue.get(timeout=5)\nqueue.Empty',
    "Rewrite this paragraph for the customer update so it is shorter and does not promise a date.",
    "Which of these three options is cheaper to run for a year if traffic doubles in the spring?",
    "def retry(fn, attempts=3):\n    for i in range(attempts):\n        try:\n            return fn()\n        except TimeoutError:\n            time.sleep(2 ** i)\n    raise",
    "The quarterly plan needs review before we ship the new release to every region.",
    "Draft a short note to the vendor asking for their data retention terms in writing.",
]
_ASSISTANT = [
    "Sure. In short: the cache filled up at 02:10, requests queued behind it, and the alert fired at 02:25.",
    "First check whether the new image starts at all: the readiness probe allows 30 s and the migration takes longer.",
    "The worker waits five seconds for work and then gives up; that is expected when the queue is idle.",
    "Here is a shorter version that keeps the facts and leaves the date open.",
    "Option B stays cheapest: its cost grows with storage, not with requests.",
    "That loop retries on timeouts only and backs off exponentially; consider a jitter term.",
]
_FILLER = ("while keeping latency low and costs predictable across teams and vendors, the review board "
           "asked for the numbers per region, the owners of each service, and the dates of the last "
           "three incidents with their root causes and the follow-up items still open").split()  # fmt: skip
_IDS = ["jane.doe{n}@example-mail.com", "+1 (415) 555-{n4}", "ops-lead{n}@acme.example.org", "(212) 555-{n4}"]
COUNTER = "\x00COUNTER\x00"  # where each request's number goes (unique per request in a run)


def chat_body(size: int, seed: int, *, identifiers: bool = False, stream: bool = False) -> tuple[str, str]:
    """A multi-message chat (system prompt, earlier turns, a long last message) whose JSON body is
    about ``size`` bytes, split where the request's number goes: ``prefix + str(n) + suffix``."""
    rng = random.Random(seed)
    messages: list[dict[str, str]] = [{"role": "system", "content": _SYSTEM}]
    for _turn in range(rng.randint(1, 3)):
        messages.append({"role": "user", "content": rng.choice(_USER)})
        messages.append({"role": "assistant", "content": rng.choice(_ASSISTANT)})
    spent = sum(len(m["content"]) + 30 for m in messages) + 80
    words: list[str] = [f"Request {COUNTER}:", rng.choice(_USER)]
    n = len(words[1]) + 20
    since_id = 0
    while n < size - spent:
        if identifiers and since_id > 300:
            k = rng.randrange(10_000)
            w = rng.choice(_IDS).format(n=k, n4=f"{k:04d}")
            since_id = 0
        elif rng.random() < 0.06:
            w = rng.choice(_FILLER) + ".\n" if rng.random() < 0.5 else rng.choice(_USER)
        else:
            w = rng.choice(_FILLER)
        words.append(w)
        n += len(w) + 1
        since_id += len(w) + 1
    messages.append({"role": "user", "content": " ".join(words)})
    body = json.dumps({"model": "bench", "messages": messages, "stream": stream})
    prefix, suffix = body.split(json.dumps(COUNTER)[1:-1], 1)
    return prefix, suffix


@dataclass(frozen=True)
class Cell:
    size: int
    concurrency: int
    identifiers: bool = False
    one_body: bool = False  # the old wrk style: the same body every time (labelled as such)

    @property
    def label(self) -> str:
        size = f"{self.size // MB} MB" if self.size >= MB else f"{self.size // 1024} KB"
        return size + (" + ids" if self.identifiers else "") + (" (one body)" if self.one_body else "")


MB = 1 << 20


def bodies_for(cell: Cell, count: int) -> list[tuple[str, str]]:
    return [chat_body(cell.size, seed=cell.size + 7919 * i, identifiers=cell.identifiers) for i in range(count)]


def process_tree_cpu(pid: int) -> float:
    """CPU seconds of ``pid`` and every live descendant (the classification workers), plus the
    children already waited for."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry.name)] = int(fields[1])
    tree, frontier = {pid}, [pid]
    while frontier:
        p = frontier.pop()
        for child, parent in parents.items():
            if parent == p and child not in tree:
                tree.add(child)
                frontier.append(child)
    total = 0.0
    for p in tree:
        try:
            total += cpu_seconds(p)
        except OSError:
            pass
    return total


@dataclass
class Sample:
    target: str
    cell: Cell
    repeat: int
    requests: int
    p50_ms: float
    p99_ms: float
    rps: float
    cpu_ms: float | None
    ttfb_ms: float | None = None
    failed: int = 0  # non-2xx answers among ``requests``


_WRK_SCRIPT = """wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer %(key)s"
local bodies = { %(bodies)s }
local n = %(base)d
request = function()
  n = n + 1
  local b = bodies[(n %% #bodies) + 1]
  return wrk.format(nil, nil, nil, %(join)s)
end
local failed = 0
response = function(status, headers, body)
  if status ~= 200 then
    failed = failed + 1
    if failed <= 3 then io.stderr:write("status " .. status .. ": " .. string.sub(body, 1, 200) .. "\\n") end
  end
end
"""
_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3}


def _lua(s: str) -> str:
    assert "]==]" not in s
    return "[==[" + s + "]==]"


def load_wrk(base: str, key: str, bodies: list[tuple[str, str]], concurrency: int, seconds: float,
             counter_base: int, *, fixed: bool = False) -> tuple[float, float, float, int, int]:  # fmt: skip
    """p50 ms, p99 ms, requests/s, request count and non-2xx count from wrk (a C load generator: at these rates a
    Python client spends more CPU than the proxy it measures, on the same two cores). Every
    request carries its own number, so no two bodies of a run are the same. wrk takes whole
    seconds only ("-d1.5s" is a usage error): ``seconds`` is rounded."""
    script = _WRK_SCRIPT % {"key": key, "base": counter_base, "join": "b[1]" if fixed else "b[1] .. n .. b[2]",
                            "bodies": ", ".join("{" + _lua(p) + ", " + _lua(s) + "}" for p, s in bodies)}  # fmt: skip
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(script)
    try:
        url = base + "/chat/completions"
        done = subprocess.run(["wrk", "-t1", f"-c{concurrency}", f"-d{max(1, round(seconds))}s", "--timeout", "60s", "--latency",
                              "-s", f.name, url],
                             capture_output=True, text=True, check=True)  # fmt: skip
    finally:
        os.unlink(f.name)
    out = done.stdout
    failed = next((int(line.split()[-1]) for line in out.splitlines() if "Non-2xx" in line), 0)
    if failed:  # counted and shown in the table, not hidden: a refusal is not a fast answer
        print(f"    ({failed} non-2xx answers; first ones: {done.stderr.strip()[:400]})", flush=True)
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
    return lat["50%"], lat["99%"], rps, n, failed


def ttfb_lean(base: str, key: str, bodies: list[tuple[str, str]], n: int, counter_base: int) -> list[float]:
    """Seconds to the first content event of ``n`` streamed chats, one keep-alive connection, from a
    blocking socket (an httpx client's own CPU would be most of what it measures), each with a
    unique body. The answer's end is the chunked body's last chunk."""
    url = urllib.parse.urlsplit(base)
    out: list[float] = []
    with socket.create_connection((url.hostname, url.port)) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for i in range(n + 2):  # two warm-up requests
            prefix, suffix = bodies[i % len(bodies)]
            body = (prefix + str(counter_base + i) + suffix).replace('"stream": false', '"stream": true').encode()
            head = (f"POST {url.path}/chat/completions HTTP/1.1\r\nHost: {url.netloc}\r\nAuthorization: Bearer {key}\r\n"
                    f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode()  # fmt: skip
            t0 = time.perf_counter()
            sock.sendall(head + body)
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


class Counter:
    """Request numbers unique over the whole run (every target, cell and repeat)."""

    def __init__(self) -> None:
        self.next = 1_000_000

    def take(self, n: int = 10_000_000) -> int:
        base, self.next = self.next, self.next + n
        return base


def settle(pid: int | None, quiet_s: float = 0.2, limit_s: float = 10.0) -> None:
    """Wait until the target's process tree is idle: wrk stops with requests in flight, and a
    server finishes those after the client left; the next run must not start behind them."""
    if pid is None:
        return
    deadline = time.monotonic() + limit_s
    last = process_tree_cpu(pid)
    while time.monotonic() < deadline:
        time.sleep(quiet_s)
        now = process_tree_cpu(pid)
        if now - last < quiet_s * 0.05:
            return
        last = now


def measure_cell(target: str, base: str, key: str, pid: int | None, cell: Cell, repeat: int, seconds: float,
                 counter: Counter, bodies: list[tuple[str, str]], ttfb_n: int) -> Sample:  # fmt: skip
    if cell.one_body:  # the same bytes every time: the first body with one fixed number
        bodies = [(bodies[0][0] + "1" + bodies[0][1], "")]
    load_wrk(base, key, bodies, cell.concurrency, max(1.0, seconds / 4), counter.take(), fixed=cell.one_body)
    settle(pid)
    before = process_tree_cpu(pid) if pid else None
    p50, p99, rps, count, failed = load_wrk(base, key, bodies, cell.concurrency, seconds, counter.take(),
                                            fixed=cell.one_body)  # fmt: skip
    cpu = (process_tree_cpu(pid) - before) / count * 1000 if pid and before is not None and count else None
    settle(pid)
    ttfb = None
    if cell.concurrency == 1 and ttfb_n and not cell.one_body:
        ttfb = statistics.median(ttfb_lean(base, key, bodies, ttfb_n, counter.take())) * 1000
    sample = Sample(target, cell, repeat, count, p50, p99, rps, cpu, ttfb, failed)
    print(f"  r{repeat} {target:16} {cell.label:18} c={cell.concurrency:<3} p50 {p50:8.2f} ms  p99 {p99:8.2f} ms  "
          f"{rps:7.1f} req/s  cpu/req {'-' if cpu is None else f'{cpu:.2f} ms'}  "
          f"ttfb {'-' if ttfb is None else f'{ttfb:.2f} ms'}", flush=True)  # fmt: skip
    return sample


def _spread(values: list[float], fmt: str = "{:.2f}", signed: bool = False) -> str:
    if not values:
        return ""
    f = ("{:+" + fmt[2:]) if signed else fmt
    med = f.format(statistics.median(values))
    if len(values) == 1:
        return med
    return f"{med} ({f.format(min(values))} – {f.format(max(values))})"


def report(samples: list[Sample]) -> str:
    """Medians over the repeats with (min – max); 'added' is paired per repeat against the
    direct call of the same cell and repeat."""
    direct = {(s.cell, s.repeat): s for s in samples if s.target == "direct"}
    groups: dict[tuple[str, Cell], list[Sample]] = {}
    for s in samples:
        groups.setdefault((s.target, s.cell), []).append(s)
    lines = ["| target | body | conc | p50 ms | added p50 ms | p99 ms | req/s | CPU/req ms | added first byte ms | non-2xx |",
             "|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for (target, cell), rows in groups.items():
        added = [] if target == "direct" else [r.p50_ms - direct[(cell, r.repeat)].p50_ms for r in rows]
        ttfb = [] if target == "direct" else [r.ttfb_ms - direct[(cell, r.repeat)].ttfb_ms for r in rows
                                              if r.ttfb_ms is not None and direct[(cell, r.repeat)].ttfb_ms is not None]  # fmt: skip
        cpu = [r.cpu_ms for r in rows if r.cpu_ms is not None]
        lines.append(f"| {target} | {cell.label} | {cell.concurrency} | {_spread([r.p50_ms for r in rows])} | "
                     f"{_spread(added, signed=True)} | {_spread([r.p99_ms for r in rows])} | "
                     f"{_spread([r.rps for r in rows], '{:.0f}')} | {_spread(cpu)} | {_spread(ttfb, signed=True)} | "
                     f"{sum(r.failed for r in rows)} of {sum(r.requests for r in rows)} |")  # fmt: skip
    ratios = []
    tg = [t for t, _ in groups if t.startswith("tiergate")]
    for t in dict.fromkeys(tg):
        for conc in (8, 64):
            a = {s.repeat: s.rps for s in samples if s.target == t and s.cell == Cell(1024, conc)}
            b = {s.repeat: s.rps for s in samples if s.target == "litellm" and s.cell == Cell(1024, conc)}
            paired = [a[r] / b[r] for r in a if r in b and b[r]]
            if paired:
                ratios.append(f"- {t} / litellm req/s, 1 KB c={conc}: {_spread(paired, '{:.1f}')}x")
    return "\n".join(lines + ([""] + ratios if ratios else []))


def machine() -> str:
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), "?")  # fmt: skip
    mem = next((line.split()[1] for line in Path("/proc/meminfo").read_text().splitlines()
                if line.startswith("MemTotal")), "0")  # fmt: skip
    return (f"machine: {os.cpu_count()} CPUs ({model}), {int(mem) // 1024 // 1024} GiB, "
            f"{os.uname().sysname} {os.uname().release}, python {sys.version.split()[0]}, "
            f"load average {os.getloadavg()[0]:.2f}")  # fmt: skip


def worktree(ref: str) -> Path:
    """The tree of git revision ``ref`` (git archive), to run as a second Tiergate in the same run."""
    path = Path(tempfile.mkdtemp(prefix="tg-ref-"))
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(path)], input=archive, check=True)
    return path


def scratch_database(made: list[str]) -> str:
    """A new, empty PostgreSQL database on 127.0.0.1 (dropped at the end of the run)."""
    name = f"tg_bench_{os.getpid()}_{len(made)}"
    subprocess.run(["createdb", "-h", "127.0.0.1", "-U", "postgres", name], check=True)
    made.append(name)
    return f"postgresql+asyncpg://postgres@127.0.0.1:5432/{name}"


CELLS = {
    "small": [Cell(1024, 1), Cell(1024, 8), Cell(1024, 64), Cell(100 * 1024, 1), Cell(100 * 1024, 8),
              Cell(1024, 1, one_body=True)],
    "big": [Cell(MB, 1), Cell(3 * MB, 1), Cell(MB, 1, identifiers=True), Cell(3 * MB, 1, identifiers=True)],
    "audit": [Cell(1024, 1), Cell(1024, 8)],  # with --postgres: the audit backend's cost
    "scale": [Cell(1024, 8), Cell(1024, 64)],  # with --workers 1,2 --no-pin: throughput per worker count
    "1kb": [Cell(1024, 1), Cell(1024, 8), Cell(1024, 64)],  # issue 15's latency, CPU, ratio and tail targets
}  # fmt: skip


def prefilled_log(path: Path, requests: int) -> Path:
    """An audit log (SQLite, migrated) holding ``requests`` requests and their outcomes, written
    through the store as a gateway writes them (``bench/audit.py``'s agent turns: six segment
    fingerprints each, five of them repeated; random request ids, as every tree before 2026-12-07
    wrote them): a gateway that has run a while, not an empty file. Every SQLite target of the run
    starts on a copy; its own keys and secrets are made as on an empty one."""
    from audit import AuditSettings, AuditStore
    from bench.audit import fill_agent_log, random_id

    async def fill() -> None:
        settings = AuditSettings(url=f"sqlite+aiosqlite:///{path}", checkpoint_dir=str(path.parent / "template-cp"))
        store = await AuditStore.open(settings, fingerprint_key=b"f" * 32, checkpoint_key=b"c" * 32)
        try:
            await upgrade(store)
            await fill_agent_log(store, requests, random.Random(5), random_id)
        finally:
            await store.close()

    t0 = time.perf_counter()
    asyncio.run(fill())
    with sqlite3.connect(path) as conn:  # one file to copy: the WAL folded in
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    print(f"prefilled audit log: {requests:,} requests in {time.perf_counter() - t0:.0f} s", flush=True)
    return path


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

        async def active_quarantines(self) -> tuple[object, ...]:  # the quarantine monitor's poll
            return ()

        active_length_caps = active_quarantines  # the safe-length monitor's poll

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
    parser.add_argument(
        "--litellm-dir", type=Path, default=ROOT / "build", help="where LiteLLM's own venv is (made there on first use)"
    )
    parser.add_argument(
        "--ref",
        action="append",
        default=[],
        help="also run the Tiergate of this git revision (git archive), same run; repeatable",
    )
    parser.add_argument(
        "--source", action="append", default=[], type=Path, help="also run the Tiergate of this source tree; repeatable"
    )
    parser.add_argument(
        "--postgres",
        action="store_true",
        help="each Tiergate also with its audit log on PostgreSQL (a scratch database on 127.0.0.1)",
    )
    parser.add_argument(
        "--workers", default="1", help="uvicorn workers per Tiergate, comma-separated for one target each (e.g. 1,2)"
    )
    parser.add_argument(
        "--no-tree",
        action="store_true",
        help="leave out the Tiergate of this working tree (only --ref / --source ones)",
    )
    parser.add_argument(
        "--cells", default="small,big", help="cell groups: small, big, audit, scale, 1kb (comma-separated)"
    )
    parser.add_argument("--repeats", type=int, default=3, help="rounds over every cell and target")
    parser.add_argument("--seconds", type=float, default=4.0, help="wrk's duration per cell and round")
    parser.add_argument("--quick", action="store_true", help="one round of 2 s per cell")
    parser.add_argument("--split", action="store_true", help="only the in-process null vs real store split")
    parser.add_argument(
        "--tracing",
        action="store_true",
        help="with --split: the real store with tracing off vs on (OTLP/HTTP to a local receiver)",
    )
    parser.add_argument("--no-pin", action="store_true", help="leave every process free to use every CPU")
    parser.add_argument(
        "--prefill",
        type=int,
        default=0,
        help="start every SQLite target on a copy of one audit log already holding this many requests",
    )
    parser.add_argument(
        "--protocols",
        action="store_true",
        help="only the per-protocol cells: chat, messages, responses, whole and streamed (bench/protocols.py)",
    )
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
    if not shutil.which("wrk"):
        raise SystemExit("wrk is needed (apt-get install wrk): a Python client would cap the rig")
    repeats, seconds = (1, 2.0) if args.quick else (args.repeats, args.seconds)
    cells = [c for group in args.cells.split(",") for c in CELLS[group.strip()]]
    print(machine(), flush=True)
    print(pin(not args.no_pin), flush=True)
    print(f"load: wrk -t1, {seconds:g} s per cell and round, {repeats} rounds, every request a unique body "
          "(its number in the last message); first byte from a blocking socket, unique bodies too", flush=True)  # fmt: skip
    sources = [(f"tiergate@{ref}", worktree(ref)) for ref in args.ref]
    sources += [(f"tiergate@{p.name}", p.resolve()) for p in args.source]
    big = max(c.size for c in cells)
    counter = Counter()
    with tempfile.TemporaryDirectory(prefix="tg-bench-") as tmp_s:
        tmp = Path(tmp_s)
        up_port = free_port()
        upstream = start_upstream(up_port)
        procs = [upstream]
        samples: list[Sample] = []
        databases: list[str] = []
        try:
            base_up = f"http://127.0.0.1:{up_port}/v1"
            template = prefilled_log(tmp / "template.db", args.prefill) if args.prefill else None
            targets: list[tuple[str, str, str, int | None]] = [("direct", base_up, "none", upstream.p.pid)]
            for name, source in [*([] if args.no_tree else [("tiergate", None)]), *sources]:
                for workers in (int(w) for w in args.workers.split(",")):
                    for pg in (False, True) if args.postgres else (False,):
                        label = name + (" pg" if pg else "") + (f" x{workers}" if workers > 1 else "")
                        d = tmp / label.replace("@", "-").replace(" ", "-")
                        d.mkdir()
                        url_pg = scratch_database(databases) if pg else None
                        if template is not None and not pg:  # every SQLite target starts on the same log
                            shutil.copyfile(template, d / "audit.db")
                        proc, url, key = start_tiergate(d, base_up, source=source, max_body_bytes=max(4 * MB, 2 * big),
                                                        audit_url=url_pg, workers=workers)  # fmt: skip
                        procs.append(proc)
                        targets.append((label, url, key, proc.p.pid))
            if args.litellm:
                lite, lite_url, lite_key = start_litellm(args.litellm_dir, base_up)
                procs.append(lite)
                targets.append(("litellm", lite_url, lite_key, lite.p.pid))
            bodies = {c: bodies_for(c, 2 if c.size >= MB else 16) for c in cells}
            for r in range(repeats):
                # ABBA: every other round takes the targets after the direct call in reverse order,
                # so that a drift of the shared machine over a round falls on all of them alike.
                order = targets if r % 2 == 0 else [targets[0], *reversed(targets[1:])]
                for cell in cells:
                    for name, url, key, pid in order:
                        ttfb_n = 0 if cell.size >= MB else (40 if cell.size <= 1024 else 20)
                        samples.append(measure_cell(name, url, key, pid, cell, r, seconds, counter, bodies[cell],
                                                    ttfb_n))  # fmt: skip
        finally:
            for p in reversed(procs):
                p.stop()
            for db in databases:
                subprocess.run(["dropdb", "-h", "127.0.0.1", "-U", "postgres", "--if-exists", db], check=False)
    print()
    print(f"({machine()} at the end)")
    print(report(samples))


if __name__ == "__main__":
    main()
