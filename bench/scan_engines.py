"""Hyperscan (PyPI ``hyperscan``, BSD) against the scanner's RE2 sets, on 3 MB of real code.

    .venv/bin/python -m pip install --target build/hyperscan hyperscan
    .venv/bin/python bench/scan_engines.py            # ~1-2 minutes: the Hyperscan compile

The question of issue 12: would Hyperscan as the scanner's first pass (which patterns can match at
all) be faster than RE2's sets on one core, and does its scan release the GIL so that two scans use
two cores? Same patterns (every shipped pattern at or above ``min_score``, as the scanner's sets
hold them), Hyperscan in prefilter mode (it over-approximates what it cannot compile exactly, as a
first pass may), the text is the first 3 MB of SQLAlchemy's installed sources. Prints the compile
time, one scan, and two scans on two threads at once (ratio 1.0: both ran in parallel; 2.0: one
after the other).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "build" / "hyperscan"))

import re2  # noqa: E402 -- after the sys.path lines above

from tiers import TiersConfig  # noqa: E402 -- after the sys.path lines above
from tiers.recognizers.registry import build_registry  # noqa: E402 -- after the sys.path lines above


def _text() -> bytes:
    sp = next(p for p in (ROOT / ".venv" / "lib").glob("python3*/site-packages"))
    parts: list[str] = []
    size = 0
    for f in sorted((sp / "sqlalchemy").rglob("*.py")):
        t = f.read_text("utf-8")
        parts.append(t)
        size += len(t)
        if size > 3_000_000:
            break
    return "\n".join(parts)[:3_000_000].encode()


def _patterns() -> list[str]:
    cfg = TiersConfig()
    out: list[str] = []
    for rec in build_registry(cfg).recognizers:
        out.extend(p.regex for p in getattr(rec, "patterns", None) or [] if p.score >= cfg.min_score)
    return out


def _twice(run: Callable[[int], None]) -> float:
    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - t0


def main() -> None:
    data = _text()
    patterns = _patterns()
    opts = re2.Options()
    opts.max_mem = 64 << 20
    sets = []
    for start in range(0, len(patterns), 32):
        one = re2.Set.SearchSet(opts)
        for p in patterns[start : start + 32]:
            one.Add(p)
        one.Compile()
        sets.append(one)

    def re2_scan(_: int) -> None:
        for one in sets:
            one.Match(data)

    re2_scan(0)
    t0 = time.perf_counter()
    re2_scan(0)
    r1 = time.perf_counter() - t0
    r2 = _twice(re2_scan)
    print(
        f"RE2 sets of 32 ({len(patterns)} patterns): one scan {r1 * 1e3:.1f} ms; two threads {r2 * 1e3:.1f} ms "
        f"(ratio {r2 / r1:.2f})"
    )
    try:
        import hyperscan
    except ImportError:
        print("hyperscan is not installed (see the module docstring)")
        return
    flags = hyperscan.HS_FLAG_PREFILTER | hyperscan.HS_FLAG_UTF8 | hyperscan.HS_FLAG_SINGLEMATCH
    usable = []
    for p in patterns:
        try:
            hyperscan.Database().compile(expressions=[p.encode()], ids=[0], elements=1, flags=[flags])
            usable.append(p)
        except hyperscan.error:  # a construct Hyperscan rejects even as a prefilter
            continue
    db = hyperscan.Database()
    t0 = time.perf_counter()
    db.compile(
        expressions=[p.encode() for p in usable],
        ids=list(range(len(usable))),
        elements=len(usable),
        flags=[flags] * len(usable),
    )
    compile_s = time.perf_counter() - t0
    scratch = [hyperscan.Scratch(db) for _ in range(2)]
    seen: set[int] = set()

    def on_match(i: int, _from: int, _to: int, _flags: int, _ctx: object) -> None:
        seen.add(i)

    def hs_scan(k: int) -> None:
        db.scan(data, match_event_handler=on_match, scratch=scratch[k])

    hs_scan(0)
    t0 = time.perf_counter()
    hs_scan(0)
    h1 = time.perf_counter() - t0
    h2 = _twice(hs_scan)
    print(
        f"Hyperscan {hyperscan.__version__} ({len(usable)} of {len(patterns)} patterns compile, prefilter): "
        f"compile {compile_s:.1f} s; one scan {h1 * 1e3:.1f} ms; two threads {h2 * 1e3:.1f} ms (ratio {h2 / h1:.2f})"
    )


if __name__ == "__main__":
    main()
