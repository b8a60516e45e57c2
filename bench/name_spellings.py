"""Names as they are spelt where the name patterns were not looking (issue 12): a middle initial
that is a word alone ("A.", "I.") or has no full stop (exports write "Maria E Lopez"), and
accented names written with escapes, as JSON written with ``ensure_ascii`` (Python's
``json.dumps`` default) spells them.

    .venv/bin/python bench/name_spellings.py                     # this tree
    .venv/bin/python bench/name_spellings.py --source /tmp/wt-X  # another tree, same draws

Names come from Faker (MIT; its locale providers), seeded; a name counts when one PERSON finding
covers it whole. Counts, not times.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_CARRIERS = ("From: {n} <x@acme-corp.com>", "Signed by {n} on 3 March.", "Contact person: {n}", "Dear {n},")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", type=Path, default=ROOT, help="the tree to measure")
    ap.add_argument("--n", type=int, default=400, help="names per row")
    args = ap.parse_args()
    sys.path.insert(0, str(args.source.resolve()))
    from faker import Faker

    from tiers.classifier import Classifier
    from tiers.config import TiersConfig
    from tiers.content import Content, Segment

    clf = Classifier(TiersConfig())

    def covered(text: str, value: str) -> bool:
        s = text.index(value)
        d = clf.classify(Content((Segment(("m",), text),)))
        return any(f.entity_type == "PERSON" and f.start <= s and f.end >= s + len(value) for f in d.findings)

    print(f"tree: {args.source}\n\n| names | found whole |\n|---|---:|")
    rnd = random.Random(7)
    fake = Faker("en_US")
    fake.seed_instance(7)
    rows = (
        ("en_US, middle initial A. or I.", "AI", "."),
        ("en_US, other middle initials", "BCDEFGHJKLMNOPRSTW", "."),
        ("en_US, middle initial without its full stop", "ABCDEFGHIJKLMNOPRSTW", ""),
    )
    for label, letters, dot in rows:
        names = [f"{fake.first_name()} {rnd.choice(letters)}{dot} {fake.last_name()}" for _ in range(args.n)]
        hit = sum(covered(rnd.choice(_CARRIERS).format(n=n), n) for n in names)
        print(f"| {label} | {hit} / {len(names)} |")
    for locale in ("de_DE", "fr_FR", "es_ES", "pl_PL"):
        fake = Faker(locale)
        fake.seed_instance(11)
        written: list[str] = []
        while len(written) < args.n:
            name = f"{fake.first_name()} {fake.last_name()}"
            if not name.isascii():  # only names with a letter JSON escapes
                written.append(json.dumps(name)[1:-1])
        hit = sum(covered('{"customer": "%s", "status": "open"}' % w, w) for w in written)
        print(f"| {locale}, accented, JSON-escaped (`Jos\\u00e9`) | {hit} / {len(written)} |")


if __name__ == "__main__":
    main()
