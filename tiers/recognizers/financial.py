"""Payment cards (Luhn) and IBANs (ISO 7064 checksum and per-country format).

Presidio's own patterns use look-arounds, which RE2 cannot run; these RE2 patterns find the same
candidates. Cards are then decided by presidio's Luhn ``validate_result``; IBANs by the same
checks against presidio's per-country format table, compiled once.
"""

from __future__ import annotations

import re
from functools import lru_cache

from presidio_analyzer import Pattern
from presidio_analyzer.predefined_recognizers.generic.iban_patterns import BOS, EOS, regex_per_country
from presidio_analyzer.predefined_recognizers import CreditCardRecognizer, IbanRecognizer

__all__ = ["CardRecognizer", "IbanCodeRecognizer"]


class CardRecognizer(CreditCardRecognizer):
    """Visa, Mastercard, Amex, Discover, JCB, Diners: known issuer prefixes, 13–19 digits, Luhn."""

    PATTERNS = [
        Pattern(
            "card_4x4",
            r"\b(?:4\d{3}|5[1-5]\d{2}|2[2-7]\d{2}|6(?:011|5\d{2}|4[4-9]\d)|35\d{2}|30[0-5]\d|36\d{2}|38\d{2})"
            r"(?:[ -]?\d{4}){2}[ -]?\d{1,7}\b",
            0.5,
        ),
        Pattern("card_amex", r"\b3[47]\d{2}[ -]?\d{6}[ -]?\d{5}\b", 0.5),
    ]

    def __init__(self) -> None:
        super().__init__(patterns=list(self.PATTERNS), name="CardRecognizer")
        self.global_regex_flags = 0

    def validate_result(self, pattern_text: str) -> bool:  # noqa: D102
        digits = sum(c.isdigit() for c in pattern_text)
        return 13 <= digits <= 19 and bool(super().validate_result(pattern_text))


class IbanCodeRecognizer(IbanRecognizer):
    """IBANs with or without grouping spaces; presidio checks the checksum and country format."""

    PATTERNS = [
        Pattern(
            "iban",
            r"\b[A-Z]{2}\d{2}(?:[ -]?[A-Z0-9]{4}){2,7}(?:[ -]?[A-Z0-9]{1,3})?\b",
            0.5,
        )
    ]

    def __init__(self) -> None:
        super().__init__(patterns=list(self.PATTERNS), name="IbanCodeRecognizer")
        self.global_regex_flags = 0

    def validate_result(self, pattern_text: str) -> bool:  # noqa: D102
        # Same checks as presidio (ISO 7064 mod 97, then the country's BBAN format from
        # presidio's table), with each country's format compiled once: presidio recompiles it
        # under a timeout per call (≈ 2 ms), and a timeout there answers False, failing open.
        iban = pattern_text.replace(" ", "").replace("-", "")
        if not iban[:2].isalpha() or not iban[2:4].isdigit():
            return False
        rearranged = iban[4:] + iban[:4]
        try:
            if int("".join(str(int(c, 36)) for c in rearranged)) % 97 != 1:
                return False
        except ValueError:
            return False
        fmt = _country_format(iban[:2])
        return fmt is not None and fmt.match(iban) is not None


@lru_cache(maxsize=None)
def _country_format(country: str) -> re.Pattern[str] | None:
    source = regex_per_country.get(country)
    return re.compile(BOS + source + EOS) if source else None
