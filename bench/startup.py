"""Start-up: seconds from ``tiergate serve`` to a ready ``/readyz``, and resident memory when idle.

    .venv/bin/python bench/startup.py                 # this tree, 5 starts
    .venv/bin/python bench/startup.py --ref HEAD~1    # and an older commit, alternating, same run
    .venv/bin/python bench/startup.py --no-tree --ref HEAD --ref abc123   # two commits only
    .venv/bin/python bench/startup.py --imports       # also the slowest imports (python -X importtime)
    .venv/bin/python bench/startup.py --phases        # and where one start's time goes, phase by phase
    .venv/bin/python bench/startup.py --restart       # starts in a directory a first start set up
    .venv/bin/python bench/startup.py --upstreams 3   # a config of three vendor upstreams (never contacted)
    .venv/bin/python bench/startup.py --idle 15 --cold-cache   # the first start ever: it compiles the prefilter

The default config: no config file, an empty working directory (embedded mode: SQLite audit log
and generated secrets under ./var, migrations run at start). ``--restart`` measures the laptop's
usual case instead: the directory holds the database and secrets of an earlier (unmeasured) start.
Each start is a fresh process; the clock runs from the spawn to the first 200 from ``/readyz``
(polled every 20 ms from a blocking socket). "CPU s" is the server process's user + system time at
that moment: on a loaded machine it moves far less than the wall time. RSS is the server process's
VmRSS (with ``server.workers: 1`` uvicorn serves in it) after two idle seconds. Starts of the
targets alternate in ABBA order, so drift of a shared machine falls on both.

Bytecode: an installed tiergate starts from cached bytecode (pip compiles it at install; an
editable checkout writes ``__pycache__`` on its first run), but this machine's environment sets
``PYTHONDONTWRITEBYTECODE`` and ``git archive`` trees have no caches, so every start here compiled
all ~175 of the project's modules from source (≈ 0.2 s of CPU). Starts now run with a bytecode
cache of their own (``PYTHONPYCACHEPREFIX``, a temporary directory; the working tree is not
written to) that one unmeasured start per target fills first; ``--no-bytecode-cache`` measures
the old way.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
PYCACHE: Path | None = None  # the starts' bytecode cache (main() sets it), None: compile from source
CONFIG: Path | None = None  # --upstreams: a config file naming that many vendor upstreams (main() writes it)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def ready(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            sock.sendall(b"GET /readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            return sock.recv(64).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


WATCHED = ("torch", "transformers", "spacy", "thinc")


IDLE_S = 2.0  # seconds a start idles before its RSS is read (``--idle``)
COLD_CACHE = False  # ``--cold-cache``: every start with an empty cache folder (the first start ever)


class Start:
    """One server start: seconds to ready, CPU seconds at ready, idle RSS MiB, CPU seconds at the
    end of the idle time, watched stacks loaded."""

    def __init__(self, took: float, cpu: float, rss: float, watched: dict[str, bool], idle_cpu: float) -> None:
        self.took, self.cpu, self.rss, self.watched, self.idle_cpu = took, cpu, rss, watched, idle_cpu


def one_start(source: Path | None, *, restart: bool = False, argv: list[str] | None = None,
              timeout_s: float = 180) -> Start:  # fmt: skip
    """Start ``tiergate serve`` (or ``argv``) in a fresh directory (``restart``: one that an
    earlier, unmeasured start set up) and stop it once it has idled."""
    with tempfile.TemporaryDirectory(prefix="tg-start-") as tmp:
        if restart:
            _serve(source, Path(tmp), [PY, "-m", "gateway.cli", "serve"], timeout_s, idle_s=0)
        return _serve(source, Path(tmp), argv or [PY, "-m", "gateway.cli", "serve"], timeout_s, idle_s=IDLE_S)


def _serve(source: Path | None, cwd: Path, argv: list[str], timeout_s: float, idle_s: float) -> Start:
    port = free_port()
    env = {**_env(source), "TIERGATE_SERVER__PORT": str(port)}
    if COLD_CACHE:  # the classifier's first pass is compiled by this start, in the background
        env["XDG_CACHE_HOME"] = str(cwd / "cache")
    if PYCACHE is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)  # fmt: skip
    try:
        while not ready(port):
            if proc.poll() is not None:
                raise RuntimeError(f"tiergate serve exited with {proc.returncode}")
            if time.perf_counter() - t0 > timeout_s:
                raise TimeoutError("not ready in time")
            time.sleep(0.02)
        took = time.perf_counter() - t0
        cpu = cpu_s(proc.pid)
        time.sleep(idle_s)
        rss = rss_mib(proc.pid)
        idle_cpu = cpu_s(proc.pid)
        maps = Path(f"/proc/{proc.pid}/maps").read_text()
        watched = {name: f"/{name}/" in maps for name in WATCHED}
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return Start(took, cpu, rss, watched, idle_cpu)


def _env(source: Path | None) -> dict[str, str]:
    """The environment of a command of ``source``'s tree, with the measured config."""
    env = {**os.environ, "PYTHONPATH": str(source or ROOT)}  # a package not yet in the editable install's map
    env.pop("TIERGATE_CONFIG", None)
    if CONFIG is not None:
        env["TIERGATE_CONFIG"] = str(CONFIG)
    return env


def _prefilter_kept(source: Path | None) -> None:
    """``tiergate config prefilter`` of the default config, where the tree has the command."""
    with tempfile.TemporaryDirectory(prefix="tg-prefilter-") as tmp:
        subprocess.run([PY, "-m", "gateway.cli", "config", "prefilter"], cwd=tmp, env=_env(source), capture_output=True)


def phases(source: Path | None, *, restart: bool) -> str:
    """One start under ``bench/_startup_phases.py``: each phase's wall and CPU time, nested as
    the phases nest; "first /readyz" is from the server accepting connections to our first 200."""
    with tempfile.TemporaryDirectory(prefix="tg-phases-") as tmp:
        out = Path(tmp) / "phases.jsonl"
        argv = [PY, str(ROOT / "bench" / "_startup_phases.py"), str(out)]
        work = Path(tmp) / "work"
        work.mkdir()
        if restart:
            _serve(source, work, [PY, "-m", "gateway.cli", "serve"], 180, idle_s=0)
        spawn = time.time()
        start = _serve(source, work, argv, 180, idle_s=0)
        ready_at = spawn + start.took
        rows = [json.loads(line) for line in out.read_text().splitlines()]
    rows[0]["start"] = spawn  # the interpreter's own start-up: from the spawn to the probe's first line
    serving = max((r["end"] for r in rows if r["phase"].startswith("uvicorn start-up")), default=None)
    if serving is not None:
        rows.append({"phase": "first /readyz answered 200", "start": serving, "end": ready_at, "cpu": float("nan")})
    rows.sort(key=lambda r: (r["start"], -r["end"]))
    lines = [f"ready {start.took:.2f} s after the spawn, CPU {start.cpu:.2f} s (phases below: wall ms / CPU ms)"]
    stack: list[dict[str, float]] = []
    for r in rows:
        while stack and r["start"] >= stack[-1]["end"]:
            stack.pop()
        cpu = "" if r["cpu"] != r["cpu"] else f"{r['cpu'] * 1000:7.0f}"
        lines.append(f"  {'  ' * len(stack)}{(r['end'] - r['start']) * 1000:7.0f} {cpu:>7}  {r['phase']}")
        stack.append(r)
    return "\n".join(lines)


def worktree(ref: str) -> Path:
    path = Path(tempfile.mkdtemp(prefix="tg-ref-"))
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(path)], input=archive, check=True)
    return path


def slowest_imports(n: int = 15) -> str:
    """What ``tiergate serve`` imports (``-X importtime``: the CLI, uvicorn, then the app's module):
    each package's cumulative time where it is first imported (nested packages are inside their
    importer's figure too)."""
    code = "import gateway.cli, uvicorn, gateway.app"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if PYCACHE is not None:  # as the starts: from cached bytecode (a first, unmeasured run fills it)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
        subprocess.run([PY, "-c", code], capture_output=True, cwd=ROOT, env=env, check=True)
    out = subprocess.run([PY, "-X", "importtime", "-c", code], capture_output=True, text=True,
                         cwd=ROOT, env=env).stderr  # fmt: skip
    first: dict[str, int] = {}
    for line in out.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line.split("|")
        name = name.strip()
        if "." not in name and name not in first and cumulative.strip().isdigit():
            first[name] = int(cumulative)
    rows = sorted(((us, name) for name, us in first.items()), reverse=True)
    return "\n".join(f"  {us / 1e6:6.2f} s  {name}" for us, name in rows[:n])


def _spread(xs: list[float], fmt: str = ".2f") -> str:
    return f"{statistics.median(xs):{fmt}} ({min(xs):{fmt}}–{max(xs):{fmt}})"


def main() -> None:
    global PYCACHE, CONFIG, IDLE_S, COLD_CACHE
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="rounds (each starts every target once)")
    parser.add_argument(
        "--ref",
        action="append",
        default=[],
        help="also start this git revision (from git archive), ABBA order; repeatable",
    )
    parser.add_argument("--no-tree", action="store_true", help="leave out the working tree (compare --ref only)")
    parser.add_argument("--restart", action="store_true", help="start where an earlier start set up ./var")
    parser.add_argument("--imports", action="store_true", help="print the slowest top-level imports")
    parser.add_argument("--phases", action="store_true", help="print one start's phases (each target)")
    parser.add_argument(
        "--no-bytecode-cache", action="store_true", help="compile every module from source at each start"
    )
    parser.add_argument(
        "--upstreams", type=int, default=0,
        help="start with a config of this many vendor upstreams (never contacted) instead of none",
    )  # fmt: skip
    parser.add_argument(
        "--cold-cache", action="store_true", help="every start with an empty cache folder: it compiles the prefilter"
    )
    parser.add_argument("--idle", type=float, default=IDLE_S, help="seconds idle before RSS and CPU are read again")
    args = parser.parse_args()
    IDLE_S = args.idle
    COLD_CACHE = args.cold_cache
    if args.upstreams:
        # embedded mode as the default start (no audit url, ./var), plus the upstreams
        CONFIG = Path(tempfile.mkdtemp(prefix="tg-config-")) / "tiergate.json"
        CONFIG.write_text(json.dumps({"upstreams": [
            {"name": f"vendor{i}", "base_url": f"https://vendor{i}.invalid/v1", "kind": "shared", "max_tier": 2,
             "models": {f"model{i}": "m"}} for i in range(args.upstreams)]}))  # fmt: skip
    if not args.no_bytecode_cache:
        PYCACHE = Path(tempfile.mkdtemp(prefix="tg-pycache-"))
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}, python {sys.version.split()[0]}, "
          f"{'restart (./var set up)' if args.restart else 'first start (empty directory)'}, "
          f"{args.upstreams} upstreams in the config")  # fmt: skip
    targets: dict[str, Path | None] = {} if args.no_tree else {"this tree": None}
    for ref in args.ref:
        targets[ref] = worktree(ref)
    results: dict[str, list[Start]] = {t: [] for t in targets}
    if PYCACHE is not None:
        for source in targets.values():
            one_start(source)  # unmeasured: writes the bytecode cache
    for source in [] if COLD_CACHE else targets.values():
        # A laptop's later starts: the classifier's first pass compiled and kept by an earlier one
        # (trees from before `tiergate config prefilter` lack it, and compile at every start).
        _prefilter_kept(source)
    print(f"bytecode: {'cached (' + str(PYCACHE) + ')' if PYCACHE else 'compiled from source at every start'}")
    for i in range(args.runs):
        order = list(targets.items())
        for name, source in order if i % 2 == 0 else order[::-1]:  # ABBA: drift falls on both
            st = one_start(source, restart=args.restart)
            results[name].append(st)
            loaded = ",".join(k for k, v in st.watched.items() if v) or "none"
            print(f"  {name:10} round {i + 1}: ready {st.took:5.2f} s, CPU {st.cpu:5.2f} s, "
                  f"idle RSS {st.rss:6.1f} MiB, CPU {st.idle_cpu:5.2f} s after {IDLE_S:g} s idle, "
                  f"loaded: {loaded}", flush=True)  # fmt: skip
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    print()
    print(
        "| target | ready s (median, min–max) | CPU s at ready | idle RSS MiB | CPU s after idling "
        f"{IDLE_S:g} s | torch / transformers / spacy loaded |"
    )
    print("|---|---|---|---|---|---|")
    for name, rows in results.items():
        w = rows[-1].watched
        loaded = " / ".join("yes" if w[k] else "no" for k in ("torch", "transformers", "spacy"))
        print(f"| {name} | {_spread([r.took for r in rows])} | {_spread([r.cpu for r in rows])} | "
              f"{_spread([r.rss for r in rows], '.0f')} | {_spread([r.idle_cpu for r in rows])} | {loaded} |")  # fmt: skip
    names = list(results)
    for other in names[1:]:
        first, second = results[names[0]], results[other]
        wall = [a.took / b.took for a, b in zip(first, second, strict=True)]
        cpu = [a.cpu / b.cpu for a, b in zip(first, second, strict=True)]
        print(f"\n{names[0]} / {other}, paired per round: ready {_spread(wall)}, CPU {_spread(cpu)}")
    if args.phases:
        for name, source in targets.items():
            print(f"\nphases of one start, {name}:")
            print(phases(source, restart=args.restart))
    if args.imports:
        print()
        print("slowest imports of `tiergate serve` (cumulative):")
        print(slowest_imports())


if __name__ == "__main__":
    main()
