"""The first pass compiled ahead (tiers/prefilter.py) only chooses which patterns run: a scan with it
finds exactly what running every pattern finds, and no member that matches a text is left out.

The reference is the one of ``test_scanner_sets.py``: the same scanner with every pattern turned on
and no first pass. Vectorscan's prefilter mode promises to over-approximate; these properties check
that promise, and ``widen``'s, on the shipped patterns themselves.
"""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import re2
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.tiers.test_scanner_sets import _pieces, _scan, _tables, _texts
from tiers import TiersConfig
from tiers.prefilter import (
    _HEAD,
    FirstPass,
    FirstPassChoice,
    Prefilter,
    PrefilterError,
    _features,
    available,
    compile_members,
    platform,
    widen,
)
from tiers.normalize import normalize_text
from tiers.recognizers import build_registry
from tiers.scanner import Scanner, _halves, _middle

pytestmark = pytest.mark.skipif(not available(), reason="no hyperscan wheel for this platform")


@pytest.fixture(scope="module")
def scanners(config: TiersConfig) -> tuple[Scanner, Scanner, bytes]:
    """(a scanner whose first pass is the prefilter, the same running every pattern, the database)."""
    scanner = Scanner(
        build_registry(config).recognizers, min_score=config.min_score, context_window=config.context_window
    )
    every = copy.copy(scanner)
    every._sets = []
    every._gate = None
    every._weak_bits = 0
    every._base_mask = bytearray(b"\x01") * len(scanner._base_mask)
    blob = compile_members(scanner.prefilter_members)
    scanner.attach_prefilter(scanner.prefilter_key, blob)
    # no way back to the sets: a scan that took them would hide a prefilter's miss
    scanner._choice = _Always()
    scanner._sets = []
    scanner._gate = None
    return scanner, every, blob


class _Always(FirstPassChoice):
    def choose(self, size: int) -> FirstPass:
        return FirstPass(prefilter=True)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_texts)
def test_prefiltered_scans_keep_every_finding(scanners: tuple[Scanner, Scanner, bytes], text: str) -> None:
    scanner, every, _ = scanners
    assert scanner.prefiltered
    assert _scan(scanner, text) == _scan(every, text)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_tables())
def test_required_words_still_gate_their_patterns(scanners: tuple[Scanner, Scanner, bytes], text: str) -> None:
    scanner, every, _ = scanners
    assert _scan(scanner, text) == _scan(every, text)


# Pieces glued by letters outside ASCII: RE2's \b, \w and \d are ASCII, so "é4556 …" starts a
# card there; a prefilter compiled with Unicode word characters would not report it.
# The vertical tab is white space to Vectorscan, not to RE2 (so "\\S" differs); letters of Unicode
# newer than Vectorscan's tables (U+9FCD, Cherokee small letters) are letters to RE2 alone.
_GLUE = ["é", "ß", "Ω", "ж", "\u00a0", " ", "\x0b", "鿏", "ᏸ", "\u0560"]
_glued = st.lists(st.tuples(_pieces, st.sampled_from(_GLUE)), min_size=1, max_size=12).map(
    lambda parts: "".join(p + g for p, g in parts)
)


@pytest.mark.parametrize(
    "text",
    [
        "contact 鿏@gmail.com please",
        "mail 王鿏@qq.com",
        "ᏸ@acme.io",
        "mail jane@acme.ᏸᏸ",
        "DATABASE_URL=postgres://admin:hunter2\x0bXy9@db.acme.io:5432/app",
        "db.acme.io:5432:app\x0bdb:admin:S3cr3tPassw0rd",
        "mysql -u root -pS3cr3t\x0bx",
    ],
)
def test_what_vectorscan_reads_otherwise_is_still_found(scanners: tuple[Scanner, Scanner, bytes], text: str) -> None:
    """Found in a review: Unicode properties and the vertical tab, where the engines disagree."""
    scanner, every, _ = scanners
    assert _scan(scanner, text) == _scan(every, text) != []


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_glued)
def test_letters_outside_ascii_are_no_word_characters(scanners: tuple[Scanner, Scanner, bytes], text: str) -> None:
    scanner, every, _ = scanners
    assert _scan(scanner, text) == _scan(every, text)


def _generable(pattern: str) -> bool:
    try:
        re.compile(pattern)
        st.from_regex(pattern, fullmatch=True).validate()
    except Exception:  # noqa: BLE001 -- a construct Python's re or hypothesis cannot draw from
        return False
    return True


@pytest.fixture(scope="module")
def members(scanners: tuple[Scanner, Scanner, bytes]) -> list[tuple[int, str]]:
    found = [(i, p) for i, p in enumerate(scanners[0].prefilter_members) if _generable(p)]
    assert len(found) >= len(scanners[0].prefilter_members) // 3  # most are drawn from
    return found


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_member_that_matches_is_reported(
    scanners: tuple[Scanner, Scanner, bytes], members: list[tuple[int, str]], data: st.DataObject
) -> None:
    """Vectorscan's promise, on the shipped patterns: a text that a member matches in RE2 (drawn
    from the member itself, with prose around it) has that member in the prefilter's answer."""
    scanner, _, blob = scanners
    index, pattern = data.draw(st.sampled_from(members))
    value = data.draw(st.from_regex(pattern, fullmatch=True))
    text = (
        data.draw(st.sampled_from(["", "note: ", "x\n", "Total 42 "]))
        + value
        + data.draw(st.sampled_from(["", " done", "\n", ".", "é"]))
    )
    try:
        subject = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: never in a normalised prompt
        assume(False)
    assume(re2.compile(pattern).search(subject.decode("utf-8")) is not None)
    pre = Prefilter(blob, len(scanner.prefilter_members), scanner.prefilter_key)
    assert index in pre.matching(subject) or index in pre.always


# -- widen ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "widened"),
    [
        ("a{1,20}", "a{1,}"),
        ("a{2,8}b{3}", "a{2,8}b{3}"),
        ("[{1,20}]x", "[{1,20}]x"),  # braces in a class are characters
        (r"\{1,20}", r"\{1,20}"),  # an escaped brace is a character
        (r"\Qa{1,20}\E", r"\Qa{1,20}\E"),  # so is all of a quoted run
        ("x{1,٣٣}y", "x{1,٣٣}y"),  # digits of other scripts count nothing
        (r"[]{1,20}]{0,60}", r"[\]{1,20}]{0,}"),  # "]" first in a class is a character
        (r"[[:alpha:]{]{2,30}", r"[[:alpha:]{]{2,}"),
        (r"(?m)^[ \t]*key{1,256}?", r"(?m)^[ \t]*key{1,}?"),
        # RE2's \s is [\t\n\f\r ]: Vectorscan's \S and [^\s] would leave out the vertical tab
        (r"\S+@", r"[^\t\n\f\r ]+@"),
        (r"[^\s:@]{1,30}", r"[^\t\n\f\r :@]{1,}"),
        (r"[\S-]", r"[\x0b\S-]"),
        (r"[]\S]", r"[\x0b\]\S]"),
        (r"[^\S]", r"[^\S]"),
    ],
)
def test_widen_makes_patterns_no_narrower(pattern: str, widened: str) -> None:
    assert widen(pattern) == widened


@pytest.mark.parametrize("pattern", [r"\p{L}{1,64}", r"[\p{L}\p{N}]+@", r"\PL", r"[^\P{Greek}]"])
def test_unicode_properties_are_left_to_re2(pattern: str) -> None:
    """Vectorscan's Unicode tables are older than RE2's: such a member runs on every text."""
    assert widen(pattern) is None


def test_widen_without_anchors_drops_carets_outside_classes() -> None:
    assert widen(r"(?m)\b(?:a|(?im:^b))[^^x]{1,30}", anchors=False) == r"(?m)\b(?:a|(?im:b))[^^x]{1,}"


def test_members_left_to_re2_run_on_every_text(scanners: tuple[Scanner, Scanner, bytes]) -> None:
    scanner, _, _ = scanners
    assert scanner._prefilter is not None
    left = {i for i, p in enumerate(scanner.prefilter_members) if widen(p) is None}
    assert left and left <= set(scanner._prefilter.always)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_widened_patterns_match_wherever_theirs_do(members: list[tuple[int, str]], data: st.DataObject) -> None:
    _, pattern = data.draw(st.sampled_from(members))
    text = data.draw(st.from_regex(pattern)) + data.draw(st.sampled_from(["", "\x0b", "\n", "鿏"]))
    assume(re2.search(pattern, text) is not None)
    for widened in (widen(pattern), widen(pattern, anchors=False)):
        assert widened is not None and re2.search(widened, text) is not None


# -- attaching ------------------------------------------------------------------------------------


def test_a_database_of_other_patterns_is_refused_and_changes_nothing(config: TiersConfig) -> None:
    scanner = Scanner(
        build_registry(config).recognizers, min_score=config.min_score, context_window=config.context_window
    )
    members = list(scanner.prefilter_members)
    key = scanner.prefilter_key
    other = compile_members([*members, "zzzq"])  # a valid database, of other patterns
    with pytest.raises(PrefilterError):
        scanner.attach_prefilter(key, other)  # its head names its own key
    with pytest.raises(PrefilterError):
        scanner.attach_prefilter(key[::-1], other)
    head = _HEAD.match(other)
    assert head is not None
    body = other[head.end() :]
    for blob in (
        b"tiergate-prefilter\n" + key.encode() + b"\n\n" + b"\x00" * 64,  # no database after the head
        b"not a database",
        b"tiergate-prefilter\n" + key.encode() + b"\n" + b"[" * 100_000 + b"\n" + body,
        b"tiergate-prefilter\n" + key.encode() + b"\n" + str(len(members)).encode() + b"\n" + body,
    ):
        with pytest.raises(PrefilterError):
            scanner.attach_prefilter(key, blob)
    assert not scanner.prefiltered
    # a head forged onto the database of more members: a member past the patterns' is refused
    # in the scan, which then takes the RE2 sets' answer
    scanner.attach_prefilter(key, b"tiergate-prefilter\n" + key.encode() + b"\n\n" + body)
    pre = scanner._prefilter
    assert pre is not None
    with pytest.raises(PrefilterError):
        pre.matching(b"zzzq")
    assert [h.entity for h in scanner.scan("mail jane.doe@acme.io zzzq", lambda: None)] == ["EMAIL_ADDRESS"]


_KEY_OF_A_CONFIG = """
import json, sys
from pathlib import Path
from tiers import Classifier, TiersConfig
from tiers.config import DomainPattern
folder = Path(sys.argv[1])
config = TiersConfig(
    internal_domains=("corp.example.com", "int.example.net", "ab.example.org", "zz.example.org"),
    extra_markers=("Project Falcon", "Blue Owl", "Red Owl", "Top Secret Stuff"),
    domain_patterns=(DomainPattern(entity="BATCH_ID", pattern=r"\\bB-[0-9]{6}\\b"),),
    customer_lists=(folder / "customers.txt",), employee_lists=(folder / "employees.txt",),
)
scanner = Classifier(config)
print(json.dumps([scanner.prefilter_key, list(scanner.prefilter_members)]))
"""


@pytest.mark.parametrize(
    ("info", "name"),
    [
        ("Version: 5.4.12 Features:  Mode: BLOCK", "generic"),
        ("Version: 5.4.12 Features: AVX2 Mode: BLOCK", "avx2"),
        ("Version: 5.4.12 Features: AVX2 AVX512 AVX512VBMI Mode: BLOCK", "avx2-avx512-avx512vbmi"),
        ("something else", "generic"),
    ],
)
def test_the_platform_names_the_instruction_sets_a_database_needs(info: str, name: str) -> None:
    assert _features(info) == name
    assert re.fullmatch(r"[a-z0-9_-]+", platform())  # this machine's, fit for a file name


def test_the_patterns_and_their_key_are_the_same_in_every_process(tmp_path: Path) -> None:
    """The database is kept on disk under the key of the patterns, to be attached at the next
    start: a key that changed with the process's string hashing (phrases of one length joined
    in a set's order) was never found again, and every start compiled for seconds."""
    (tmp_path / "customers.txt").write_text("Acme Widgets GmbH\nBlue Harbor Ltd\nGreen Fjord AS\n")
    (tmp_path / "employees.txt").write_text("Jane Doe\nJohn Roe\nMary Major\n")
    seen = set()
    for seed in ("0", "1", "2", "3"):
        done = subprocess.run(
            [sys.executable, "-c", _KEY_OF_A_CONFIG, str(tmp_path)],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        )
        key, members = json.loads(done.stdout)
        seen.add((key, tuple(members)))
    assert len(seen) == 1


def test_threads_scan_at_once_with_their_own_scratch(scanners: tuple[Scanner, Scanner, bytes]) -> None:
    scanner, every, _ = scanners
    texts = [
        f"mail ops{i}@acme-{i}.example.org, card 4556 0172 8390 6414, token ghp_4f9Xk2LmQ8rT1vW6yZ0aB3cD5eF7gH9iJ2kL "
        * (i + 1)
        for i in range(8)
    ]
    expected = [_scan(every, t) for t in texts]
    got: dict[int, list[object]] = {}

    def run(k: int) -> None:
        got[k] = [_scan(scanner, texts[(k + j) % 8]) for j in range(40)]

    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(4):
        assert got[k] == [expected[(k + j) % 8] for j in range(40)]


# -- which first pass a scan takes ------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    sets=st.floats(1e-9, 1e-6),
    factor=st.floats(0.1, 10).filter(lambda f: abs(f - 1) > 0.05),
    sizes=st.lists(st.integers(FirstPassChoice.LONG, 8 << 20), min_size=1, max_size=8),
)
def test_whole_texts_take_the_cheaper_pass_and_the_other_is_timed_on_samples(
    sets: float, factor: float, sizes: list[int]
) -> None:
    """The dearer pass never reads a whole long text once both are measured: it is timed on a
    sample, once every EXPLORE long scans, and the sample is a bounded part of the text."""
    choice = FirstPassChoice()
    pre = sets * factor
    cost = {True: pre, False: sets}
    samples = 0
    for n in range(40 * FirstPassChoice.EXPLORE):
        size = sizes[n % len(sizes)]
        plan = choice.choose(size)
        if n >= 2:  # the first scan measures the prefilter whole and the sets on a sample
            assert plan.prefilter == (pre <= sets)
        choice.record(size, plan.prefilter, cost[plan.prefilter] * size)
        if plan.sample:
            samples += 1
            assert FirstPassChoice.SAMPLE_MIN <= plan.sample <= min(size, FirstPassChoice.SAMPLE_MAX)
            assert plan.sample <= max(size // 16, FirstPassChoice.SAMPLE_MIN)
            choice.record(plan.sample, not plan.prefilter, cost[not plan.prefilter] * plan.sample)
    assert samples == 1 + (40 * FirstPassChoice.EXPLORE - 1) // FirstPassChoice.EXPLORE


@given(sizes=st.lists(st.integers(FirstPassChoice.LONG, 8 << 20), min_size=1, max_size=8))
def test_a_change_of_traffic_turns_the_choice(sizes: list[int]) -> None:
    """Costs that swap (new code after templated prose) are followed within a few samples."""
    choice = FirstPassChoice()
    cost = {True: 2e-8, False: 1e-8}
    taken = []
    for n in range(12 * FirstPassChoice.EXPLORE):
        if n == 6 * FirstPassChoice.EXPLORE:
            cost = {True: 1e-8, False: 5e-8}
        size = sizes[n % len(sizes)]
        plan = choice.choose(size)
        taken.append(plan.prefilter)
        choice.record(size, plan.prefilter, cost[plan.prefilter] * size)
        if plan.sample:
            choice.record(plan.sample, not plan.prefilter, cost[not plan.prefilter] * plan.sample)
    assert not any(taken[2 : 6 * FirstPassChoice.EXPLORE])
    assert all(taken[8 * FirstPassChoice.EXPLORE :])


@given(text=st.text(max_size=300), size=st.integers(1, 400))
def test_a_sample_is_the_middle_at_whole_characters(text: str, size: int) -> None:
    subject = text.encode()
    sample = _middle(subject, size)
    part = sample.decode("utf-8")  # never a cut character
    assert part in text and (not part or subject.find(sample) >= 0)
    if len(subject) >= size:
        assert size - 3 <= len(sample) <= size + 3 or len(sample) == 0 and size < 4
    else:
        assert sample == subject


@given(text=st.text(max_size=300))
def test_halves_are_cut_between_characters(text: str) -> None:
    """The sets' warming read and their timed sample: the two halves of one middle, each whole
    characters, together all of it, the second no longer than the first by more than a character."""
    piece = text.encode()
    warm, sample = _halves(piece)
    assert warm + sample == piece
    assert (warm.decode("utf-8") + sample.decode("utf-8")) == text  # neither cuts a character
    assert len(piece) // 2 <= len(warm) <= len(piece) // 2 + 3


def test_short_texts_keep_the_sets_and_teach_nothing() -> None:
    choice = FirstPassChoice()
    for _ in range(100):
        assert choice.choose(FirstPassChoice.LONG - 1) == FirstPass(prefilter=False)
        choice.record(FirstPassChoice.SAMPLE_MIN - 1, False, 1.0)  # dear, and short: not counted
    assert choice.choose(FirstPassChoice.LONG).prefilter  # a long one: the prefilter, unmeasured


def test_a_scanner_learns_which_first_pass_is_cheaper(
    scanners: tuple[Scanner, Scanner, bytes], config: TiersConfig
) -> None:
    """Real scans: templated text seen again (RE2's states built) against new text."""
    _, _, blob = scanners
    scanner = Scanner(
        build_registry(config).recognizers, min_score=config.min_score, context_window=config.context_window
    )
    scanner.attach_prefilter(scanner.prefilter_key, blob)
    # characters of two, three and four bytes: a sample is cut at whole characters
    line = "Order 4711 for Acme, shipped on 12.03.2026 to the plant in Zürich — status ✓ 🚚.\n"
    text = line * (FirstPassChoice.LONG // len(line) + 1)
    read: list[tuple[bool, int]] = []  # (prefilter, bytes) of every first pass
    cut: list[bytes] = []  # what each pass read that was not valid UTF-8
    set_passes, prefiltered = scanner._set_passes, scanner._prefiltered

    def valid(subject: bytes) -> None:
        try:
            subject.decode("utf-8")
        except UnicodeDecodeError:
            cut.append(subject)

    def sets_spy(subject: bytes) -> bytearray:
        read.append((False, len(subject)))
        valid(subject)
        return set_passes(subject)

    def prefilter_spy(subject: bytes) -> bytearray | None:
        read.append((True, len(subject)))
        valid(subject)
        return prefiltered(subject)

    scanner._set_passes = sets_spy  # type: ignore[method-assign]  # counts what each pass reads
    scanner._prefiltered = prefilter_spy  # type: ignore[method-assign]  # counts what each pass reads
    scanned = len(normalize_text(text).encode())  # the scanner reads the normalised text
    scans: list[list[tuple[bool, int]]] = []  # what each scan's first passes read
    expected = _scan(scanner, text)
    scans.append(read[:])
    for _ in range(3 * FirstPassChoice.EXPLORE):
        del read[:]
        assert _scan(scanner, text) == expected
        scans.append(read[:])
    assert scanner._choice._sets is not None and scanner._choice._prefilter is not None
    assert not cut
    # one whole pass per scan; the other kind only on samples: at the first scan and once per
    # EXPLORE scans, the prefilter on one sample, the sets on two (the first untimed, to build
    # the DFA states a whole text would have built: the templated text here needs few)
    for n, passes in enumerate(scans):
        whole, *parts = passes
        assert whole[1] == scanned
        if n % FirstPassChoice.EXPLORE:
            assert parts == []
            continue
        kinds = {kind for kind, _ in parts}
        assert kinds == {not whole[0]}
        assert len(parts) == (1 if whole[0] is False else 2)
        assert all(size <= FirstPassChoice.SAMPLE_MIN + 3 for _, size in parts)
