"""Start-up: seconds from ``tiergate serve`` to a ready ``/readyz``, and resident memory when idle.

    .venv/bin/python bench/startup.py                 # this tree, 5 starts
    .venv/bin/python bench/startup.py --ref HEAD~1    # and an older commit, alternating, same run
    .venv/bin/python bench/startup.py --imports       # also the slowest imports (python -X importtime)

The default config: no config file, an empty working directory (embedded mode: SQLite audit log
and generated secrets under ./var, migrations run at start). Each start is a fresh process; the
clock runs from the spawn to the first 200 from ``/readyz`` (polled every 20 ms from a blocking
socket). RSS is the server process's VmRSS (with ``server.workers: 1`` uvicorn serves in it) after
two idle seconds. Starts of the targets alternate, so drift of a shared machine falls on both.
"""

from __future__ import annotations

import argparse
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


def one_start(source: Path | None, timeout_s: float = 120) -> tuple[float, float, dict[str, bool]]:
    """(seconds to ready, idle RSS MiB, which watched modules the server process imported)."""
    with tempfile.TemporaryDirectory(prefix="tg-start-") as tmp:
        port = free_port()
        env = {**os.environ, "TIERGATE_SERVER__PORT": str(port)}
        env.pop("TIERGATE_CONFIG", None)
        env["PYTHONPATH"] = str(source or ROOT)  # a package not yet in the editable install's map
        t0 = time.perf_counter()
        proc = subprocess.Popen([PY, "-m", "gateway.cli", "serve"], cwd=tmp, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
        try:
            while not ready(port):
                if proc.poll() is not None:
                    raise RuntimeError(f"tiergate serve exited with {proc.returncode}")
                if time.perf_counter() - t0 > timeout_s:
                    raise TimeoutError("not ready in time")
                time.sleep(0.02)
            took = time.perf_counter() - t0
            time.sleep(2)
            rss = rss_mib(proc.pid)
            maps = Path(f"/proc/{proc.pid}/maps").read_text()
            watched = {name: f"/{name}/" in maps for name in ("torch", "transformers", "spacy", "thinc")}
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        return took, rss, watched


def worktree(ref: str) -> Path:
    path = Path(tempfile.mkdtemp(prefix="tg-ref-"))
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(path)], input=archive, check=True)
    return path


def slowest_imports(n: int = 15) -> str:
    """The server's import of the app (``-X importtime``): each package's cumulative time where it
    is first imported (nested packages are inside their importer's figure too)."""
    out = subprocess.run([PY, "-X", "importtime", "-c", "import gateway.app"], capture_output=True, text=True,
                         cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}).stderr  # fmt: skip
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--ref", help="also start this git revision (from git archive), alternating")
    parser.add_argument("--imports", action="store_true", help="print the slowest top-level imports")
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}, python {sys.version.split()[0]}")
    targets: dict[str, Path | None] = {"this tree": None}
    if args.ref:
        targets[args.ref] = worktree(args.ref)
    results: dict[str, list[tuple[float, float, dict[str, bool]]]] = {t: [] for t in targets}
    for i in range(args.runs):
        for name, source in targets.items():
            took, rss, watched = one_start(source)
            results[name].append((took, rss, watched))
            loaded = ",".join(k for k, v in watched.items() if v) or "none"
            print(f"  {name:10} run {i + 1}: ready {took:5.2f} s, idle RSS {rss:6.1f} MiB, loaded: {loaded}",
                  flush=True)  # fmt: skip
    print()
    print(
        "| target | ready s (median, min–max) | idle RSS MiB (median, min–max) | torch / transformers / spacy loaded |"
    )
    print("|---|---|---|---|")
    for name, rows in results.items():
        ts = [r[0] for r in rows]
        ms = [r[1] for r in rows]
        w = rows[-1][2]
        print(f"| {name} | {statistics.median(ts):.2f} ({min(ts):.2f}–{max(ts):.2f}) | "
              f"{statistics.median(ms):.0f} ({min(ms):.0f}–{max(ms):.0f}) | "
              f"{'yes' if w['torch'] else 'no'} / {'yes' if w['transformers'] else 'no'} / "
              f"{'yes' if w['spacy'] else 'no'} |")  # fmt: skip
    if args.imports:
        print()
        print("slowest imports of gateway.app (cumulative):")
        print(slowest_imports())


if __name__ == "__main__":
    main()
