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

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tiers import TiersConfig
from tiers.normalize import normalize_text
from tiers.recognizers import build_registry
from tiers.scanner import Scanner

# Values that shipped patterns of different recognizers match (some only near a context word).
_VALUES = [
    "jane.doe@example-mail.com",
    "ops-lead42@acme.example.org",
    "+1 (415) 555-0134",
    "(212) 555-0199",
    "4111 1111 1111 1111",
    "5500-0000-0000-0004",
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
]
_CONTEXT = ["card", "iban", "account", "passport", "ssn", "phone", "licence", "tax id", "born", "key"]
_WORDS = "the plan for next quarter needs review before we ship it to every region and team".split()

_pieces = st.one_of(st.sampled_from(_VALUES), st.sampled_from(_CONTEXT), st.sampled_from(_WORDS))
_texts = st.lists(_pieces, min_size=1, max_size=40).map(" ".join)


@pytest.fixture(scope="module")
def scanners(config: TiersConfig) -> tuple[Scanner, Scanner]:
    scanner = Scanner(
        build_registry(config).recognizers, min_score=config.min_score, context_window=config.context_window
    )
    every = copy.copy(scanner)
    # No set passes and every pattern turned on: what the scan did before any prefilter.
    every._sets = []
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


def test_the_sets_hold_most_patterns_and_their_members_find_things(scanners: tuple[Scanner, Scanner]) -> None:
    """The property above can fail: most patterns sit in sets (off unless matched), and the
    values above are found through them."""
    scanner, _ = scanners
    assert scanner._base_mask.count(0) > len(scanner._base_mask) // 2
    found = {h.entity for v in _VALUES for h in scanner.scan(normalize_text(f"card iban {v} phone"), _nothing)}
    assert {"EMAIL_ADDRESS", "CREDIT_CARD", "IBAN_CODE", "IP_ADDRESS"} <= found
