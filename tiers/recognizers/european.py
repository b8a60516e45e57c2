"""German and French identifiers and EU VAT numbers, with German and French context words.

Checksums come from python-stdnum (https://pypi.org/project/python-stdnum/, Arthur de Jong,
LGPL-2.1-or-later; imported unmodified as a dependency, nothing copied from it): it is kept up to
date with the registries' rules, which hand-written checks are not. The German social-security
number and the German ID card have no stdnum module; their check digits are computed here
(DRV's weights 2 1 2 5 7 1 2 1 2 1 2 1, ICAO 9303's 7 3 1).

Every pattern here is weak (below ``min_score``): an 11-digit number passes the Steuer-ID check
about one time in ten, a 9-digit one Luhn (SIREN) one time in ten, so each counts only with one
of its context words nearby. Context words are written as people write them ("Steuer-ID",
"n° SIRET", "numéro de sécurité sociale"); the scanner matches them after the same normalisation
as the text (accents folded, hyphens, underscores and spaces between words interchangeable).
"""

from __future__ import annotations

import re

from presidio_analyzer import Pattern
from stdnum.de import idnr
from stdnum.eu import vat
from stdnum.fr import nir, siren, siret

from ._base import TiersPatternRecognizer

__all__ = ["european_id_recognizers"]

_NON_ALNUM = re.compile(r"[^0-9A-Za-z]")


def _compact(text: str) -> str:
    return _NON_ALNUM.sub("", text).upper()


class DeTaxIdRecognizer(TiersPatternRecognizer):
    """Steuerliche Identifikationsnummer: 11 digits, often grouped 2-3-3-3; ``stdnum.de.idnr``."""

    ENTITY = "DE_TAX_ID"
    PATTERNS = [
        Pattern("de_tax_id", r"\b[1-9][0-9](?:[ ./]?[0-9]{3}){3}\b", 0.3),
    ]
    CONTEXT = [
        "steuer-id",
        "steuerid",
        "steuer-idnr",
        "idnr",
        "steueridentifikationsnummer",
        "steuerliche identifikationsnummer",
        "identifikationsnummer",
        "persönliche identifikationsnummer",
        "steuer identifikation",
        "tin",
        "tax id",
        "tax identification number",
        "bzst",
    ]

    def validate_result(self, pattern_text: str) -> bool:
        return bool(idnr.is_valid(_compact(pattern_text)))


_RVNR_WEIGHTS = (2, 1, 2, 5, 7, 1, 2, 1, 2, 1, 2, 1)


def rvnr_is_valid(value: str) -> bool:
    """German pension / social-security number (Versicherungsnummer): area (2 digits), birth
    date DDMMYY, the surname's initial, serial (2 digits), check digit; the letter counts as its
    two-digit place in the alphabet."""
    v = _compact(value)
    if not re.fullmatch(r"[0-9]{8}[A-Z][0-9]{3}", v):
        return False
    day, month = int(v[2:4]), int(v[4:6])
    if not (1 <= day % 50 <= 31 or day == 0) or not 1 <= month <= 12:  # day+50: a second serial
        return False
    digits = v[:8] + f"{ord(v[8]) - 64:02d}" + v[9:11]
    total = sum(sum(divmod(int(d) * w, 10)) for d, w in zip(digits, _RVNR_WEIGHTS))
    return total % 10 == int(v[11])


class DeSocialSecurityRecognizer(TiersPatternRecognizer):
    """Sozialversicherungsnummer / Rentenversicherungsnummer: ``65 170839 J 003``."""

    ENTITY = "DE_SOCIAL_SECURITY"
    PATTERNS = [
        Pattern("de_rvnr", r"\b[0-9]{2}[ ]?[0-9]{6}[ ]?[A-Za-z][ ]?[0-9]{3}\b", 0.3),
    ]
    CONTEXT = [
        "sozialversicherungsnummer",
        "sv-nummer",
        "svnr",
        "sv-nr",
        "versicherungsnummer",
        "rentenversicherungsnummer",
        "rvnr",
        "sozialversicherungsausweis",
        "social security",
    ]

    def validate_result(self, pattern_text: str) -> bool:
        return rvnr_is_valid(pattern_text)


_ICAO_WEIGHTS = (7, 3, 1)
_ID_CARD_LETTERS = "CFGHJKLMNPRTVWXYZ"


def icao_check(body: str) -> int:
    """ICAO 9303 check digit: digits as themselves, letters A=10 … Z=35, weights 7 3 1."""
    total = 0
    for i, c in enumerate(body):
        n = int(c) if c.isdigit() else ord(c) - 55
        total += n * _ICAO_WEIGHTS[i % 3]
    return total % 10


class DeIdCardRecognizer(TiersPatternRecognizer):
    """Personalausweis (since 2010) and Reisepass serial numbers: nine characters of a reduced
    alphabet starting with a letter, and the ICAO check digit (``T22000129`` + ``3``)."""

    ENTITY = "DE_ID_CARD"
    PATTERNS = [
        Pattern("de_id_card", r"\b[CFGHJKLMNPRTVWXYZ][CFGHJKLMNPRTVWXYZ0-9]{8}[0-9]\b", 0.3),
    ]
    CONTEXT = [
        "personalausweis",
        "personalausweisnummer",
        "ausweisnummer",
        "ausweis-nr",
        "ausweis",
        "reisepass",
        "passnummer",
        "id card",
        "identity card",
        "dokumentennummer",
    ]

    def validate_result(self, pattern_text: str) -> bool:
        v = pattern_text.upper()
        return any(c.isdigit() for c in v[:9]) and icao_check(v[:9]) == int(v[9])


class FrNirRecognizer(TiersPatternRecognizer):
    """Numéro d'inscription au répertoire (sécurité sociale): sex, year, month, département,
    commune, serial and the mod-97 key, usually grouped ``1 84 12 76 451 089 46``;
    ``stdnum.fr.nir`` (Corsican 2A/2B included)."""

    ENTITY = "FR_NIR"
    PATTERNS = [
        Pattern(
            "fr_nir",
            r"\b[1-478][ .]?[0-9]{2}[ .]?[0-9]{2}[ .]?(?:[0-9]{2}|2[AaBb])[ .]?[0-9]{3}[ .]?[0-9]{3}[ .]?[0-9]{2}\b",
            0.3,
        ),
    ]
    CONTEXT = [
        "nir",
        "numéro de sécurité sociale",
        "sécurité sociale",
        "numéro ss",
        "n° ss",
        "no ss",
        "numéro insee",
        "insee",
        "carte vitale",
        "assuré social",
        "social security",
    ]

    def validate_result(self, pattern_text: str) -> bool:
        return bool(nir.is_valid(_compact(pattern_text)))


class FrSirenRecognizer(TiersPatternRecognizer):
    """SIREN (9 digits, often ``732 829 320``) and SIRET (SIREN + 5-digit establishment);
    Luhn via ``stdnum.fr.siren`` / ``stdnum.fr.siret``."""

    ENTITY = "FR_SIREN"
    PATTERNS = [
        Pattern("fr_siret", r"\b[0-9]{3}[ .]?[0-9]{3}[ .]?[0-9]{3}[ .]?[0-9]{5}\b", 0.3),
        Pattern("fr_siren", r"\b[0-9]{3}[ .]?[0-9]{3}[ .]?[0-9]{3}\b", 0.3),
    ]
    CONTEXT = ["siren", "siret", "rcs", "n° siren", "n° siret", "numéro siren", "numéro siret", "kbis"]

    def validate_result(self, pattern_text: str) -> bool:
        v = _compact(pattern_text)
        return bool(siret.is_valid(v) if len(v) == 14 else siren.is_valid(v))


_VAT_COUNTRIES = "AT|BE|BG|CY|CZ|DE|DK|EE|EL|ES|FI|FR|HR|HU|IE|IT|LT|LU|LV|MT|NL|PL|PT|RO|SE|SI|SK|XI"


class EuVatRecognizer(TiersPatternRecognizer):
    """EU VAT identification numbers with their country prefix (``DE136695976``,
    ``FR 40 303265045``, ``ATU13585627``); each country's rule via ``stdnum.eu.vat``."""

    ENTITY = "EU_VAT"
    PATTERNS = [
        Pattern("eu_vat", r"\b(?:" + _VAT_COUNTRIES + r")[ ]?[0-9A-Z](?:[ .]?[0-9A-Z]){7,11}\b", 0.3),
    ]
    CONTEXT = [
        "vat",
        "vat id",
        "vat number",
        "vat reg",
        "ust-idnr",
        "ust-id",
        "ustid",
        "ust-id-nr",
        "umsatzsteuer-identifikationsnummer",
        "umsatzsteuer",
        "tva",
        "n° tva",
        "numéro de tva",
        "tva intracommunautaire",
        "partita iva",
        "btw",
        "nif-iva",
        "moms",
    ]

    def validate_result(self, pattern_text: str) -> bool:
        v = _compact(pattern_text)
        return sum(c.isdigit() for c in v) >= 7 and bool(vat.is_valid(v))


def european_id_recognizers() -> list[TiersPatternRecognizer]:
    """Fresh instances of the German, French and EU identifier recognizers."""
    return [
        DeTaxIdRecognizer(),
        DeSocialSecurityRecognizer(),
        DeIdCardRecognizer(),
        FrNirRecognizer(),
        FrSirenRecognizer(),
        EuVatRecognizer(),
    ]
