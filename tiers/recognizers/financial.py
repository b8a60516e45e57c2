"""Payment cards (Luhn) and IBANs (ISO 7064 checksum): presidio's validators behind RE2 patterns.

Presidio's own patterns use look-arounds, which RE2 cannot run; these patterns find the same
candidates and presidio's ``validate_result`` decides.
"""

from __future__ import annotations

from presidio_analyzer import Pattern
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
