"""The scanner's first pass: RE2 sets against the database Vectorscan compiled ahead (tiers/prefilter.py).

    .venv/bin/python bench/prefilter.py                # ~3 minutes: one compile, then the texts
    .venv/bin/python bench/prefilter.py --texts 12

Two classifiers of the shipped defaults, one with the prefilter attached, classify + strip the same
texts, each text new to both (RE2 builds its DFA states as texts need them, so a text seen before is
cheaper: the case of a gateway is a new prompt), in alternating order, CPU time of this process.
Texts: ``--texts`` 3 MB texts of the installed packages' sources (different files each), 1 KB chunks
of them, the 1 KB chats of ``bench/overhead.py``, and ``bench/classify.py``'s generated 1 MB prose
and code. Asserts that both find the same in every text; prints medians and paired ratios.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import sysconfig
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.classify import make  # noqa: E402 -- after the sys.path line above
from bench.overhead import Cell, bodies_for  # noqa: E402 -- after the sys.path line above
from tiers import Classifier, Content, Segment, TiersConfig  # noqa: E402 -- after the sys.path line above
from tiers.prefilter import compile_members  # noqa: E402 -- after the sys.path line above


def _content(text: str) -> Content:
    return Content((Segment(("messages", 0, "content"), text),))


def _cpu(clf: Classifier, texts: list[str]) -> tuple[float, list[object]]:
    out: list[object] = []
    t0 = time.process_time()
    for text in texts:
        c = _content(text)
        d = clf.classify(c)
        assert not d.failed_closed, d.reasons
        clf.strip(c, d)
        out.append(d.findings)
    return time.process_time() - t0, out


def _pair(name: str, sets: Classifier, pre: Classifier, batches: list[list[str]], unit: float, label: str) -> None:
    a: list[float] = []
    b: list[float] = []
    for k, texts in enumerate(batches):
        order: list[tuple[list[float], Classifier]] = [(a, sets), (b, pre)]
        results = []
        for times, clf in order if k % 2 == 0 else order[::-1]:
            t, found = _cpu(clf, texts)
            times.append(t / len(texts) / unit)
            results.append(found)
        assert results[0] == results[1], f"{name}: the two first passes found different things"
    ratios = sorted(y / x for x, y in zip(a, b))
    print(
        f"| {name} | {statistics.median(a):.1f} {label} ({min(a):.1f} – {max(a):.1f}) "
        f"| {statistics.median(b):.1f} {label} ({min(b):.1f} – {max(b):.1f}) "
        f"| {statistics.median(ratios):.2f} ({ratios[0]:.2f} – {ratios[-1]:.2f}) |",
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--texts", type=int, default=8, help="new 3 MB texts of installed sources")
    args = ap.parse_args()
    sets, pre = Classifier(TiersConfig()), Classifier(TiersConfig())
    t0 = time.perf_counter()
    blob = compile_members(pre.prefilter_members)
    compile_s = time.perf_counter() - t0
    pre.attach_prefilter(pre.prefilter_key, blob)
    files = sorted(Path(sysconfig.get_paths()["purelib"]).rglob("*.py"))
    random.Random(7).shuffle(files)
    n = args.texts

    def big(k: int) -> str:
        return b"".join(f.read_bytes() for f in files[400 * k : 400 * (k + 1)])[:3_000_000].decode("utf-8", "replace")

    chunks: list[str] = []
    for f in files[400 * (n + 1) : 400 * (n + 1) + 2400]:
        data = f.read_bytes()
        if len(data) > 1200:
            at = random.Random(len(chunks)).randrange(len(data) - 1024)
            chunks.append(data[at : at + 1024].decode("utf-8", "ignore"))
    chats = []
    for prefix, suffix in bodies_for(Cell(1024, 8), 300):
        messages = json.loads(prefix + "7" + suffix)["messages"]
        chats.append("\n".join(m["content"] for m in messages))
    print(f"compile {compile_s:.1f} s, database {len(blob) / 1e6:.1f} MB; {len(pre.prefilter_members)} members")
    print("| texts | RE2 sets | prefilter | prefilter / sets, paired |")
    print("|---|---:|---:|---:|")
    for clf in (sets, pre):  # both start warm
        _cpu(clf, [big(n)])
    _pair("3 MB of installed sources, each new", sets, pre, [[big(k)] for k in range(n)], 1e-3, "ms")
    _pair("1 KB chunks of them (10 x 200)", sets, pre, [chunks[i::10][:200] for i in range(10)], 1e-6, "µs")
    _pair("1 KB chats of bench/overhead.py (10 x 30)", sets, pre, [chats[i::10] for i in range(10)], 1e-6, "µs")
    for kind in ("prose", "code+env"):
        texts = [make(kind, 1_000_000, seed=s)[0] for s in range(1, 7)]
        _pair(f"1 MB generated {kind} (bench/classify.py)", sets, pre, [[t] for t in texts], 1e-3, "ms")


if __name__ == "__main__":
    main()
