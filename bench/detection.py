"""Recall and precision of the list-free recognizers (people, companies, addresses, dates of
birth) and of the European identifiers, with the shipped defaults and no name list.

    .venv/bin/python bench/detection.py               # generated documents, clean corpus, code
    .venv/bin/python bench/detection.py --code-files 0  # without the Python standard library pass

* generated EN/DE/FR quality documents (tests/tiers/documents.py; names made up there, not
  taken from the gazetteer): a planted value counts as stripped when findings cover all of it;
  precision counts findings of the four families that overlap no planted value;
* the clean corpus (tests/tiers/corpus/clean): files forwarded byte-identical (no finding);
* the installed Python standard library's own sources (real code nobody here wrote), as a
  coding agent sends them: files with a finding of the four families, and the most frequent
  values, to be read by a person (author credits are real people's names, not false positives).
"""

from __future__ import annotations

import argparse
import glob
import random
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.tiers.documents import documents  # noqa: E402 -- after the sys.path line: run as a script from the checkout
from tiers import Classifier, Content, Segment, TiersConfig  # noqa: E402 -- after the sys.path line: run as a script from the checkout

FAMILIES = ("PERSON", "ORGANIZATION", "ADDRESS", "DATE_OF_BIRTH")


def _content(text: str) -> Content:
    return Content((Segment(("messages", 0, "content"), text),))


def generated(clf: Classifier, n: int) -> None:
    hits: Counter[tuple[str, str]] = Counter()
    total: Counter[tuple[str, str]] = Counter()
    tp: Counter[str] = Counter()
    fp: Counter[str] = Counter()
    missed: Counter[str] = Counter()
    docs = documents(n, seed=2026)
    for doc in docs:
        d = clf.classify(_content(doc.text))
        covered = bytearray(len(doc.text))
        for f in d.findings:
            covered[f.start : f.end] = b"\x01" * (f.end - f.start)
        for p in doc.planted:
            total[(p.family, doc.lang)] += 1
            ok = all(covered[p.start : p.end])
            hits[(p.family, doc.lang)] += ok
            if not ok:
                missed[p.value] += 1
        for f in d.findings:
            if f.entity_type in FAMILIES:
                overlap = any(f.start < p.end and p.start < f.end for p in doc.planted)
                (tp if overlap else fp)[f.entity_type] += 1
    print(f"## Generated documents ({len(docs)}: EN/DE/FR deviation reports, CAPA drafts, supplier e-mails)\n")
    print("| family | EN | DE | FR | precision |\n|---|---:|---:|---:|---:|")
    for fam in FAMILIES:
        cells = [f"{hits[(fam, lang)] / total[(fam, lang)]:.1%} ({total[(fam, lang)]})" for lang in ("en", "de", "fr")]
        prec = tp[fam] / (tp[fam] + fp[fam]) if tp[fam] + fp[fam] else float("nan")
        print(f"| {fam} | " + " | ".join(cells) + f" | {prec:.1%} |")
    print("\nmost missed:", ", ".join(f"{v} ({k})" for v, k in missed.most_common(8)) or "none", "\n")


def clean(clf: Classifier) -> None:
    files = sorted((ROOT / "tests" / "tiers" / "corpus" / "clean").glob("*.txt"))
    same = 0
    for path in files:
        text = path.read_text("utf-8")
        same += not clf.classify(_content(text)).findings
    print(f"## Clean corpus\n\n{same} of {len(files)} files forwarded byte-identical\n")


def code(clf: Classifier, n: int) -> None:
    files = sorted(glob.glob(f"{sys.base_prefix}/lib/python3*/**/*.py", recursive=True))
    random.Random(1).shuffle(files)
    values: Counter[tuple[str, str]] = Counter()
    flagged = read = chars = 0
    t0 = time.perf_counter()
    for path in files[:n]:
        try:
            text = Path(path).read_text("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        read += 1
        chars += len(text)
        found = [
            (f.entity_type, text[f.start : f.end])
            for f in clf.classify(_content(text)).findings
            if f.entity_type in FAMILIES
        ]
        flagged += bool(found)
        values.update(found)
    print(
        f"## Python standard library sources ({read} files, {chars / 1e6:.1f} M characters, {time.perf_counter() - t0:.1f} s)\n"
    )
    print(f"{flagged} files with a PERSON / ORGANIZATION / ADDRESS / DATE_OF_BIRTH finding; most frequent values:\n")
    for (fam, value), k in values.most_common(30):
        print(f"- {k} × {fam} `{value}`")
    print()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=40, help="documents per language and template")
    ap.add_argument("--code-files", type=int, default=300, help="standard-library files to scan")
    args = ap.parse_args()
    clf = Classifier(TiersConfig())
    generated(clf, args.docs)
    clean(clf)
    if args.code_files:
        code(clf, args.code_files)


if __name__ == "__main__":
    main()
