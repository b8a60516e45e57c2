"""Table-driven tests per recognizer: true positives (the exact value is found) and near-misses
that must not match."""

from __future__ import annotations

import pytest

from tiers import Classifier

from .conftest import content


def found(clf: Classifier, text: str) -> set[tuple[str, str]]:
    d = clf.classify(content(text))
    assert not d.failed_closed, d.reasons
    return {(f.entity_type, text[f.start : f.end]) for f in d.findings}


POSITIVES = [
    # e-mail
    ("EMAIL_ADDRESS", "write to {} today", "maria.gonzalez@example.com"),
    ("EMAIL_ADDRESS", "cc: {}", "ops+alerts@mail.acme-corp.co.uk"),
    # phones (regions: defaults incl. US, GB, DE, FR)
    ("PHONE_NUMBER", "call {} now", "(415) 555-2671"),
    ("PHONE_NUMBER", "call {} now", "415-555-2671"),
    ("PHONE_NUMBER", "tel {}", "+44 20 7946 0958"),
    ("PHONE_NUMBER", "Tel.: {}", "030 901820"),
    ("PHONE_NUMBER", "portable {}", "06 12 34 56 78"),
    ("PHONE_NUMBER", "ring {}", "+49 30 901820"),
    ("PHONE_NUMBER", "mobile {} any time", "98765 43210"),
    ("PHONE_NUMBER", "office {}", "(362) 748-7752"),
    # cards and IBANs
    ("CREDIT_CARD", "card {} exp 12/29", "4111 1111 1111 1111"),
    ("CREDIT_CARD", "paid with {}", "5500-0000-0000-0004"),
    ("CREDIT_CARD", "amex {}", "3782 822463 10005"),
    ("IBAN_CODE", "pay to {}", "DE89 3704 0044 0532 0130 00"),
    ("IBAN_CODE", "IBAN: {}", "GB82WEST12345698765432"),
    # national ids
    ("US_SSN", "SSN {}", "536-22-8451"),
    ("US_SSN", "social security number: {}", "536228451"),
    ("UK_NHS", "NHS number {}", "943 476 5919"),
    ("ES_NIF", "NIF {}", "12345678Z"),
    # network
    ("IP_ADDRESS", "server at {} is down", "10.20.30.40"),
    ("IP_ADDRESS", "v6 {} up", "2a00:1450:4001:82a::8a2e:370:7334"),
    ("MAC_ADDRESS", "nic {}", "00:1A:2B:3C:4D:5E"),
    ("INTERNAL_HOST", "ssh {} then", "build-01.corp.example.com"),
    ("INTERNAL_HOST", "see https://{}/x", "wiki.eu.internal"),
    # secrets
    ("SECRET", "key {}", "AKIAIOSFODNN7EXAMPLE"),
    ("SECRET", "OPENAI={}", "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"),
    ("SECRET", "token {}", "sk-ant-api03-" + "x7Yz" * 23),
    ("SECRET", "gh {}", "ghp_" + "a1B2c3D4e5" * 3 + "f6G7h8"),
    ("SECRET", "gh {}", "github_pat_11ABCDEFG0" + "abcdEFGH12" * 6),
    ("SECRET", "gl {}", "glpat-xY7zQ2vR9sT4uW1pK8mN"),
    ("SECRET", "slack {}", "xoxb-123456789012-123456789012-AbCdEfGhIjKlMnOpQrStUvWx"),
    ("SECRET", "stripe {}", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    ("SECRET", "google {}", "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"),
    (
        "SECRET",
        "jwt {}",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ),
    ("SECRET", "db {}", "postgresql://app:S3cr3tPw!@db.example.com:5432/app"),
    ("SECRET", "DATABASE_PASSWORD={}", "hunter2hunter2"),
    ("SECRET", 'config = {{"api_key": "{}"}}', "q8Zr3LmN0pXv7Ty2"),
    (
        "SECRET",
        "{}",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7bq\nabcdEFGH1234+/==\n-----END RSA PRIVATE KEY-----",
    ),
    # known names (case-insensitive, whole words, normalised)
    ("CUSTOMER_NAME", "deal with {} closed", "ACME ROCKET WORKS"),
    ("CUSTOMER_NAME", "{}'s order", "Globex"),
    ("SUPPLIER_NAME", "from {} via", "Vandelay Industries"),
    ("EMPLOYEE_NAME", "ask {} about it", "maria gonzalez"),
    ("EMPLOYEE_NAME", "ask {} about it", "Özlem Türeci"),
    # domain ids
    ("BATCH_ID", "Batch No. {} released", "B2024-0117"),
    ("BATCH_ID", "lot {} failed", "L240311A"),
    ("DEVIATION_ID", "see {} for details", "DEV-2024-0031"),
    ("CAPA_ID", "CAPA-{} opened", "2024-017"),
    ("PART_NUMBER", "P/N {} on order", "77-4410-B"),
    ("PART_NUMBER", "order {} today", "TGX-1234-AB"),
    # markers
    ("CONFIDENTIALITY_MARKER", "{}: do not share", "Customer Confidential"),
    ("CONFIDENTIALITY_MARKER", "signed an {} last week", "NDA"),
    ("CONFIDENTIALITY_MARKER", "re {} kickoff", "Project Bluebird"),
    ("EXPORT_CONTROL_MARKER", "this drawing is {}", "ITAR-controlled"),
    ("EXPORT_CONTROL_MARKER", "classified {}", "EAR99"),
    ("GMP_MARKER", "attached is the {}", "GMP batch record"),
    ("GMP_MARKER", "step 4 of the {}", "validated   process"),
]


@pytest.mark.parametrize(
    ("entity", "template", "value"), POSITIVES, ids=[f"{p[0]}-{i}" for i, p in enumerate(POSITIVES)]
)
def test_true_positive(clf: Classifier, entity: str, template: str, value: str) -> None:
    """The recognizer reports exactly the planted value with its entity type."""
    text = template.format(value)
    assert (entity, value) in found(clf, text)


NEAR_MISSES = [
    # e-mail-like but not addresses
    ("EMAIL_ADDRESS", "decorators like @property and logo@2x.png"),
    ("EMAIL_ADDRESS", "user@localhost is not routable"),
    # digits that are not phones
    ("PHONE_NUMBER", "version 1.2.3 released 2024-01-15 at 10:30"),
    ("PHONE_NUMBER", "total 1234567 units"),
    ("PHONE_NUMBER", "call 555-123-4567 (invalid area code)"),
    # cards failing Luhn or the issuer prefix
    ("CREDIT_CARD", "card 4111 1111 1111 1112"),
    ("CREDIT_CARD", "number 1234 5678 9012 3456"),
    # IBAN with a wrong checksum
    ("IBAN_CODE", "pay to DE89 3704 0044 0532 0130 01"),
    # SSN-like without context or with invalid areas
    ("US_SSN", "ref 666-12-3456 and 000-12-3456"),
    ("US_SSN", "order 536228451 shipped"),
    ("UK_NHS", "order 9434765919 shipped"),
    # IPs that identify nothing, and versions / clock times
    ("IP_ADDRESS", "bind to 127.0.0.1 or 0.0.0.0"),
    ("IP_ADDRESS", "at 12:30:45 the job ran"),
    ("IP_ADDRESS", "use std::vector<int> here"),
    ("INTERNAL_HOST", "see corp.example.com.evil.org and internalize"),
    ("MAC_ADDRESS", "mixed 00:1A-2B:3C-4D:5E"),
    # secret-shaped but not secret
    ("SECRET", "sk-short and AKIA123"),
    ("SECRET", "token = get_token()"),
    ("SECRET", "PASSWORD=changeme"),
    ("SECRET", "API_KEY=${API_KEY}"),
    ("SECRET", "postgresql://localhost:5432/app"),
    ("SECRET", "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkq\n-----END PUBLIC KEY-----"),
    # names: only whole words
    ("CUSTOMER_NAME", "globexian architecture and Acme Rocket Worksheet"),
    ("EMPLOYEE_NAME", "Maria and Gonzalez separately"),
    # domain ids need their keyword and a digit
    ("BATCH_ID", "batch processing of a lot of jobs"),
    ("BATCH_ID", "lot 1000 units"),
    ("CAPA_ID", "capacity planning"),
    ("PART_NUMBER", "part of the plan"),
    # markers are whole phrases, not substrings
    ("CONFIDENTIALITY_MARKER", "the standard says confidentially"),
    ("EXPORT_CONTROL_MARKER", "guitar and zitar and the ear"),
    ("GMP_MARKER", "the batch was recorded"),
]


@pytest.mark.parametrize(("entity", "text"), NEAR_MISSES, ids=[f"{n[0]}-{i}" for i, n in enumerate(NEAR_MISSES)])
def test_near_miss(clf: Classifier, entity: str, text: str) -> None:
    """Text that resembles the entity but is not one yields no finding of that type."""
    assert not {e for e, _ in found(clf, text)} & {entity}
