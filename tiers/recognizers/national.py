"""National identifiers and other regulated numbers, straight from presidio's predefined
recognizers (their patterns, context words and checksum validators).

Patterns presidio scores below the classifier's ``min_score`` only count with one of their
context words nearby, even when a checksum passes: a random 11-digit number passes a mod-89
check one time in 89, which is far too often for a Tier 3 verdict on a spreadsheet.
"""

from __future__ import annotations

from presidio_analyzer import EntityRecognizer, Pattern, PatternRecognizer
from presidio_analyzer import predefined_recognizers as pr

__all__ = ["national_id_recognizers"]

# class, score cap (None: presidio's scores). Recognizers of bare digit runs with a one-digit
# checksum (NHS mod 11, PESEL, personnummer and Steuer-ID) are capped below ``min_score``: a
# check digit passes on 1 in 10 random numbers (timestamps, order ids, US phone numbers), too
# often to count without a context word.
_NATIONAL: tuple[tuple[type[PatternRecognizer], float | None], ...] = (
    (pr.UsSsnRecognizer, None),
    (pr.UsItinRecognizer, None),
    (pr.UsPassportRecognizer, None),
    (pr.UsLicenseRecognizer, None),
    (pr.UsBankRecognizer, None),
    (pr.NhsRecognizer, 0.1),
    (pr.UkNinoRecognizer, None),
    (pr.EsNifRecognizer, None),
    (pr.EsNieRecognizer, None),
    (pr.ItFiscalCodeRecognizer, None),
    (pr.InPanRecognizer, None),
    (pr.InAadhaarRecognizer, None),
    (pr.SgFinRecognizer, None),
    (pr.AuTfnRecognizer, None),
    (pr.AuMedicareRecognizer, None),
    (pr.PlPeselRecognizer, 0.3),
    (pr.FiPersonalIdentityCodeRecognizer, None),
    (pr.SePersonnummerRecognizer, 0.3),
    (pr.CaSinRecognizer, None),
    (pr.DeTaxIdRecognizer, 0.3),
    (pr.CryptoRecognizer, None),
)


def national_id_recognizers() -> list[EntityRecognizer]:
    """Fresh instances of the national-id recognizers, registered for English text."""
    out: list[EntityRecognizer] = []
    for cls, cap in _NATIONAL:
        rec = cls(supported_language="en")
        if cap is not None:
            rec.patterns = [Pattern(p.name, p.regex, min(p.score, cap)) for p in rec.patterns]
        out.append(rec)
    return out
