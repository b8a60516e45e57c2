"""The set passes only choose which patterns run: a scan finds exactly what running every pattern
over the whole text finds.

The scanner's RE2 sets turn on the patterns that matched somewhere (a byte per pattern), and only
those run. A wrong place in that table (a pattern turned on for another's match, or never) would
silently drop findings, so the reference here is the same scanner with its sets taken away, which
runs every pattern: the definition the prefilter must keep, compared over generated texts mixing
identifiers of many recognizers, their context words and plain prose.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import re2
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tiers import TiersConfig
from tiers.normalize import normalize_text
from tiers.recognizers import build_registry
from tiers.recognizers.firms import CompanyCellRecognizer
from tiers.recognizers.people_fields import PersonCellRecognizer
from tiers.recognizers.secrets import provider_formats
from tiers.scanner import Scanner

# Values that shipped patterns of different recognizers match (some only near a context word).
_VALUES = [
    "jane.doe@example-mail.com",
    "ops-lead42@acme.example.org",
    "+1 (415) 555-0134",
    "(212) 555-0199",
    "4556 0172 8390 6414",
    "5352-9841-7760-2149",
    "DE41 2605 0000 1562 8071 31",
    "GB54LOYD30963812345672",
    "078-05-1120",
    "192.168.10.42",
    "2001:db8:85a3::8a2e:370:7334",
    "00:1A:2B:3C:4D:5E",
    "AKIAIOSFODNN7EXAMPLF",
    "ghp_4f9Xk2LmQ8rT1vW6yZ0aB3cD5eF7gH9iJ2kL",
    "xoxb-2048-4096-a1B2c3D4e5F6g7H8i9J0kLmN",
    "password = 'Tr0ub4dor&3-horse-staple'",
    "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlLXZhbHVl",
    "https://user:s3cr3t-Pa55@db.internal.example:5432/app",
    "X123456789",
    "1985-04-12",
    # found only by weak patterns, which count near their context words (below)
    "912803456",
    "65929970489",
    "234123412346",
    "2123 45670 1",
    "RSSMRA85T10A562S",
    "44051401359",
    "19811218-9876",
    "732 829 320",
]
_CONTEXT = ["card", "iban", "account", "passport", "ssn", "phone", "licence", "tax id", "born", "key", "Steuer-ID",
            "aadhaar", "medicare", "codice fiscale", "PESEL", "personnummer", "SIREN", "driver license"]  # fmt: skip
_WORDS = "the plan for next quarter needs review before we ship it to every region and team".split()

# a token of any provider format (the literal gate: a set of theirs runs only where one of its
# members' prefixes occurs), drawn from the format's own regex, so every alternative of a prefix
_FORMATS = provider_formats()
_tokens = st.sampled_from(_FORMATS).flatmap(lambda f: st.from_regex(f.shape.body, fullmatch=True))
_pieces = st.one_of(st.sampled_from(_VALUES), st.sampled_from(_CONTEXT), st.sampled_from(_WORDS), _tokens)
_texts = st.lists(_pieces, min_size=1, max_size=40).map(" ".join)


@pytest.fixture(scope="module")
def scanners(config: TiersConfig) -> tuple[Scanner, Scanner]:
    scanner = Scanner(
        build_registry(config).recognizers, min_score=config.min_score, context_window=config.context_window
    )
    every = copy.copy(scanner)
    # No set passes, no REQUIRES gate, no weak patterns off by their context words, and every
    # pattern turned on: what the scan did before any prefilter.
    every._sets = []
    every._gate = None
    every._weak_bits = 0  # and no weak pattern turned off before its own context check
    every._base_mask = bytearray(b"\x01") * len(scanner._base_mask)
    return scanner, every


def _scan(scanner: Scanner, text: str) -> list[tuple[str, int, int, str, float]]:
    return [(h.entity, h.start, h.end, h.recognizer, h.score) for h in scanner.scan(normalize_text(text), _nothing)]


def _nothing() -> None:
    return None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_texts)
def test_set_passes_keep_every_finding(scanners: tuple[Scanner, Scanner], text: str) -> None:
    scanner, every = scanners
    assert _scan(scanner, text) == _scan(every, text)


# Tables: headers of the columns the cell patterns judge (people, firms, dates of birth), others,
# and cells that read as names, firms and dates, in CSV, semicolon and tab layouts, with prose
# around them; the gates (``REQUIRES``) must never turn off a pattern that would have found one.
_HEADERS = ["Name", "name", " Full Name ", '"Contact person"', "Mitarbeiter", "nom prenom", "Firma", "Company",
            '"Supplier name"', "raison sociale", "Kunde", "DOB", "Geburtsdatum", "id", "city", "amount", "Notes",
            "ne le", "Named", "Companyname", "Name:", "-Name-"]  # fmt: skip
_CELLS = ["Anna Lehmann", "Philippine Samson", "Lehmann GmbH", "Acme Corp", "1962-03-14", "14.03.1962", "42",
          "Berlin", '"Lebon, Marchal"', "Build Tools", "Jean-Luc Picard", "Total"]  # fmt: skip


@st.composite
def _tables(draw: st.DrawFn) -> str:
    sep = draw(st.sampled_from([",", ";", "\t", "; "]))
    width = draw(st.integers(2, 4))
    rows = [sep.join(draw(st.lists(st.sampled_from(_HEADERS), min_size=width, max_size=width)))]
    for _ in range(draw(st.integers(1, 4))):
        rows.append(sep.join(draw(st.lists(st.sampled_from(_CELLS), min_size=width, max_size=width))))
    before = draw(st.lists(st.sampled_from(_WORDS), max_size=8))
    end = draw(st.sampled_from(["\n", "\r\n"]))
    return " ".join(before) + draw(st.sampled_from(["\n", "\n\n", ""])) + end.join(rows) + end + "Thanks, Anna"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_tables())
def test_required_words_keep_every_finding_in_tables(scanners: tuple[Scanner, Scanner], text: str) -> None:
    scanner, every = scanners
    assert _scan(scanner, text) == _scan(every, text)


_GATED = [
    (rec.HEADER, re2.compile(rec.REQUIRES["company_cell"])) for rec in (CompanyCellRecognizer, PersonCellRecognizer)
]


@settings(max_examples=400, deadline=None)
@given(which=st.sampled_from(_GATED), data=st.data(), sep=st.sampled_from([",", ";", "\t"]),
       left=st.lists(st.sampled_from(["id", "x", '"a"', ""]), max_size=2),
       right=st.lists(st.sampled_from(["id", "x", '"a"', ""]), max_size=2), end=st.sampled_from(["", "\n", "\r\n"]))  # fmt: skip
def test_every_header_cell_the_check_accepts_opens_the_gate(which: Any, data: st.DataObject, sep: str,
                                                            left: list[str], right: list[str], end: str) -> None:  # fmt: skip
    """A property over the header check's own language: any cell it accepts, anywhere in a
    header line, is found by the RE2 gate that lets the cell patterns run."""
    header, gate = which
    cell = data.draw(st.from_regex(header, fullmatch=True).filter(lambda c: not any(ch in c for ch in ",;\t\r\n")))
    line = sep.join([*left, cell, *right]) + end
    assert header.match(cell.strip())
    assert gate.search(line), line


def test_the_sets_hold_most_patterns_and_their_members_find_things(scanners: tuple[Scanner, Scanner]) -> None:
    """The property above can fail: most patterns sit in sets (off unless matched), and the
    values above are found through them."""
    scanner, _ = scanners
    assert scanner._base_mask.count(0) > len(scanner._base_mask) // 2
    found = {h.entity for v in _VALUES for h in scanner.scan(normalize_text(f"card iban {v} phone"), _nothing)}
    assert {"EMAIL_ADDRESS", "CREDIT_CARD", "IBAN_CODE", "IP_ADDRESS"} <= found


def test_own_set_patterns_share_a_set_with_nobody_else(scanners: tuple[Scanner, Scanner]) -> None:
    """A recognizer that asks for sets of its own (``OWN_SET``: patterns that may start at every
    word of code) has every one of its set patterns in sets holding only its own, and the others
    still fill sets of up to 32; the property above holds the findings of this partition too."""
    scanner, _ = scanners
    owners = [{id(scanner._patterns[p].rec) for p in places[:-1]} for _, places, _ in scanner._sets]
    own = {id(c.rec) for c in scanner._patterns if getattr(c.rec, "OWN_SET", False)}
    assert own, "no recognizer asks for a set of its own"
    in_sets = {id(scanner._patterns[p].rec) for _, places, _ in scanner._sets for p in places[:-1]}
    assert own <= in_sets
    for members in owners:
        assert not (members & own) or len(members) == 1, "an OWN_SET recognizer shares a set"
    assert max(len(places) - 1 for _, places, _ in scanner._sets) == 32


@settings(max_examples=400, deadline=None)
@given(fmt=st.sampled_from(_FORMATS), data=st.data())
def test_every_value_of_a_format_holds_one_of_its_literals(fmt: Any, data: st.DataObject) -> None:
    """The gate's soundness: any string a format's regex matches, whichever alternative of its
    prefix it takes, holds one of the strings the gate looks for (``Shape.literals``)."""
    value = data.draw(st.from_regex(fmt.shape.body, fullmatch=True))
    literals = fmt.shape.literals
    assume(literals)
    assert any(lit in value for lit in literals), (fmt.fmt, literals, value)


class _Counting:
    """An RE2 set that counts its passes."""

    def __init__(self, one: Any, calls: list[int], k: int) -> None:
        self.one, self.calls, self.k = one, calls, k

    def Match(self, subject: bytes) -> Any:  # noqa: N802 -- RE2's name
        self.calls.append(self.k)
        return self.one.Match(subject)


def test_gated_sets_run_only_where_their_literals_occur(scanners: tuple[Scanner, Scanner]) -> None:
    """Prose runs none of the gated sets; a token runs the set that holds its format, and its
    finding comes through it (the gate can be wrong both ways: the property above holds the
    findings, this that the passes are really saved)."""
    scanner, _ = scanners
    counted = copy.copy(scanner)
    calls: list[int] = []
    counted._sets = [
        (_Counting(one, calls, k), places, sentinel) for k, (one, places, sentinel) in enumerate(scanner._sets)
    ]
    gated = set(range(scanner._ungated, len(scanner._sets)))
    assert len(gated) >= len(scanner._sets) // 2
    counted.scan(normalize_text(" ".join(_WORDS) * 50), _nothing)
    assert calls and not set(calls) & gated
    calls.clear()
    token = "ghp_4f9Xk2LmQ8rT1vW6yZ0aB3cD5eF7gH9iJ2kL"
    hits = counted.scan(normalize_text(f"{' '.join(_WORDS)} {token}"), _nothing)
    assert len(set(calls) & gated) == 1
    assert any(h.entity == "SECRET" for h in hits)
