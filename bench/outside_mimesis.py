"""People and firms of a second generator, mimesis (PyPI, MIT), in the carriers of the Faker
documents (issue 12): recall without any name list, German and French.

    .venv/bin/python -m pip install --target build/mimesis mimesis==22.2.0
    PYTHONPATH=build/mimesis .venv/bin/python bench/outside_mimesis.py
    PYTHONPATH=build/mimesis .venv/bin/python bench/outside_mimesis.py --seed 13   # other draws

mimesis ships its own locale data (given names, surnames, and real company names such as
"Deutsche Bahn" or "Air France", without legal forms), gathered by its contributors; none of it
went into the recognizers, nor did Faker's. Its firms are counted twice: as mimesis names them
("company") and as a bare surname in the company's place ("surname", the shape of a third of
Faker's German and half of its French companies). The carrier sentences are the Faker
documents' (``tests/tiers/faker_documents.py``), written here; only people and firms count.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mimesis import Address, Finance, Person  # noqa: E402 -- after the sys.path line: run as a script from the checkout
from mimesis.locales import Locale  # noqa: E402 -- after the sys.path line: run as a script from the checkout

from tests.tiers.faker_documents import _SLOT, CARRIERS  # noqa: E402 -- after the sys.path line: run as a script from the checkout
from tiers import Classifier, Content, Segment, TiersConfig  # noqa: E402 -- after the sys.path line: run as a script from the checkout

TITLES = {"de": ["Herr", "Frau", "Dr."], "fr": ["M.", "Mme", "Dr"]}
LOCALES = {"de": Locale.DE, "fr": Locale.FR}


def _document(
    template: str, lang: str, kind: str, gen: tuple[Person, Finance, Address], rnd: random.Random
) -> tuple[str, list[tuple[str, int, int, str]]]:
    """The filled template and its planted (family, start, end, value)."""
    person, finance, address = gen
    first = person.first_name()
    people = {"P": f"{first} {person.last_name()}", "P2": f"{person.first_name()} {person.last_name()}", "F": first}
    out: list[str] = []
    planted: list[tuple[str, int, int, str]] = []
    pos = length = 0
    for m in _SLOT.finditer(template):
        out.append(template[pos : m.start()])
        length += m.start() - pos
        slot = m.group(1)
        family = ""
        if slot in people:
            family, value = "PERSON", people[slot]
        elif slot == "TP":
            title = rnd.choice(TITLES[lang]) + " "
            out.append(title)
            length += len(title)
            family, value = "PERSON", f"{person.first_name()} {person.last_name()}"
        elif slot == "C":
            family, value = "ORGANIZATION", finance.company() if kind == "company" else person.last_name()
        elif slot == "AB":
            value = f"{address.address()}\n{address.postal_code()} {address.city()}"
        elif slot == "A":
            value = f"{address.address()}, {address.postal_code()} {address.city()}"
        else:
            value = "12.03.1971"
        if family:
            planted.append((family, length, length + len(value), value))
        out.append(value)
        length += len(value)
        pos = m.end()
    out.append(template[pos:])
    return "".join(out), planted


def main(per_carrier: int = 40, seed: int = 11) -> None:
    clf = Classifier(TiersConfig())
    hits: Counter[tuple[str, str]] = Counter()
    total: Counter[tuple[str, str]] = Counter()
    missed: dict[tuple[str, str], Counter[str]] = {}
    for lang, locale in LOCALES.items():
        gen = (Person(locale, seed=seed), Finance(locale, seed=seed), Address(locale, seed=seed))
        rnd = random.Random(seed)
        for kind in ("company", "surname"):
            for template in CARRIERS[lang]:
                for _ in range(per_carrier):
                    text, planted = _document(template, lang, kind, gen, rnd)
                    d = clf.classify(Content((Segment(("messages", 0, "content"), text),)))
                    covered = bytearray(len(text))
                    for f in d.findings:
                        covered[f.start : f.end] = b"\x01" * (f.end - f.start)
                    for family, start, end, value in planted:
                        if family == "PERSON" and kind == "surname":
                            continue  # people are counted once, in the first pass
                        key = ("PERSON" if family == "PERSON" else f"firm ({kind})", lang)
                        total[key] += 1
                        ok = all(covered[start:end])
                        hits[key] += ok
                        if not ok:
                            missed.setdefault(key, Counter())[value] += 1
    print(f"## mimesis people and firms ({per_carrier} per carrier, seed {seed})\n")
    print("| family | DE | FR |\n|---|---:|---:|")
    for family in ("PERSON", "firm (company)", "firm (surname)"):
        cells = [f"{hits[(family, lang)] / total[(family, lang)]:.1%} ({total[(family, lang)]})" for lang in LOCALES]
        print(f"| {family} | " + " | ".join(cells) + " |")
    for key, values in sorted(missed.items()):
        print(f"\nmissed {key} (first 12): " + "; ".join(v for v, _ in values.most_common(12)))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=11, help="mimesis's seed (11: the figure in bench/RESULTS.md)")
    ap.add_argument("--per-carrier", type=int, default=40, help="documents per carrier, language and kind")
    args = ap.parse_args()
    main(per_carrier=args.per_carrier, seed=args.seed)
