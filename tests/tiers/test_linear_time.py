"""Every shipped pattern runs in linear time: ~1 MB of adversarial text per recognizer family
classifies within a bound relative to the same size of plain prose (a ratio, not a clock limit),
grows linearly with its size, and no shipped pattern needs the backtracking fallback.

Every duration is the classifying thread's CPU time, measured in the same test as what it is
compared with: on a loaded machine wall time counts the waits for a core (at a load of 12 on two
cores the slowest family took about 10 s of wall time per MB, 0.5 s of CPU), CPU time only the
work, so ratios of it hold at any load and no bound depends on the machine's speed.

The adversarial texts are near-misses: they keep each family's patterns, validators and context
search busy without producing findings, whose cost (a few µs each) is linear by construction.
Before the RE2 rewrite of presidio's ``PAN (Low)`` pattern, the ``pan-letters-no-digits`` text
failed closed on its regex timeout at 50 KB (a 1.3 MB field blocked the loop for 24 s)."""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import pytest

from tiers import Classifier, TiersConfig, Tier
from tiers.recognizers import build_registry
from tiers.recognizers.birth_dates import DateOfBirthRecognizer
from tiers.recognizers.contact import PhoneNumberRecognizer
from tiers.recognizers.national import EsNifRecognizer
from tiers.scanner import Scanner

from .conftest import content

SIZE = 1_000_000
# The slowest family takes about 12 times plain prose's CPU time (prose: RE2's combined pass finds
# nothing to run); a quadratic pattern at this size takes thousands of times it.
RATIO = 40.0
# CPU-time noise of a few milliseconds (a garbage collection), not a speed: for families that
# take under 10 ms a quarter, four times a quarter is within it.
SLACK_S = 0.02

_PROSE_WORDS = (
    "the quality review of process data shows that our team will improve the plan before next "
    "quarter when results from each site are compared with last year and any open question"
).split()


def _fill(unit: str, size: int = SIZE) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def _prose() -> str:
    rnd = random.Random(3)
    out, n = [], 0
    while n < SIZE:
        line = " ".join(rnd.choice(_PROSE_WORDS) for _ in range(12)).capitalize() + ".\n"
        out.append(line)
        n += len(line)
    return "".join(out)[:SIZE]


# family -> adversarial unit repeated to ~1 MB: long runs of what each pattern's loops consume,
# near-misses that keep a candidate open, and context words that wake the weak patterns
ADVERSARIAL = {
    "digits-run": "1" * 997 + " ",
    "digit-groups-mixed-separators": "4111 ._/-\t",
    "digit-groups-newlines": "4111\n",
    "card-near-miss": "4111 1111 1111 111x ",
    "iban-prefixes": "DE89 de89 ",
    "iban-near-miss": "gb82 west 1234 5698 7654 3x ",
    "ssn-context": "SSN ",
    "ssn-context-digits": "SSN 1234 ",
    "ssn-underscored": "customer_ssn_",
    "national-ids-with-context": "pan nino sin AB12CD345 ",
    "pan-shaped-tokens": "pan a123bcdefg ",
    "pan-letters-no-digits": "pan abcdefghij ",  # presidio's look-aheads rescanned the line: 24 s
    "nino-shaped": "AB 12 34 56 ",
    "sin-shaped": "123-456-",
    "phone-plus": "+1 (",
    "phone-trunk": "0 0 0 0 ",
    "email-local-run": "a.",
    "email-at-run": "a@",
    "email-domain-run": "a@b.",
    "email-unicode": "пример.",
    "percent-encoded": "%40%2E%",
    "ipv4-octet-runs": "300.1.",
    "mac-colon-runs": "ab:cd:ef:gh:",
    "mac-dotted-runs": "abcd.ef01.",
    "hex-pair-digests": "19:dd:41:93:a1:a3:f5:91:4a:8e:9b:d0:",  # one run of pairs, a MB long
    "ipv6-colons": "::a",
    "secret-prefixes": "sk-ant- ghp_ eyJ AKIA ",
    "credential-url": "x://a:",
    "private-key": "-----BEGIN RSA PRIVATE KEY-----\nAAAA",
    "env-assignment": "API_KEY=",
    "markers": "strictly_confidential_",
    "marker-lines": "***\nConfidential stuff\n",
    "names": "maria gonzalezz, mariaa ",
    "capitalised-runs": "Quality Review Board Werk Stuttgart ",  # given-name check on each run
    "titles-without-names": "Herr Dr. der ",
    "role-words-without-names": "approved by the Kunde Audit ",
    "legal-form-runs": "Review Board GmbH-",
    # every cell of one endless line a candidate: each searched its whole line for its ends (10 s)
    "table-cells-one-line": "Acme,",
    "table-cells-semicolons": "Endpoint=a;",
    "company-column-rows": "Name;Firma\nAnna;Lehmann;",
    # names and firms on one endless line, each candidate judged for code around it: each read
    # its whole line (32 KB of names took 10 s); sparse enough to stay under the findings cap
    "names-on-one-line": "Dr Emy Noel " + "and so on " * 20,
    "firms-on-one-line": "bei der KUKA " + "und so weiter " * 15,
    # the numbers of code and mathematics (seventh group): each candidate reads a bounded window
    # around it (a literal's brackets, its line, its sentence, the rows of its table)
    # a sequence whose terms span magnitudes (its last a Luhn-valid 13 digits, no card): a
    # monotone list of card-length numbers would be cards (tiers/recognizers/_digits.py)
    "sequence-literals": "[1, 4, 108, 27648, 4031078400000]\n",
    "decimal-table-rows": "6 78498 78527.3994291277\n",
    "constants-near-context": "if TYPE_CHECKING:\n_HAUSNUMERO = 156384712\n",
    "option-tuples": "SOCKS_PASSWORD = 100, _OptType.bytes\n",
    "section-lists": "sections 5.2.4 and 6.2.2.3 and ",
    "format-examples": "starts with S and ends with a letter, e.g. S2740116C ",
    "term-table-rows": '    "Tai Tham": range(6688, 6832),\n    "Buginese": 1,\n',
    "eponyms": "the Kampe de Feriet\n# function and Denman-Beavers iteration ",
    "eponyms-named-twice": "the Held-Karp relaxation, the Held-Karp solution and Parsons-Moran ",
    "street-words": "rue de la Hauptstraße Main Street ",
    "birth-words": "born on the geboren am 12. ",
    "domain-ids": "lot batch no. capa- P/N ",
    "lookalikes": "\u0430\u0585\u200b\u13aa",
    "whitespace": " \t\n\r  ",
    # the fields of a Google credential file repeated on one line without braces: a search from
    # each field that runs on to the next brace is quadratic (a pattern once shipped took 20 s/MB)
    "credential-file-fields": '"private_key": "-----BEGIN PRIVATE KEY-----x" "client_email" ',
    "credential-file-adc-fields": '"client_secret": "a", "refresh_token": "b" ',
    # the same without a single blank (the words around a run of fields reach over all of it),
    # escaped, and runs between fields without their partner field
    "credential-file-no-blanks": 'auth_provider_x509_cert_urlA"private_key":"-----BEGIN PRIVATE KEY-----B',
    "credential-file-escaped": '\\"private_key\\": \\"-----BEGIN PRIVATE KEY-----x\\" \\"client_email\\" ',
    "credential-file-gap-run": "auth_provider_x509_cert_url x ",
    "credential-file-between": '"client_secret": "a", "x": "y", ',
    "credential-file-key-between": '"private_key": "-----BEGIN PRIVATE KEY-----x", "a": "b", ',
    # escaped pairs whose value never closes, and ones that close at every step
    "escaped-pair-open": '\\"password\\": \\"a\\\\',
    "escaped-pair-closed": '\\"token\\":\\"x\\" ',
    # mailboxes in brackets on one endless line, each asking whether its header holds messages'
    # ids: looked for within a header's reach, not back to the line's start
    "bracketed-mailboxes-one-line": "In-Reply-To: <jd@acme-corp.io> " + "and so on " * 20,
    # escapes of letters, decoded in runs, and a binary string's repr whose bytes are no text
    "letter-escapes": "Jos\\u00e9 Garc\\u00eda Journ\\xe9e \\xc3\\xa9cole \\u738b\\u5c0f ",
    "binary-repr-escapes": "ab\\x8f\\xc3\\x01L\\xc8.A\\xe9\\x00z",
}


def _cpu_seconds(clf: Classifier, text: str) -> float:
    """CPU time of this thread for one classification (``clf`` runs in the calling thread)."""
    t = time.thread_time()
    d = clf.classify(content(text))
    elapsed = time.thread_time() - t
    assert not d.failed_closed, d.reasons
    return elapsed


@pytest.fixture(scope="module")
def prose() -> str:
    return _prose()


@pytest.mark.parametrize("family", sorted(ADVERSARIAL))
def test_adversarial_megabyte_stays_linear(clf: Classifier, prose: str, family: str) -> None:
    """1 MB built to make one pattern family work hard takes at most RATIO x plain prose, and
    about four times what a quarter of it takes (at most ten; a quadratic pattern takes sixteen)."""
    unit = ADVERSARIAL[family]
    _cpu_seconds(clf, prose)  # warm the normalisation tables
    reference = min(_cpu_seconds(clf, prose) for _ in range(2))
    quarter = min(_cpu_seconds(clf, _fill(unit, SIZE // 4)) for _ in range(2))
    elapsed = min(_cpu_seconds(clf, _fill(unit)) for _ in range(2))
    assert elapsed <= RATIO * reference, (family, elapsed, reference)
    assert elapsed <= 10 * quarter + SLACK_S, (family, elapsed, quarter)


def test_no_shipped_pattern_needs_the_backtracking_fallback(config: TiersConfig) -> None:
    """Every shipped pattern compiles on RE2 (linear time); only user patterns may fall back."""
    scanner = Scanner(
        build_registry(config).recognizers, min_score=config.min_score, context_window=config.context_window
    )
    assert scanner.slow_patterns == ()


def test_a_users_weak_backtracking_pattern_runs_only_near_its_context(tmp_path) -> None:  # type: ignore[no-untyped-def]  # pytest's tmp_path fixture
    """A user pattern with a look-ahead that rescans the line, scored below ``min_score``, is
    searched only around its context words: one such word in 300 KB of candidates neither times
    out nor misses the match next to it."""
    rec = tmp_path / "recs.yaml"
    rec.write_text(
        "recognizers:\n"
        "  - name: Ticket\n    supported_language: en\n    supported_entity: TICKET\n"
        "    context: [ticket]\n"
        "    patterns:\n      - name: t\n        regex: '\\b(?=.*?[0-9]{4})[a-z]{10}\\b'\n        score: 0.1\n",
        "utf-8",
    )
    clf = Classifier(TiersConfig(recognizer_files=(rec,), regex_timeout_seconds=0.5))
    text = "abcdefghij " * 30_000 + "." * 200 + " ticket qwertyuiop 1234"
    d = clf.classify(content(text))
    assert not d.failed_closed, d.reasons
    assert [text[f.start : f.end] for f in d.findings if f.entity_type == "TICKET"] == ["qwertyuiop"]
    assert d.tier == Tier.INTERNAL


# A candidate's look around it reads a bounded window of its line, whatever the line's length: a
# prompt sent as one endless line (a JSON dump, a minified file) holds thousands of identifiers,
# and a look back to the line's start for each made 3 MB of them cost four times 1 MB.
_LOOKS: dict[str, tuple[Callable[[str, int, int], bool], str, str]] = {
    # (the recognizer's look, what precedes the candidate on its line, the candidate)
    "phone, a citation before it": (PhoneNumberRecognizer().reject_at, "abc def ", "(212) 555-0147"),
    "date of birth, a table cell": (DateOfBirthRecognizer().reject_at, "abc def, ", "14.03.1962"),
    "Spanish NIF, hex words on its line": (EsNifRecognizer().reject_at, "abc def ", "12345678A"),
}


@pytest.mark.parametrize("look", sorted(_LOOKS))
def test_a_candidates_look_around_reads_a_bounded_window(look: str) -> None:
    reject_at, filler, value = _LOOKS[look]

    def cost(line_length: int) -> tuple[float, bool]:
        text = _fill(filler, line_length) + value + " ghi"
        start = len(text) - len(value) - 4
        verdict = reject_at(text, start, start + len(value))
        t = time.thread_time()
        for _ in range(1000):
            reject_at(text, start, start + len(value))
        return time.thread_time() - t, verdict

    short, short_verdict = cost(4_000)
    long, long_verdict = cost(4_000_000)
    assert long <= 3 * short + SLACK_S, (look, long, short)
    assert long_verdict == short_verdict or look.startswith("date")  # an endless row is no table's
