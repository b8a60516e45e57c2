"""Names after a preposition that is a surname's particle too, in German and French sentences;
surnames with particles in five more locales.

    .venv/bin/python bench/particles.py            # this tree
    (cd /tmp/wt-X && .venv/bin/python bench/particles.py)   # another commit's, from its worktree

Faker's de_DE and fr_FR given names and surnames (title case, and the surname in capitals as
forms write it) in sentences where a capitalised noun and "von" / "de" stand before the name
("Die Reklamation von {name} liegt vor.", "Lettre de {name}"), and a few where they do not ("Die
Freigabe durch {name} fehlt."). Counts the names a PERSON finding covers whole. Seeded: the same
sentences in every run. Faker ships in the test dependencies (MIT licence).

The second table: Faker's es_ES, es_MX, pt_BR, pt_PT and nl_NL names that hold a particle ("Bianca
de la Torre", "Paulo do Branco", "Jill van de Leemput"), and Spanish given names before "de los" /
"de las" and a surname (Faker writes none), in neutral English sentences, whole name in title case
and in capitals after a form's label.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from faker import Faker  # noqa: E402 -- after the sys.path line: run as a script from the checkout

from tiers import Classifier, Content, Segment, TiersConfig  # noqa: E402 -- after the sys.path line

SENTENCES = {
    "de_DE": [
        "Die Reklamation von {n} liegt vor.", "Wir haben die Anfrage von {n} erhalten.", "Der Bericht von {n} ist fertig.",
        "Im Auftrag von {n}", "Die Freigabe durch {n} fehlt.", "Das Angebot von {n} ist da.",
        "Laut Aussage von {n} war alles in Ordnung.",
    ],
    "fr_FR": [
        "La Demande de {n} est arrivée.", "Réclamation de {n} reçue hier.", "Lettre de {n}", "Selon {n}, le lot est conforme.",
        "Dossier de {n} validé.", "Facture de {n} à traiter.",
    ],
}  # fmt: skip
PER_CELL = 400
NEUTRAL = ["Please call {n} tomorrow.", "The complaint from {n} is attached.", "{n} approved the change.", "Owner: {n}"]
PARTICLES = frozenset("de del la los las do dos da di van der den".split())


def covered(clf: Classifier, text: str, value: str) -> bool:
    start = text.index(value)
    mask = bytearray(len(text))
    for f in clf.classify(Content((Segment(("m",), text),))).findings:
        if f.entity_type == "PERSON":
            mask[f.start : f.end] = b"\x01" * (f.end - f.start)
    return all(mask[start : start + len(value)])


def main() -> None:
    clf = Classifier(TiersConfig())
    rng = random.Random(11)
    print(f"tree: {ROOT}")
    print("| locale | surname | names covered | missed, first three |")
    print("|---|---|---:|---|")
    for locale, sentences in SENTENCES.items():
        fake = Faker(locale)
        fake.seed_instance(7)
        for capitals in (False, True):
            cases = []
            for _ in range(PER_CELL):
                surname = fake.last_name()
                name = f"{fake.first_name()} {surname.upper() if capitals else surname}"
                cases.append((rng.choice(sentences).format(n=name), name))
            _row(clf, locale, "in capitals" if capitals else "title case", cases)

    print()
    print("| names with particles | case | names covered | missed, first three |")
    print("|---|---|---:|---|")
    for locale in ("es_ES", "es_MX", "pt_BR", "pt_PT", "nl_NL", "es_ES de los / de las"):
        fake = Faker(locale.split()[0])
        fake.seed_instance(5)
        names: list[str] = []
        while len(names) < PER_CELL:
            if " " in locale:
                names.append(f"{fake.first_name()} {rng.choice(['de los', 'de las'])} {fake.last_name()}")
                continue
            # the particle is in the locale's name formats ("{first_name} de {last_name}"), not
            # its surnames; a title's abbreviation is left out ("Ing. Martha de la Garza")
            name = fake.name()
            if PARTICLES & set(name.split()) and "." not in name:
                names.append(name)
        titled = [(rng.choice(NEUTRAL).format(n=name), name) for name in names]
        _row(clf, locale, "title case", titled)
        _row(clf, locale, "capitals, after a label", [(f"Name: {name.upper()}", name.upper()) for name in names])


def _row(clf: Classifier, locale: str, label: str, cases: list[tuple[str, str]]) -> None:
    """One table row: how many of the (text, name) cases have the name covered whole."""
    missed = [text for text, name in cases if not covered(clf, text, name)]
    hits = len(cases) - len(missed)
    print(f"| {locale} | {label} | {hits}/{len(cases)} ({hits / len(cases):.1%}) | {'; '.join(missed[:3])} |")


if __name__ == "__main__":
    main()
