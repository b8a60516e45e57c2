"""Payment cards (Luhn) and IBANs (ISO 7064 checksum and per-country format).

Presidio's own patterns use look-arounds, which RE2 cannot run; these RE2 patterns find the same
candidates and more spellings: any letter case for IBANs (the checksum is case-insensitive), and
between digit groups up to three of space, tab, ``.``, ``/``, ``_`` and ``-``, or one line break.
Looser candidates are safe because the checksums and length rules decide: each candidate is
narrowed to its longest valid prefix ending at a group boundary (a greedy match may run into the
next number or word), so one finding covers the whole value and nothing of it is left behind.

A card whose every gap is a line break looks exactly like a column of four-digit numbers, which
Luhn passes one time in ten; such a card counts only with a card word nearby
(:class:`CardColumnRecognizer`). IBAN candidates have no such rule: mod 97 and the country's
exact BBAN format make a false IBAN out of a table rare enough.
"""

from __future__ import annotations

import re

from presidio_analyzer import Pattern
from presidio_analyzer.predefined_recognizers import CreditCardRecognizer, IbanRecognizer
from stdnum.iso7064 import mod_97_10

from ._digits import chance_term, in_arithmetic, in_decimal, in_integer_sequence

__all__ = [
    "PUBLISHED_EXAMPLE_IBANS",
    "PUBLISHED_TEST_CARDS",
    "CardColumnRecognizer",
    "CardRecognizer",
    "IbanCodeRecognizer",
    "is_test_card",
    "issuer_lengths",
]

_GAP = r"(?:[ \t._/-]{1,3}|[ \t]{0,2}\r?\n[ \t]{0,2})?"
_LINE = r"[ \t]{0,2}\r?\n[ \t]{0,2}"
_ISSUER = r"(?:4\d{3}|5[1-5]\d{2}|2[2-7]\d{2}|6(?:011|5\d{2}|4[4-9]\d)|35\d{2}|30[0-5]\d|36\d{2}|38\d{2})"
# Word boundaries, not consumed edges: without a capture group RE2 answers from its DFA alone
# (a value group costs a second, slower pass per match)
_EDGE = r"\b"
_GROUPS = re.compile(r"[0-9A-Za-z]+")


def _card_pattern(gap: str) -> str:
    shapes = (
        _ISSUER + f"(?:{gap}\\d{{4}}){{3}}{gap}\\d{{1,3}}",  # 4-4-4-4-3: 17 to 19 digits
        _ISSUER + f"(?:{gap}\\d{{4}}){{2}}{gap}\\d{{1,7}}",  # 4-4-4-4 and ungrouped
        f"3[47]\\d{{2}}{gap}\\d{{6}}{gap}\\d{{5}}",  # Amex 4-6-5
        f"3(?:0[0-5]|[68]\\d)\\d{gap}\\d{{6}}{gap}\\d{{4}}",  # Diners 4-6-4
    )
    return _EDGE + "(?:" + "|".join(shapes) + ")" + _EDGE


def _prefixes(text: str) -> list[str]:
    """``text`` and its prefixes that end at the end of a group of letters or digits, longest
    first (a greedy candidate cut back to each group boundary)."""
    return [text[: m.end()] for m in reversed(list(_GROUPS.finditer(text)))]


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def issuer_lengths(digits: str) -> range | tuple[int, ...]:
    """The lengths a card number with these leading digits is issued in (ISO/IEC 7812 issuer
    ranges as the networks publish them): Visa 13, 16 or 19; Mastercard 16; Mir 16 to 19; Amex
    15; Diners 14 to 19; JCB, Discover and the rest 16 to 19. A Luhn-valid run of a length its
    prefix is never issued in is a long integer, not a card (``discrete_log(265390227570863, …)``
    in sympy: fifteen digits under Mastercard's prefix)."""
    if digits[0] == "4":
        return (13, 16, 19)
    if digits[0] == "5":
        return (16,)
    if digits[0] == "2":
        return range(16, 20) if "2200" <= digits[:4] <= "2204" else (16,)
    if digits[:2] in ("34", "37"):
        return (15,)
    if digits[:2] in ("30", "36", "38", "39"):
        return range(14, 20)
    return range(16, 20)


def _one_group_per_line(value: str) -> bool:
    gaps = re.findall(r"[^0-9]+", value)
    return bool(gaps) and all("\n" in g for g in gaps)


class CardRecognizer(CreditCardRecognizer):
    """Visa, Mastercard, Amex, Discover, JCB, Diners: known issuer prefixes, each at the lengths
    it is issued in (:func:`issuer_lengths`), Luhn."""

    PATTERNS = [Pattern("card", _card_pattern(_GAP), 0.5)]
    _COLUMNS = False  # whether a card with one group per line counts

    def __init__(self) -> None:
        super().__init__(patterns=list(self.PATTERNS), name=type(self).__name__)
        self.global_regex_flags = 0

    def validate_result(self, pattern_text: str) -> bool:
        digits = re.sub(r"[^0-9]", "", pattern_text)
        if not 13 <= len(digits) <= 19 or len(digits) not in issuer_lengths(digits) or not _luhn(digits):
            return False
        return self._COLUMNS or not _one_group_per_line(pattern_text)

    def reject_at(self, text: str, start: int, end: int) -> bool:
        """Digits of a decimal (``0.2662102282047272``, a float's repr in every test suite;
        ``-49586681013729.326…``, mpmath's tables) or a term of a sequence literal (``[1, 1, 4,
        108, 27648, 86400000, 4031078400000]``) are no card (:mod:`._digits`), nor a number
        published for testing (:func:`is_test_card`), nor one of a literal of random long
        integers that passes Luhn's check by chance (:func:`._digits.chance_term`), nor an operand
        of arithmetic (:func:`._digits.in_arithmetic`: ``2447509765625*q**2``, ``x + …``)."""
        if in_decimal(text, start, end) or in_integer_sequence(text, start, end):
            return True
        if in_arithmetic(text, start, end):
            return True
        if chance_term(text, start, end, _luhn):
            return True
        return is_test_card("".join(c for c in text[start:end] if c.isdigit()))

    def refine_span(self, text: str) -> tuple[int, int] | None:
        """The longest valid card that starts the candidate, cut at a group boundary."""
        groups = [(m.end(), m.end() - m.start()) for m in _GROUPS.finditer(text)]
        digits = sum(n for _, n in groups)
        for end, n in reversed(groups):
            if digits < 13:
                return None
            if digits <= 19 and self.validate_result(text[:end]):
                return 0, end
            digits -= n
        return None


class CardColumnRecognizer(CardRecognizer):
    """A card with one digit group per line: counts only near a card word (score below
    ``min_score``), because a column of four-digit numbers looks the same."""

    PATTERNS = [Pattern("card_one_group_per_line", _card_pattern(_LINE), 0.3)]
    _COLUMNS = True


class IbanCodeRecognizer(IbanRecognizer):
    """IBANs in any case, grouped or not; presidio's checksum and per-country format decide."""

    PATTERNS = [
        Pattern(
            "iban",
            r"(?i)" + _EDGE + r"[A-Z]{2}\d{2}(?:" + _GAP + r"[A-Z0-9]{4}){2,7}(?:" + _GAP + r"[A-Z0-9]{1,3})?" + _EDGE,
            0.5,
        )
    ]

    def __init__(self) -> None:
        # presidio annotates IbanRecognizer's patterns as List[str]; it takes and keeps Patterns
        super().__init__(patterns=list(self.PATTERNS), name="IbanCodeRecognizer")  # type: ignore[arg-type]  # see above
        self.global_regex_flags = 0

    def validate_result(self, pattern_text: str) -> bool:
        # The country's exact length and BBAN format from python-stdnum's copy of the SWIFT
        # registry (every IBAN country: Portugal, Mauritius, Palestine, Qatar … that presidio's
        # table lacks), compiled once here (candidates are many, most fail the length), then
        # ISO 7064 mod 97-10 by stdnum. python-stdnum: LGPL-2.1-or-later, used unmodified.
        iban = _compact(pattern_text).upper()
        if iban in PUBLISHED_EXAMPLE_IBANS:
            return False
        fmt = _FORMATS.get(iban[:2])
        if fmt is None or fmt.fullmatch(iban) is None:
            return False
        return bool(mod_97_10.is_valid(iban[4:] + iban[:4]))

    def refine_span(self, text: str) -> tuple[int, int] | None:
        """The longest valid IBAN that starts the candidate. A greedy match takes what follows
        the IBAN for more groups ("BE68 5390 0754 7034 from", "…7034 EUR"), so each shorter
        span ending at a group boundary is tried, longest first."""
        if text[:2].upper() not in _FORMATS:
            return None  # most candidates: two letters and two digits that start no IBAN
        for prefix in _prefixes(text):
            if len(_compact(prefix)) < 15:
                return None
            if self.validate_result(prefix):
                return 0, len(prefix)
        return None


# IBANs published as examples of the standard, in every manual, validator and test suite:
# nobody's account. Each with where it is published (the SWIFT IBAN Registry is ISO 13616's
# register, with one example per country; the others are checked against the installed copies).
PUBLISHED_EXAMPLE_IBANS = frozenset(
    {
        "DE89370400440532013000",  # SWIFT IBAN Registry, Germany; presidio-analyzer's IbanRecognizer docstring
        "GB29NWBK60161331926819",  # SWIFT IBAN Registry, United Kingdom; pydantic-extra-types' iban docstring
        "GB82WEST12345698765432",  # the worked example of the mod 97 check (ECBS EBS204; Wikipedia's IBAN article)
        "GR1601101050000010547023795",  # python-stdnum's stdnum/iban.py doctest
        "BE31435411161155",  # python-stdnum's stdnum/iban.py doctest
    }
)


def is_test_card(digits: str) -> bool:
    """Whether a Luhn-valid card number is one the card schemes' processors publish for testing,
    which code and its documentation use wherever payments are written (a payment form's tests, a
    tracing guide's sample page): nobody's account, and as Tier 3 it refused every request of a
    coding agent that read such code.

    Those numbers are built of long runs (``4111 1111 1111 1111``, ``4000 0000 0000 0002``,
    ``5555 5555 5555 4444``) or one repeated pair (``4242 4242 4242 4242``), or are listed in
    :data:`PUBLISHED_TEST_CARDS`. A run counts from twelve equal digits: longer than the nine
    digits of an account number, so an issued card holds one only where the issuer's prefix ends
    in three more of the same digit. Nine would give up real cards: accounts issued in order and
    padded with zeros ("5425 2300 0000 0009") hold runs of nine."""
    return (
        digits in PUBLISHED_TEST_CARDS
        or _EQUAL_RUN.search(digits) is not None
        or (len(set(digits[0::2])) == 1 and len(set(digits[1::2])) == 1)
    )


_EQUAL_RUN = re.compile(r"([0-9])\1{11}")

# Test numbers without such a run, each Luhn-valid, with where it is published (the processors'
# sandbox documentation; the numbers are facts, restated here).
PUBLISHED_TEST_CARDS = frozenset(
    {
        # Stripe's testing documentation
        "4000056655665556",
        "4000000000009995",
        "4000000000009987",
        "4000000000009979",
        "4000000000003220",
        "4000000000003063",
        "4000002500003155",
        "4000002760003184",
        "5200828282828210",
        "2223003122003222",
        "5105105105105100",
        "378282246310005",
        "371449635398431",
        "6011000990139424",
        "3056930009020004",
        "36227206271667",
        "3566002020360505",
        # PayPal's and Braintree's sandbox documentation
        "4012888888881881",
        "378734493671000",
        "30569309025904",
        "38520000023237",
        "3530111333300000",
        "6011000400000000",
        "4005519200000004",
        "4009348888881881",
        "4012000033330026",
        "4012000077777777",
        "4217651111111119",
        "4500600000000061",
        # Authorize.Net's testing guide
        "4007000000027",
        "5424000000000015",
        "6011000000000012",
        "38000000000006",
        "4012888818888",
        "2223000010309703",
        "2223000010309711",
    }
)


def _compact(text: str) -> str:
    return _NOT_ALNUM.sub("", text)


_NOT_ALNUM = re.compile(r"[^0-9A-Za-z]")


_BBAN_PART = re.compile(r"([0-9]+)!([nac])")
_BBAN_CLASS = {"n": "[0-9]", "a": "[A-Z]", "c": "[A-Z0-9]"}


def _iban_formats() -> dict[str, re.Pattern[str]]:
    """Country -> the whole IBAN's format, from python-stdnum's ``iban.dat`` (lines such as
    ``DE country="Germany" bban="8!n10!n"``)."""
    import importlib.resources

    out: dict[str, re.Pattern[str]] = {}
    text = importlib.resources.files("stdnum").joinpath("iban.dat").read_text("utf-8")
    for m in re.finditer(r'^([A-Z]{2}) .*?bban="([^"]+)"', text, re.MULTILINE):
        parts = "".join(f"{_BBAN_CLASS[k]}{{{n}}}" for n, k in _BBAN_PART.findall(m.group(2)))
        out[m.group(1)] = re.compile(m.group(1) + "[0-9]{2}" + parts)
    return out


_FORMATS = _iban_formats()
