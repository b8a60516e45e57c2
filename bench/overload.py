"""Overload: a burst of large prompts at once, beyond what the classification workers can take.

    .venv/bin/python bench/overload.py                        # 100 x 3 MB at this tree
    .venv/bin/python bench/overload.py --ref 726b9a5 --ref HEAD
    .venv/bin/python bench/overload.py --identifiers          # prompts with e-mails and phones

One mock upstream, one ``tiergate serve`` per target (embedded defaults: SQLite audit log, two
classification workers, a queue of four per worker), started one after the other. ``--n`` clients
each send one unique chat (``bench/overhead.py``'s generator: system prompt, turns, a long last
message) of ``--mb`` MB at the same moment. Reported per target: the answers by status (and
whether every refusal carried ``retry-after``), the wall time of the burst, and the audit log's
rows by (forwarded, tier, HTTP status, error class) — a refusal for load must read as one.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from overhead import MB, chat_body, machine, pin, start_tiergate, start_upstream, worktree  # noqa: E402 -- after the sys.path line: run as a script from the checkout

from tests.support.servers import free_port  # noqa: E402 -- after the sys.path line: run as a script from the checkout


async def burst(url: str, key: str, bodies: list[bytes]) -> tuple[list[httpx.Response], float]:
    limits = httpx.Limits(max_connections=len(bodies), max_keepalive_connections=0)
    async with httpx.AsyncClient(base_url=url, timeout=300, limits=limits,
                                 headers={"authorization": f"Bearer {key}",
                                          "content-type": "application/json"}) as client:  # fmt: skip
        t0 = time.perf_counter()
        answers = await asyncio.gather(*(client.post("/chat/completions", content=b) for b in bodies))
        return list(answers), time.perf_counter() - t0


def audit_rows(db: Path, expected: int, wait_s: float = 90) -> list[tuple[object, ...]]:
    """(forwarded, tier, http status, error class) per request row, once ``expected`` rows exist
    (refusals for load are written after the answer)."""
    deadline = time.monotonic() + wait_s
    while True:
        with sqlite3.connect(db) as conn:
            rows = conn.execute("SELECT r.forwarded, r.tier, o.http_status, o.error_class FROM audit_requests r "
                                "LEFT JOIN audit_outcomes o ON o.request_id = r.request_id").fetchall()  # fmt: skip
        if len(rows) >= expected or time.monotonic() > deadline:
            return rows
        time.sleep(0.5)


def run_target(name: str, source: Path | None, upstream: str, bodies: list[bytes]) -> None:
    with tempfile.TemporaryDirectory(prefix="tg-overload-") as d:
        tmp = Path(d)
        proc, url, key = start_tiergate(tmp, upstream, source=source, max_body_bytes=2 * max(map(len, bodies)))
        try:
            answers, wall = asyncio.run(burst(url, key, bodies))
            by_status = collections.Counter(r.status_code for r in answers)
            codes = collections.Counter(
                (r.status_code, r.json().get("error", {}).get("code")) for r in answers if r.status_code != 200
            )
            no_retry = sum(1 for r in answers if r.status_code in (429, 503) and "retry-after" not in r.headers)
            ok = sorted(r.elapsed.total_seconds() for r in answers if r.status_code == 200)
            rows = audit_rows(tmp / "audit.db", len(answers))
        finally:
            proc.stop()
    print(f"\n{name}: {len(bodies)} x {len(bodies[0]) / MB:.1f} MB at once, burst over in {wall:.1f} s")
    print(f"  answers: {dict(sorted(by_status.items()))}; refusals by code: {dict(codes)}; "
          f"429/503 without retry-after: {no_retry}")  # fmt: skip
    if ok:
        print(f"  forwarded answers took {ok[0]:.2f} – {ok[-1]:.2f} s (median {ok[len(ok) // 2]:.2f} s)")
    print("  audit rows (forwarded, tier, http status, error class): "
          + ", ".join(f"{k}: {v}" for k, v in sorted(collections.Counter(rows).items(), key=str)))  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--mb", type=float, default=3.0)
    parser.add_argument("--identifiers", action="store_true")
    parser.add_argument("--ref", action="append", default=[], help="git revisions to run (default: this tree)")
    parser.add_argument("--no-pin", action="store_true")
    args = parser.parse_args()
    print(machine())
    print(pin(not args.no_pin))
    size = int(args.mb * MB)
    bodies = []
    for i in range(args.n):
        prefix, suffix = chat_body(size, seed=i, identifiers=args.identifiers)
        bodies.append((prefix + str(10_000 + i) + suffix).encode())
    port = free_port()
    upstream = start_upstream(port)
    try:
        targets = [(f"tiergate@{ref}", worktree(ref)) for ref in args.ref] or [("this tree", None)]
        for name, source in targets:
            run_target(name, source, f"http://127.0.0.1:{port}/v1", bodies)
    finally:
        upstream.stop()
    print(f"\n({machine()} at the end)")


if __name__ == "__main__":
    main()
