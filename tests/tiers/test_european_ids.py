"""German, French and EU identifiers and IBANs of every registry country: table-driven, each
value found exactly with its context word and not without it (presidio-analyzer's test style)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from stdnum import iban as stdnum_iban
from stdnum.iso7064 import mod_97_10

from tiers import Classifier
from tiers.recognizers.european import icao_check, rvnr_is_valid
from tiers.recognizers.financial import _FORMATS

from .test_recognizers import found

POSITIVES = [
    # German tax id: context words in German, with and without hyphens, grouped or not
    ("DE_TAX_ID", "Steuer-ID {}", "86095742719"),
    ("DE_TAX_ID", "Steuer ID {}", "86095742719"),
    ("DE_TAX_ID", "Steuer-ID: {}", "86 095 742 719"),
    ("DE_TAX_ID", "Ihre Steueridentifikationsnummer lautet {}.", "47036892816"),
    ("DE_TAX_ID", "persönliche Identifikationsnummer {}", "86095742719"),
    ("DE_TAX_ID", '{{"steuer_id": "{}"}}', "86095742719"),
    # social-security and ID-card numbers
    ("DE_SOCIAL_SECURITY", "Sozialversicherungsnummer: {}", "15070649C103"),
    ("DE_SOCIAL_SECURITY", "SV-Nummer {} (Rentenversicherung)", "15 070649 C 103"),
    ("DE_ID_CARD", "Personalausweis {}", "T220001293"),
    ("DE_ID_CARD", "Ausweisnummer: {}", "L01X00T471"),
    # France
    ("FR_NIR", "numéro de sécurité sociale {}", "1 84 12 76 451 089 46"),
    ("FR_NIR", "N° de Sécurité Sociale : {}", "184127645108946"),
    ("FR_NIR", "carte vitale {}", "2 69 05 2A 123 456 88"),
    ("FR_SIREN", "SIREN {}", "732 829 320"),
    ("FR_SIREN", "SIRET : {}", "732 829 320 00074"),
    ("FR_SIREN", "RCS Paris {}", "552100554"),
    # VAT numbers, each with its country's rule
    ("EU_VAT", "USt-IdNr. {}", "DE136695976"),
    ("EU_VAT", "n° TVA intracommunautaire {}", "FR40303265045"),
    ("EU_VAT", "VAT number {}", "ATU13585627"),
    ("EU_VAT", "BTW {}", "NL004495445B01"),
    # IBANs: countries presidio's table lacked, and the shorter-span retry before a currency
    ("IBAN_CODE", "NIB/IBAN {}", "PT50000201231234567890154"),
    ("IBAN_CODE", "IBAN {} EUR", "PT50 0002 0123 1234 5678 9015 4"),
    ("IBAN_CODE", "IBAN: {}", "MU17BOMM0101101030300200000MUR"),
    ("IBAN_CODE", "IBAN {}", "PS92PALS000000000400123456702"),
    ("IBAN_CODE", "IBAN {}", "QA58DOHB00001234567890ABCDEFG"),
    ("IBAN_CODE", "pay {} EUR today", "BE68 5390 0754 7034"),
    ("IBAN_CODE", "pay {} EUR today", "BE68539007547034"),
    ("IBAN_CODE", "Konto {} EUR", "DE41 2605 0000 1562 8071 31"),
    ("IBAN_CODE", "paid {} PLN", "PL61 1090 1014 0000 0712 1981 2874"),
    ("IBAN_CODE", "rib {} EUR", "FR76 3000 6000 0112 3456 7890 189"),
    ("CA_SIN", "SIN {}", "130 692 544"),
    ("CA_SIN", "numéro d'assurance sociale : {}", "130-692-544"),
]


@pytest.mark.parametrize(
    ("entity", "template", "value"), POSITIVES, ids=[f"{p[0]}-{i}" for i, p in enumerate(POSITIVES)]
)
def test_true_positive(clf: Classifier, entity: str, template: str, value: str) -> None:
    """The recognizer reports exactly the planted value."""
    assert (entity, value) in found(clf, template.format(value))


NEAR_MISSES = [
    # valid checksums but no context word: numbers in a spreadsheet
    ("DE_TAX_ID", "order 86095742719 shipped"),
    ("DE_SOCIAL_SECURITY", "part 15070649C103 in stock"),
    ("DE_ID_CARD", "ticket T220001293 closed"),
    ("FR_NIR", "row 184127645108946 total"),
    ("FR_SIREN", "invoice 732829320 paid"),
    ("EU_VAT", "model DE136695976 released"),
    # context word but a wrong checksum
    ("DE_TAX_ID", "Steuer-ID 86095742718"),
    ("DE_SOCIAL_SECURITY", "Sozialversicherungsnummer 15070649C104"),
    ("DE_ID_CARD", "Personalausweis T220001294"),
    ("FR_NIR", "sécurité sociale 1 84 12 76 451 089 47"),
    ("FR_SIREN", "SIREN 732 829 321"),
    ("EU_VAT", "USt-IdNr. DE136695977"),
    ("IBAN_CODE", "IBAN PT50000201231234567890155"),
    ("IBAN_CODE", "IBAN PT50 0002 0123 1234 5678 9015"),  # one digit short of Portugal's 25
    # a SIREN passes Luhn like a Canadian SIN: without a SIN word it is no SIN
    ("CA_SIN", "SIREN 732 829 320"),
    ("CA_SIN", "ref 130 692 544 total"),
]


@pytest.mark.parametrize(("entity", "text"), NEAR_MISSES, ids=[f"{n[0]}-{i}" for i, n in enumerate(NEAR_MISSES)])
def test_near_miss(clf: Classifier, entity: str, text: str) -> None:
    """Without a context word, or with a wrong check digit, nothing of that type is found."""
    assert entity not in {e for e, _ in found(clf, text)}


def test_every_registry_country_has_its_format() -> None:
    """Each country of stdnum's IBAN registry table has a format; the ones presidio lacked too."""
    assert {"PT", "MU", "PS", "QA", "DE", "FR", "GB", "LC", "RU"} <= set(_FORMATS)
    assert len(_FORMATS) >= 85


def _make_iban(country: str, rnd: st.DrawFn) -> str:
    fmt = _FORMATS[country].pattern[len(country) + len("[0-9]{2}") :]
    body = rnd(st.from_regex(f"\\A{fmt}\\Z", fullmatch=True))
    check = 98 - int(mod_97_10.checksum(body + country + "00"))
    return f"{country}{check:02d}{body}" if check != 98 else f"{country}98{body}"


@settings(max_examples=60, deadline=None)
@given(data=st.data(), country=st.sampled_from(sorted(_FORMATS)))
def test_any_registry_iban_is_found_whole(clf: Classifier, data: st.DataObject, country: str) -> None:
    """A valid IBAN of any registry country, grouped by four and followed by a currency, is
    found whole (the retry cuts the currency off, never a group of the IBAN)."""
    iban = _make_iban(country, data.draw)
    if not stdnum_iban.is_valid(iban):  # the body drawn happens to fail a national check
        return
    grouped = " ".join(iban[i : i + 4] for i in range(0, len(iban), 4))
    text = f"please pay {grouped} EUR by Friday"
    assert ("IBAN_CODE", grouped) in found(clf, text)


@pytest.mark.parametrize(
    ("value", "ok"),
    [("15070649C103", True), ("15070649C104", False), ("65170839J003", True), ("15071349C103", False)],
)
def test_rvnr_check_digit(value: str, ok: bool) -> None:
    """The German social-security check digit (DRV weights), month range included."""
    assert rvnr_is_valid(value) is ok


def test_icao_check_digit() -> None:
    """ICAO 9303's 7-3-1 check digit, as on the specimen German ID card (T22000129 -> 3)."""
    assert icao_check("T22000129") == 3
