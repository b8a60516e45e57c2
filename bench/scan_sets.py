"""How many patterns an RE2 set of the scanner's first pass should hold (issue 15).

    .venv/bin/python bench/scan_sets.py              # sizes 8 16 32 64 96 128, ~2 minutes
    .venv/bin/python bench/scan_sets.py 32 64        # some sizes only

The scanner runs its fast patterns (those at or above ``min_score``) as RE2 sets of
``tiers.scanner._SET_SIZE`` patterns, one pass each, before any pattern runs on its own. Fewer,
bigger sets mean fewer passes, and bigger DFAs to build and keep. Per size this prints the CPU of
every set's pass over: 1 KB chunks of the installed packages' sources (varied real code, after a
warm-up round), the 1 KB chats of ``bench/overhead.py`` (warm), and three different 3 MB texts of
those sources, the first of them twice (a new big prompt, and the same one again); last, the same
for the scanner's own sets (its recognizers' ``OWN_SET`` patterns apart). A pass that gave up (DFA
out of memory: its sentinel missing) is counted.
"""

from __future__ import annotations

import json
import random
import sys
import sysconfig
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import re2  # noqa: E402 -- after the sys.path line above

from bench.overhead import Cell, bodies_for  # noqa: E402 -- after the sys.path line above
from tiers import Classifier, TiersConfig  # noqa: E402 -- after the sys.path line above
from tiers.scanner import _RE2_OPTIONS  # noqa: E402 -- after the sys.path line above


def _texts() -> tuple[list[bytes], list[bytes], list[bytes]]:
    files = sorted(Path(sysconfig.get_paths()["purelib"]).rglob("*.py"))
    rng = random.Random(2)
    rng.shuffle(files)
    chunks = []
    for f in files[:3000]:
        b = f.read_bytes()
        if len(b) > 1200:
            o = rng.randrange(len(b) - 1024)
            chunks.append(b[o : o + 1024])
    bigs = [b"".join(f.read_bytes() for f in files[lo : lo + 400])[:3_000_000] for lo in (3000, 3400, 3800)]
    chats = []
    for prefix, suffix in bodies_for(Cell(1024, 8), 16):
        messages = json.loads(prefix + "7" + suffix)["messages"]
        chats.append("\n".join(m["content"] for m in messages).encode())
    return chunks, chats, bigs


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [8, 16, 32, 64, 96, 128]
    scanner = Classifier(TiersConfig())._scanner
    fast = [c.fast.pattern for c in scanner._patterns if c.fast is not None and c.score >= scanner.min_score]
    chunks, chats, bigs = _texts()
    print(f"{len(fast)} fast patterns; {len(chunks)} chunks of 1 KB; 3 texts of 3 MB", flush=True)
    print("| patterns a set | sets | varied 1 KB | bench 1 KB | new 3 MB, same again, two more new | gave up |")
    print("|---:|---:|---:|---:|---|---:|")
    # the sizes in pattern order, then the scanner's own sets (sets of 32 and the OWN_SET ones)
    for size in [*sizes, 0]:
        if size:
            sets = []
            for start in range(0, len(fast), size):
                one = re2.Set.SearchSet(_RE2_OPTIONS)
                for pattern in fast[start : start + size]:
                    one.Add(pattern)
                sentinel = one.Add(r"\z")
                one.Compile()
                sets.append((one, sentinel))
        else:
            sets = [(one, sentinel) for one, _, sentinel in scanner._sets]
        gave = 0

        def passes(texts: list[bytes], rounds: int = 1) -> float:
            nonlocal gave
            t0 = time.process_time()
            for _ in range(rounds):
                for text in texts:
                    for one, sentinel in sets:
                        if sentinel not in (one.Match(text) or ()):
                            gave += 1
            return time.process_time() - t0

        passes(chunks)
        varied = passes(chunks) / len(chunks) * 1e6
        passes(chats, 50)
        bench = passes(chats, 200) / (200 * len(chats)) * 1e6
        big = [passes([bigs[0]]), passes([bigs[0]]), passes([bigs[1]]), passes([bigs[2]])]
        print(f"| {size or 'the scanner'} | {len(sets)} | {varied:.1f} µs | {bench:.1f} µs | "
              f"{' / '.join(f'{b:.2f} s' for b in big)} | {gave} |", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
