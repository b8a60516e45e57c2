"""Properties: any valid card or IBAN, grouped with any mix of separators (and any letter case for
IBANs), inside random prose, is Tier 3, and stripping leaves no four of its digits together."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tiers import Classifier, Tier
from tiers.recognizers.financial import PUBLISHED_TEST_CARDS, is_test_card

from .conftest import content

SEPARATORS = [" ", "  ", "\t", "\n", ".", "/", "_", "-"]
WORDS = [
    "the",
    "invoice",
    "was",
    "paid",
    "to",
    "please",
    "refund",
    "for",
    "order",
    "thanks",
    "we",
    "sent",
    "it",
    "on",
    "Monday",
    "and",
    "again",
    "\n",
    ",",
    "(",
    ")",
    ":",
]
CARD_WORDS = ("card", "visa", "credit card", "card number:")

_settings = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def luhn_complete(body: str) -> str:
    """``body`` with its Luhn check digit appended."""
    total = 0
    for i, ch in enumerate(reversed(body)):
        d = int(ch)
        if i % 2 == 0:
            d *= 2
            d = d - 9 if d > 9 else d
        total += d
    return body + str((10 - total % 10) % 10)


# (issuer prefix, length, group sizes)
CARD_SHAPES = [
    ("4", 16, (4, 4, 4, 4)),
    ("51", 16, (4, 4, 4, 4)),
    ("55", 16, (4, 4, 4, 4)),
    ("2221", 16, (4, 4, 4, 4)),
    ("6011", 16, (4, 4, 4, 4)),
    ("65", 16, (4, 4, 4, 4)),
    ("34", 15, (4, 6, 5)),
    ("37", 15, (4, 6, 5)),
    ("4", 19, (4, 4, 4, 4, 3)),
    ("4", 13, (13,)),
    ("36", 14, (4, 6, 4)),
    ("3530", 16, (4, 4, 4, 4)),
    ("6011", 19, (4, 4, 4, 4, 3)),
    ("2200", 16, (4, 4, 4, 4)),
]


@st.composite
def cards(draw: st.DrawFn) -> tuple[str, str]:
    """(grouped card, its digits)"""
    prefix, length, groups = draw(st.sampled_from(CARD_SHAPES))
    rest = draw(st.text("0123456789", min_size=length - len(prefix) - 1, max_size=length - len(prefix) - 1))
    digits = luhn_complete(prefix + rest)
    assume(not is_test_card(digits))  # a number published for testing is nobody's (hypothesis draws 0000…)
    parts, i = [], 0
    for g in groups:
        parts.append(digits[i : i + g])
        i += g
    seps = draw(st.lists(st.sampled_from(SEPARATORS), min_size=len(parts) - 1, max_size=len(parts) - 1))
    return "".join(p + s for p, s in zip(parts, [*seps, ""])), digits


# country -> BBAN shape: (kind, count) with kind "n" digits, "a" upper-case letters, "c" either
IBAN_SHAPES = {
    "DE": (("n", 18),),
    "GB": (("a", 4), ("n", 14)),
    "NL": (("a", 4), ("n", 10)),
    "FR": (("n", 10), ("c", 11), ("n", 2)),
    "ES": (("n", 20),),
    "IT": (("a", 1), ("n", 10), ("c", 12)),
    "CH": (("n", 5), ("c", 12)),
    "BE": (("n", 12),),
}
_ALPHABET = {"n": "0123456789", "a": "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "c": "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"}


def iban_check(country: str, bban: str) -> str:
    num = int("".join(str(int(c, 36)) for c in bban + country + "00"))
    return f"{98 - num % 97:02d}"


@st.composite
def ibans(draw: st.DrawFn) -> tuple[str, str]:
    """(grouped IBAN in random case, the IBAN upper-case without separators)"""
    country = draw(st.sampled_from(sorted(IBAN_SHAPES)))
    bban = "".join(draw(st.text(_ALPHABET[kind], min_size=n, max_size=n)) for kind, n in IBAN_SHAPES[country])
    iban = country + iban_check(country, bban) + bban
    cased = "".join(c.lower() if c.isalpha() and draw(st.booleans()) else c for c in iban)
    parts = [cased[i : i + 4] for i in range(0, len(cased), 4)]
    seps = draw(st.lists(st.sampled_from([*SEPARATORS, ""]), min_size=len(parts) - 1, max_size=len(parts) - 1))
    return "".join(p + s for p, s in zip(parts, [*seps, ""])), iban


prose = st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join)


def assert_no_digits_left(stripped: str, digits: str) -> None:
    """No run of four or more of the value's digits survives, separators ignored (the prose has
    no digits of its own; a placeholder's counter is one or two digits)."""
    flat = re.sub(r"[\s._/-]", "", stripped)
    for run in re.findall(r"\d{4,}", flat):
        assert run not in digits, (run, stripped)


def _embed(before: str, value: str, after: str) -> str:
    return f"{before} {value} {after}".strip(" ")


@_settings
@given(cards(), prose, prose, st.sampled_from(CARD_WORDS))
def test_any_valid_card_with_any_separators_is_tier3(
    clf: Classifier, card: tuple[str, str], before: str, after: str, word: str
) -> None:
    """A card whose groups are on separate lines needs a card word nearby; any other mix of
    separators counts alone. Stripping takes the whole card."""
    value, digits = card
    gaps = re.findall(r"[^0-9]+", value)
    if all("\n" in g for g in gaps):
        before = f"{before} {word}"
    text = _embed(before, value, after)
    c = content(text)
    d = clf.classify(c)
    assert d.tier == Tier.RESTRICTED, (text, d.reasons)
    start = text.index(value)
    assert any(
        f.entity_type == "CREDIT_CARD" and f.start <= start and start + len(value) <= f.end for f in d.findings
    ), [(f.entity_type, text[f.start : f.end]) for f in d.findings]
    assert_no_digits_left(clf.strip(c, d).content.segments[0].text, digits)


# (issuer prefix, a length no card under it is issued in)
_UNISSUED = [("4", 14), ("4", 15), ("4", 17), ("4", 18), ("51", 15), ("55", 17), ("2653", 15), ("2221", 18), ("37", 14)]


@_settings
@given(st.sampled_from(_UNISSUED), st.data(), prose, st.sampled_from([*CARD_WORDS, "discrete_log(", "x ="]))
def test_a_length_its_issuer_never_issues_is_no_card(
    clf: Classifier, shape: tuple[str, int], data: st.DataObject, before: str, word: str
) -> None:
    """A Luhn-valid run under a card network's prefix, of a length that network never issues
    (fifteen digits under Mastercard's ``2653``, as in sympy's ``discrete_log(265390227570863,
    …)``), is a long integer: no card even right after a card word. The same digits at an issued
    length are one (the property above)."""
    prefix, length = shape
    rest = data.draw(st.text("0123456789", min_size=length - len(prefix) - 1, max_size=length - len(prefix) - 1))
    digits = luhn_complete(prefix + rest)
    text = _embed(f"{before} {word}", digits, "exp 12/29")
    d = clf.classify(content(text))
    assert "CREDIT_CARD" not in d.entity_counts(), text


def _grouped(digits: str, sep: str) -> str:
    groups = (4, 6, 5) if len(digits) == 15 else (4, 6, 4) if len(digits) == 14 else (4,) * 4 + (3,)
    parts, i = [], 0
    for g in groups:
        if i < len(digits):
            parts.append(digits[i : i + g])
        i += g
    return sep.join(parts)


@_settings
@given(
    st.sampled_from(sorted(PUBLISHED_TEST_CARDS)), st.sampled_from(["", " ", "-"]), prose, st.sampled_from(CARD_WORDS)
)
def test_published_test_cards_are_no_cards(clf: Classifier, digits: str, sep: str, before: str, word: str) -> None:
    """A processor's published test number, written plain or grouped, beside a card word: no
    card, so a payment form's tests and docs are not refused as Tier 3."""
    text = _embed(f"{before} {word}", _grouped(digits, sep), "exp 12/29")
    d = clf.classify(content(text))
    assert "CREDIT_CARD" not in d.entity_counts(), text


@_settings
@given(
    st.sampled_from(CARD_SHAPES),
    st.data(),
    st.sampled_from("0123456789"),
    st.integers(9, 12),
    st.sampled_from(["", " ", "-"]),
)
def test_a_run_of_twelve_equal_digits_is_a_test_number(
    clf: Classifier, shape: tuple[str, int, tuple[int, ...]], data: st.DataObject, digit: str, run: int, sep: str
) -> None:
    """Twelve equal digits in a row (``4000 0000 0000 0002``) make a test number; nine to eleven,
    in an otherwise random card, still a card: accounts issued in order and padded with zeros
    hold runs of nine ("5425 2300 0000 0009")."""
    prefix, length, _groups = shape
    free = length - len(prefix) - 1 - run
    assume(free >= 0)  # a four-digit issuer prefix leaves eleven digits to a 16-digit card
    at = data.draw(st.integers(0, free))
    rest = data.draw(st.text("0123456789", min_size=free, max_size=free))
    digits = luhn_complete(prefix + rest[:at] + digit * run + rest[at:])
    assume(re.search(r"([0-9])\1{11}", digits) is None if run < 12 else True)
    assume(len(set(digits[0::2])) > 1 or len(set(digits[1::2])) > 1)
    assume(digits not in PUBLISHED_TEST_CARDS)
    text = f"card {_grouped(digits, sep)} exp 12/29"
    cards = [text[f.start : f.end] for f in clf.classify(content(text)).findings if f.entity_type == "CREDIT_CARD"]
    if run == 12:
        assert cards == [], text
    else:
        assert [re.sub(r"\D", "", c) for c in cards] == [digits], text


@_settings
@given(ibans(), prose, prose)
def test_any_valid_iban_in_any_case_with_any_separators_is_tier3(
    clf: Classifier, iban: tuple[str, str], before: str, after: str
) -> None:
    """Any case, any separators between the groups of four: Tier 3, one finding over all of it."""
    value, canonical = iban
    text = _embed(before, value, after)
    c = content(text)
    d = clf.classify(c)
    assert d.tier == Tier.RESTRICTED, (text, d.reasons)
    start = text.index(value)
    assert any(f.entity_type == "IBAN_CODE" and f.start <= start and start + len(value) <= f.end for f in d.findings), [
        (f.entity_type, text[f.start : f.end]) for f in d.findings
    ]
    assert_no_digits_left(clf.strip(c, d).content.segments[0].text, canonical)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.integers(min_value=0, max_value=99_999), min_size=4, max_size=24),
    st.sampled_from(["\n", "\t", "  ", " | "]),
)
def test_tables_of_numbers_are_not_cards(clf: Classifier, numbers: list[int], sep: str) -> None:
    """Columns and rows of ordinary numbers (no issuer-shaped four-digit groups that pass Luhn
    across line breaks without a card word) do not become cards or IBANs."""
    cells = [str(n) for n in numbers]
    text = "qty" + sep + sep.join(cells) + "\n"
    d = clf.classify(content(text))
    found = [text[f.start : f.end] for f in d.findings if f.entity_type in {"CREDIT_CARD", "IBAN_CODE"}]
    if sep == "\n":
        assert found == []
    for value in found:  # a row that *is* issuer-shaped groups passing Luhn is a card, by design
        digits = re.sub(r"\D", "", value)
        assert 13 <= len(digits) <= 19 and luhn_complete(digits[:-1]) == digits


# card numbers as a real list holds them: random digits (runs of one digit read as test numbers)
_BARE_CARD = st.builds(
    lambda shape, n: luhn_complete((shape[0] + str(n))[: shape[1] - 1]),
    st.sampled_from(CARD_SHAPES),
    st.integers(10**17, 10**18 - 1),
).filter(lambda d: len(set(d)) >= 6 and re.search(r"(\d)\1{3}", d) is None)


@_settings
@given(st.lists(_BARE_CARD, min_size=4, max_size=8, unique=True), st.sampled_from(["[]", "()", "{}"]))
def test_a_sorted_list_of_cards_is_cards_not_a_sequence(clf: Classifier, drawn: list[str], brackets: str) -> None:
    """A literal of four or more growing integers spanning magnitudes is a mathematical sequence
    (the hyperfactorials of a test); card numbers sorted in a list are of one or two lengths and
    stay cards, every one of them."""
    numbers = sorted(drawn, key=int)
    text = f"cards = {brackets[0]}{', '.join(numbers)}{brackets[1]}\n"
    c = content(text)
    decision = clf.classify(c)
    assert decision.tier is Tier.RESTRICTED, text
    found = {text[f.start : f.end] for f in decision.findings if f.entity_type == "CREDIT_CARD"}
    assert found == set(numbers)
