"""Spelling variants of Tier-3 and Tier-2 identifiers that once reached a shared vendor in the
clear: each is found with its entity type, one finding covers the whole original value, and
stripping leaves none of it behind."""

from __future__ import annotations

import re

import pytest

from tiers import Classifier, Tier
from tiers.stripping import PLACEHOLDER_RE

from .conftest import content


def assert_covered(clf: Classifier, text: str, value: str, entity: str) -> None:
    """One ``entity`` finding spans all of ``value`` in ``text``; stripping replaces all of it."""
    start = text.index(value)
    end = start + len(value)
    c = content(text)
    d = clf.classify(c)
    assert not d.failed_closed, d.reasons
    spans = [(f.start, f.end) for f in d.findings if f.entity_type == entity]
    assert any(s <= start and end <= e for s, e in spans), (
        entity,
        [(f.entity_type, text[f.start : f.end]) for f in d.findings],
    )
    stripped = PLACEHOLDER_RE.sub("<>", clf.strip(c, d).content.segments[0].text)
    assert value not in stripped
    # no four characters of the value with a digit among them survive, separators ignored
    core = re.sub(r"[\s._/%-]", "", value)
    flat = re.sub(r"[\s._/%-]", "", stripped)
    leaked = [core[i : i + 4] for i in range(len(core) - 3) if re.search(r"\d", core[i : i + 4])]
    assert not [w for w in leaked if w in flat], stripped


TIER3 = [
    # IBANs: the ISO 7064 checksum is case-insensitive, and so are we
    ("IBAN_CODE", "pay to {} today", "de41 2605 0000 1562 8071 31"),
    ("IBAN_CODE", "IBAN: {}", "gb54loyd30963812345672"),
    ("IBAN_CODE", "pay to {} today", "De41 2605 0000 1562 8071 31"),
    # IBANs with other separators between the groups
    ("IBAN_CODE", "pay to {} today", "DE41  2605  0000  1562  8071  31"),
    ("IBAN_CODE", "pay to {} today", "DE41\t2605\t0000\t1562\t8071\t31"),
    ("IBAN_CODE", "pay to {}\nthanks", "DE41 2605 0000\n1562 8071 31"),
    ("IBAN_CODE", "pay to {} today", "DE41.2605.0000.1562.8071.31"),
    ("IBAN_CODE", "pay to {} today", "DE41/2605/0000/1562/8071/31"),
    ("IBAN_CODE", "pay to {} today", "DE41_2605_0000_1562_8071_31"),
    ("IBAN_CODE", "pay to {} today", "gb54_loyd_3096_3812_3456_72"),
    # a greedy candidate runs into the next word or number; it is cut back to the valid value
    ("IBAN_CODE", "pay {} from the account", "BE68 5390 0754 7034"),
    ("CREDIT_CARD", "card {} 12 units", "4556 0172 8390 6414"),
    ("CREDIT_CARD", "visa {} ok", "4556 0172 8390 6414 008"),
    # cards with other separators: a dotted card once went out as a MAC address plus ".1111"
    ("CREDIT_CARD", "card {} exp 12/29", "4556  0172  8390  6414"),
    ("CREDIT_CARD", "card {} exp 12/29", "4556\t0172\t8390\t6414"),
    ("CREDIT_CARD", "card {} exp 12/29", "4556 0172\n8390 6414"),
    ("CREDIT_CARD", "card {} exp 12/29", "4556.0172.8390.6414"),
    ("CREDIT_CARD", "card {} exp 12/29", "4556/0172/8390/6414"),
    ("CREDIT_CARD", "card {} exp 12/29", "4556_0172_8390_6414"),
    ("CREDIT_CARD", "paid with {}", "5352.9841.7760.2149"),
    ("CREDIT_CARD", "amex {}", "3759.876543.21004"),
    ("CREDIT_CARD", "amex {} ok", "3759  876543\t21004"),
    # a card one group per line counts next to a card word
    ("CREDIT_CARD", "card number:\n{}\nexp 12/29", "4556\n0172\n8390\n6414"),
    # SSNs without dashes, with the context word inside an identifier or other separators
    ("US_SSN", '{{"social_security_number": "{}"}}', "536228451"),
    ("US_SSN", '{{"customer_ssn": "{}"}}', "536228451"),
    ("US_SSN", "socialSecurityNumber={}", "536228451"),
    ("US_SSN", "employeeSSN: {}", "536228451"),
    ("US_SSN", "SSN {} on file", "536  22  8451"),
    ("US_SSN", "SSN {} on file", "536_22_8451"),
    ("US_SSN", "SSN {} on file", "536/22/8451"),
    ("US_SSN", "ssn_{}", "536228451"),
    # confidentiality markers: a bare header line, and words joined by underscores or hyphens
    ("CONFIDENTIAL_LINE", "{}\n\nQ3 pricing for the tender follows.", "CONFIDENTIAL"),
    ("CONFIDENTIAL_LINE", "Q3 pricing\n*** {} ***\nfor the tender", "CONFIDENTIAL"),
    ("CONFIDENTIAL_LINE", "[{}]\nQ3 pricing", "Confidential"),
    ("CONFIDENTIAL_LINE", "{}: Q3 pricing for the tender", "CONFIDENTIAL"),
    ("CONFIDENTIALITY_MARKER", "label: {}", "STRICTLY_CONFIDENTIAL"),
    ("CONFIDENTIALITY_MARKER", "label: {}", "strictly-confidential"),
    ("CONFIDENTIALITY_MARKER", "classification={} ok", "COMPANY_CONFIDENTIAL"),
    ("CONFIDENTIALITY_MARKER", "{} draft", "Customer-Confidential"),
    ("CONFIDENTIALITY_MARKER", "marked {}", "privileged_and_confidential"),
    ("CONFIDENTIALITY_MARKER", "a {} signed", "non_disclosure_agreement"),
]


@pytest.mark.parametrize(("entity", "template", "value"), TIER3, ids=[f"{t[0]}-{i}" for i, t in enumerate(TIER3)])
def test_tier3_variant_is_found_whole(clf: Classifier, entity: str, template: str, value: str) -> None:
    """The variant is Tier 3, one finding of its entity type covers it, and stripping removes it."""
    entity = "CONFIDENTIALITY_MARKER" if entity == "CONFIDENTIAL_LINE" else entity
    text = template.format(value)
    assert clf.classify(content(text)).tier == Tier.RESTRICTED
    assert_covered(clf, text, value, entity)


TIER2 = [
    # percent-encoded addresses in log lines and URLs: the original encoded span is stripped
    ("EMAIL_ADDRESS", "GET /api/users?email={} HTTP/1.1", "jsmith%40example.com"),
    ("EMAIL_ADDRESS", "redirect=/login?next=%2F&user={}&x=1", "jane%2Edoe%40example%2Ecom"),
    ("EMAIL_ADDRESS", "upstream saw user={} in the query", "jsmith%2540example.com"),
    ("EMAIL_ADDRESS", "q: {}", "%6A%73%6D%69%74%68%40example.com"),
    # internationalised addresses: IDN domains, Unicode local parts, punycode
    ("EMAIL_ADDRESS", "write to {} today", "ivan@пример.рф"),
    ("EMAIL_ADDRESS", "write to {} today", "иван@example.com"),
    ("EMAIL_ADDRESS", "write to {}, thanks", "δοκιμή@παράδειγμα.δοκιμή"),
    ("EMAIL_ADDRESS", "write to {} today", "用户@例子.广告"),
    ("EMAIL_ADDRESS", "write to {} today", "ivan@xn--e1afmkfd.xn--p1ai"),
    ("EMAIL_ADDRESS", "write to {} today", "jörg.müller@bücher.de"),
    ("EMAIL_ADDRESS", "mail: {}", "राम@उदाहरण.भारत"),
    ("EMAIL_ADDRESS", "reply to '{}' today", "o'brien@example.com"),  # the quotes stay
    # a letter no fold table knows, inside an address: the whole address is still one finding
    ("EMAIL_ADDRESS", "write to {} today", "maria.gжnzalez@example.com"),
    # look-alike letters beyond the old hand-picked table (Unicode confusables)
    ("EMAIL_ADDRESS", "write to {} today", "maria.g\u0585nzalez@example.com"),  # Armenian oh
    ("EMAIL_ADDRESS", "write to {} today", "m\u0251ria.gonzalez@example.com"),  # Latin alpha
    ("EMAIL_ADDRESS", "write to {} today", "maria.gonzalez@example.\u03f2om"),  # Greek lunate sigma
    ("EMAIL_ADDRESS", "write to {} today", "maria.g\u1d0fnzalez@example.com"),  # small capital o
    ("CUSTOMER_NAME", "deal with {} closed", "Gl\u1d0fbex"),
    ("CUSTOMER_NAME", "deal with {} closed", "\u13aacme Rocket Works"),  # Cherokee GO for A
    ("EMPLOYEE_NAME", "ask {} about it", "Maria Gonz\u0251lez"),
    ("EMPLOYEE_NAME", "ask {} about it", "Wei Zh\u0430ng"),  # Cyrillic a (old table, still)
    # listed names wrapped, spaced out, or written "Surname, Given"
    ("EMPLOYEE_NAME", "ask {} about it", "Maria\nGonzalez"),
    ("EMPLOYEE_NAME", "ask {} about it", "Maria   Gonzalez"),
    ("EMPLOYEE_NAME", "ask {} about it", "Wei\r\n  Zhang"),
    ("EMPLOYEE_NAME", "ask {} about it", "Gonzalez, Maria"),
    ("EMPLOYEE_NAME", "owner: {}", "GONZALEZ,  Maria"),
    ("EMPLOYEE_NAME", "owner: {}.", "Türeci, Özlem"),
    ("EMPLOYEE_NAME", "owner: {}.", "Zhang,Wei"),
    ("CUSTOMER_NAME", "deal with {} closed", "Acme  Rocket\nWorks"),
    ("SUPPLIER_NAME", "from {} via", "Vandelay\tIndustries"),
]


@pytest.mark.parametrize(("entity", "template", "value"), TIER2, ids=[f"{t[0]}-{i}" for i, t in enumerate(TIER2)])
def test_tier2_variant_is_found_whole(clf: Classifier, entity: str, template: str, value: str) -> None:
    """The variant is found with its entity type over the whole original span, and stripping
    replaces exactly that span with one placeholder."""
    text = template.format(value)
    assert_covered(clf, text, value, entity)
    c = content(text)
    s = clf.strip(c, clf.classify(c))
    out = s.content.segments[0].text
    (ph,) = [p for p, v in s.mapping.items() if v == value]
    assert out == text.replace(value, ph)


def test_percent_encoded_address_maps_back_to_the_encoded_span(clf: Classifier) -> None:
    """The finding's offsets are those of the encoded text, not of the decoded one."""
    text = "2024-05-01 GET /u?e=jsmith%40example.com&next=%2Fhome 200"
    d = clf.classify(content(text))
    emails = [text[f.start : f.end] for f in d.findings if f.entity_type == "EMAIL_ADDRESS"]
    assert emails == ["jsmith%40example.com"]


NEAR_MISSES = [
    # a column of four-digit numbers is not a card without a card word nearby
    ("CREDIT_CARD", "qty\n4556\n0172\n8390\n6414\ntotal 8444"),
    ("CREDIT_CARD", "| id | qty |\n|---|---|\n| 4532 | 0151 |\n| 1283 | 0366 |\n"),
    # digits of unrelated numbers across lines, failing Luhn
    ("CREDIT_CARD", "4556 0172\n8390 6415\n"),
    ("IBAN_CODE", "de89 3704 0044 0532 0130 01"),
    # dotted numbers that are versions, dates or decimals
    ("CREDIT_CARD", "build 4556.0172.8390.6415 and 2024.01.15 and 3.14159265358979"),
    # the word confidential in prose, in code and as part of another word
    ("CONFIDENTIALITY_MARKER", "please keep this confidential between us"),
    ("CONFIDENTIALITY_MARKER", "CONFIDENTIAL = 3\nlevel = Level.CONFIDENTIAL\n"),
    ("CONFIDENTIALITY_MARKER", "confidentiality\nCONFIDENTIALLY\n"),
    ("CONFIDENTIALITY_MARKER", "def is_confidential(doc):\n    return doc.confidential\n"),
    # percent signs that decode to nothing like an address
    ("EMAIL_ADDRESS", "discount 50%40 off, 100%25 sure, %zz and %4"),
    # context words count inside identifiers, not inside longer words
    ("US_PASSPORT", "USER 123456789 and USB 123456789"),
    ("US_BANK_NUMBER", "checksum 12345678901 and checked 12345678901"),
    ("US_SSN", "ASSN 536228451 and issn 536228451"),
    # a dotted run of hex groups is not a MAC address
    ("MAC_ADDRESS", "build abcd.ef01.2345.6789 and 0011.2233.4455.6677"),
    # Surname, Given for words that merely follow each other
    ("EMPLOYEE_NAME", "Maria, Gonzalez and Zhang, Maria"),
]


@pytest.mark.parametrize(("entity", "text"), NEAR_MISSES, ids=[f"{n[0]}-{i}" for i, n in enumerate(NEAR_MISSES)])
def test_variant_near_miss(clf: Classifier, entity: str, text: str) -> None:
    """Looser separators and spellings do not turn ordinary text into findings."""
    d = clf.classify(content(text))
    assert not d.failed_closed
    assert [text[f.start : f.end] for f in d.findings if f.entity_type == entity] == []
