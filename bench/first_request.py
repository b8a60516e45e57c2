"""What start-up work moved to first use costs the request that meets it (issue 15).

    .venv/bin/python bench/first_request.py --ref HEAD~1 --ref HEAD --runs 5

Each run is a fresh process per target (a ``git archive`` tree, ABBA order): it builds the
default classifier, then classifies three requests in turn and reports the CPU milliseconds of
each: a plain chat message, then the first one whose percent-escapes decode (the literal
reading's scanner is compiled on first use), then that message again, then two German messages
with a firm after "von der" / "bei der" (where the feminine-noun list is read if start-up did not
read it); each German firm must be found and feminine nouns there left alone, or the run fails. Bytecode is cached as in
``bench/startup.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from startup import worktree

PY = sys.executable

_CHILD = """
import json, time
from tiers import Classifier, Content, Segment
P = time.process_time
def req(text):
    return Content((Segment(("messages", 0, "content"), text),))
t = P(); clf = Classifier(clock=time.thread_time); build = P() - t
out = {"build": build}
for name, text in [
    ("plain", "Please review the deploy notes for Maria Gonzalez before Friday."),
    ("escaped, first", 'config: DB_PASSWORD="Hq7z%22Pw2kQ" and url=https://x.test/a%20b'),
    ("escaped, again", 'config: DB_PASSWORD="Hq7z%22Pw2kQ" and url=https://x.test/a%20b'),
    ("German firm, first", "Wie besprochen kommt Frau Sontag von der Bolander am Dienstag ins Werk."),
    ("German firm, again", "Beim Audit stellte Herr Seifert fest, dass bei der Lehmann die Nachweise fehlten."),
]:
    t = P(); d = clf.classify(req(text)); out[name] = P() - t
    if name.startswith("German"):  # the firm after "von der" / "bei der" is found, the noun list read
        orgs = [text[f.start:f.end] for f in d.findings if f.entity_type == "ORGANIZATION"]
        assert orgs in (["Bolander"], ["Lehmann"]), orgs
d = clf.classify(req("Die Ergebnisse bei der Prüfung und von der Bahn liegen vor."))
assert not [f for f in d.findings if f.entity_type == "ORGANIZATION"]  # feminine nouns stay
print(json.dumps(out))
"""


def one(source: Path, pycache: Path) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(source), "PYTHONPYCACHEPREFIX": str(pycache)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    out = subprocess.run([PY, "-c", _CHILD], env=env, capture_output=True, text=True, check=True, cwd=source)
    return dict(json.loads(out.stdout.splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", action="append", required=True, help="git revision; repeatable")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}")
    pycache = Path(tempfile.mkdtemp(prefix="tg-pycache-"))
    targets = {ref: worktree(ref) for ref in args.ref}
    for source in targets.values():
        one(source, pycache)  # unmeasured: fills the bytecode cache
    rows: dict[str, list[dict[str, float]]] = {ref: [] for ref in targets}
    for i in range(args.runs):
        order = list(targets.items())
        for ref, source in order if i % 2 == 0 else order[::-1]:
            rows[ref].append(one(source, pycache))
    print(f"load average after {os.getloadavg()[0]:.2f}")
    keys = list(next(iter(rows.values()))[0])
    print("| target | " + " | ".join(f"{k} CPU ms" for k in keys) + " |")
    print("|---|" + "---|" * len(keys))
    for ref, runs in rows.items():
        cells = []
        for k in keys:
            xs = [r[k] * 1000 for r in runs]
            cells.append(f"{statistics.median(xs):.0f} ({min(xs):.0f}–{max(xs):.0f})")
        print(f"| {ref} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
