"""Recall and precision of the secret recognizers per family, on this project's own corpora
(``tests/tiers/secret_corpus.py``, tokens generated from the provider table; nothing copied).

Families:
- provider tokens in each carrier (``key:``, prose, ``Bearer``, quoted, unquoted, ``:=``, XML …);
- provider tokens by shape alone (on a line of their own);
- credential assignments in each syntax, with generated values (whole value stripped counts);
- the same syntaxes with machine-made values of one alphabet each (letters only, hex, base64 …);
- known negatives: placeholders in every syntax, code that names credentials, the clean corpus.

Recall: planted values covered whole by SECRET findings. Precision: SECRET findings that overlap a
planted value, over all SECRET findings (the known negatives only add to the denominator).

``--escaped``: the assignment values also get percent-escapes (``%22``, ``%42`` …) at random
places, to compare against the plain figures. ``--cost``: what reading the text a second time
with its escapes as written (the secret recognizers, ``Classifier._literal_scanner``) costs on
``bench/classify.py``'s texts with one ``%20`` in them: the same classifier with that reading
and with an empty one, interleaved ABBA, CPU time.

    .venv/bin/python bench/secret_recall.py [--values N] [--escaped] [--cost]
"""

from __future__ import annotations

import argparse
import random
import statistics
import string
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.tiers.secret_corpus import CARRIERS, CLEAN_CODE, PLACEHOLDERS, SYNTAXES
from tiers import Classifier, Content, Segment, TiersConfig
from tiers.recognizers.secrets import provider_formats

_ALPHABET = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789!%^*_+.~=-@#&;:/"


def _spans(clf: Classifier, text: str) -> list[tuple[int, int]]:
    d = clf.classify(Content((Segment(("m",), text),)))
    return sorted((f.start, f.end) for f in d.findings if f.entity_type == "SECRET")


def _covered(spans: list[tuple[int, int]], s: int, e: int) -> bool:
    pos = s
    for a, b in spans:
        if a <= pos < b:
            pos = b
    return pos >= e


class Tally:
    def __init__(self) -> None:
        self.planted = self.found = self.findings = self.true_findings = 0

    def add(self, spans: list[tuple[int, int]], planted: tuple[int, int] | None) -> None:
        self.findings += len(spans)
        if planted is None:
            return
        s, e = planted
        self.planted += 1
        self.found += _covered(spans, s, e)
        self.true_findings += sum(1 for a, b in spans if a < e and b > s)

    def row(self, name: str) -> str:
        recall = f"{self.found / self.planted:.3f} ({self.found}/{self.planted})" if self.planted else "–"
        precision = f"{self.true_findings / self.findings:.3f}" if self.findings else "1.000 (no findings)"
        false = self.findings - self.true_findings
        return f"| {name} | {recall} | {precision} | {false} |"


_ESCAPES = ["%22", "%27", "%42", "%25", "%3D", "%26", "%3B", "%23", "%40", "%2F", "%20", "%7B", "%3C"]


def _value(rnd: random.Random, forbidden: str, escaped: bool = False) -> str:
    chars = [c for c in _ALPHABET if c not in forbidden]
    pieces = [rnd.choice(chars) for _ in range(rnd.randint(8, 32))]
    if escaped:
        for _ in range(rnd.randint(1, 3)):
            pieces.insert(rnd.randint(0, len(pieces)), rnd.choice(_ESCAPES))
    return rnd.choice("abcdefghk") + "".join(pieces) + rnd.choice("23456789")


# machine-made values as generators write them: one alphabet each, no prefix. Letters alone are
# a token too (a 20-character draw of letters and digits holds no digit 3 % of the time, and some
# generators draw letters only); they read like a name of code unless judged as random letters.
_MACHINE_ALPHABETS = {
    "letters only": string.ascii_letters,
    "letters and digits": string.ascii_letters + string.digits,
    "hex": "0123456789abcdef",
    "base64": string.ascii_letters + string.digits + "+/",
    "base64url": string.ascii_letters + string.digits + "-_",
}


def _machine_value(rnd: random.Random, alphabet: str) -> str:
    return "".join(rnd.choice(alphabet) for _ in range(rnd.randint(16, 40)))


def cost(clf: Classifier) -> None:
    """CPU time of classify with and without the literal reading, on texts that trigger it."""
    from bench.classify import make
    from tiers.scanner import Scanner

    with_literal = clf._literal_scanner
    without = Scanner([], min_score=clf.config.min_score, context_window=clf.config.context_window)
    print("| text | size | literal reading off | on | ratio (spread) |")
    print("|---|---:|---:|---:|---:|")
    for kind in ("prose", "code+env"):
        for size, rounds in ((1_000, 400), (100_000, 20), (1_000_000, 4)):
            text, _ = make(kind, size)
            text = text[: len(text) // 2] + " a%20b " + text[len(text) // 2 :]
            content = Content((Segment(("m",), text),))
            times: dict[bool, list[float]] = {False: [], True: []}
            ratios = []
            for r in range(rounds):
                pair = {}
                for on in (False, True) if r % 2 == 0 else (True, False):  # ABBA
                    clf._literal_scanner = with_literal if on else without
                    t = time.process_time()
                    clf.classify(content)
                    pair[on] = time.process_time() - t
                    times[on].append(pair[on])
                ratios.append(pair[True] / pair[False])
            clf._literal_scanner = with_literal
            q = statistics.quantiles(ratios, n=4)
            off, on_ = statistics.median(times[False]) * 1e3, statistics.median(times[True]) * 1e3
            print(
                f"| {kind} | {size:,} | {off:.2f} ms | {on_:.2f} ms | "
                f"{statistics.median(ratios):.2f}x ({q[0]:.2f}–{q[2]:.2f}) |"
            )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--values", type=int, default=20, help="generated values per syntax")
    ap.add_argument("--escaped", action="store_true", help="percent-escapes in the assignment values")
    ap.add_argument("--cost", action="store_true", help="only the cost of the literal reading")
    args = ap.parse_args()
    clf = Classifier(TiersConfig())
    if args.cost:
        cost(clf)
        return
    rnd = random.Random(12)
    fams: dict[str, Tally] = defaultdict(Tally)
    formats = provider_formats()
    for i, fmt in enumerate(formats):
        token = fmt.shape.sample(seed=1000 + i)
        for name, template in CARRIERS:
            text = template.format(t=token)
            s = text.index(token)
            fams[f"provider tokens, carrier {name}"].add(_spans(clf, text), (s, s + len(token)))
        fams["provider tokens, by shape alone"].add(_spans(clf, token), (0, len(token)))
    for name, template, forbidden in SYNTAXES:
        for _ in range(args.values):
            v = _value(rnd, forbidden, args.escaped)
            text = template.format(v=v)
            s = text.index(v)
            fams["credential assignments (all syntaxes)"].add(_spans(clf, text), (s, s + len(v)))
            fams[f"syntax: {name}"].add(_spans(clf, text), (s, s + len(v)))
        for kind, alphabet in _MACHINE_ALPHABETS.items():
            if any(c in forbidden for c in alphabet):
                continue
            for _ in range(args.values):
                v = _machine_value(rnd, alphabet)
                text = template.format(v=v)
                s = text.index(v)
                fams[f"credential assignments, machine-made values: {kind}"].add(_spans(clf, text), (s, s + len(v)))
        for p in PLACEHOLDERS:
            if any(c in forbidden for c in p):
                continue
            text = template.format(v=p)
            s = text.index(p)
            fams["known negatives: placeholders x syntaxes"].add(
                [sp for sp in _spans(clf, text) if sp[0] < s + len(p) and sp[1] > s], None
            )
    for line in CLEAN_CODE:
        fams["known negatives: code naming credentials"].add(_spans(clf, line), None)
    for path in sorted((Path(__file__).resolve().parents[1] / "tests/tiers/corpus/clean").glob("*.txt")):
        fams["known negatives: clean corpus files"].add(_spans(clf, path.read_text("utf-8")), None)
    print(f"{len({f.provider for f in formats})} providers, {len(formats)} formats, {len(SYNTAXES)} syntaxes\n")
    print("| family | recall | precision | false findings |")
    print("|---|---|---|---:|")
    for name in sorted(fams, key=lambda n: (n.startswith("syntax:"), n)):
        print(fams[name].row(name))


if __name__ == "__main__":
    main()
