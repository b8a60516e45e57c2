"""Table-driven tests per recognizer: true positives (the exact value is found) and near-misses
that must not match."""

from __future__ import annotations

import ipaddress
import itertools
import random
from pathlib import Path

import phonenumbers
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import tldextract
from stdnum.iso7064 import mod_97_10

from tiers import Classifier
from tiers.recognizers.contact import _FILE_EXTENSIONS
from tiers.recognizers.financial import PUBLISHED_EXAMPLE_IBANS

from .conftest import content


def found(clf: Classifier, text: str) -> set[tuple[str, str]]:
    d = clf.classify(content(text))
    assert not d.failed_closed, d.reasons
    return {(f.entity_type, text[f.start : f.end]) for f in d.findings}


POSITIVES = [
    # e-mail
    ("EMAIL_ADDRESS", "write to {} today", "maria.gonzalez@example.com"),
    ("EMAIL_ADDRESS", "cc: {}", "ops+alerts@mail.acme-corp.co.uk"),
    # a person at a placeholder's domain, a placeholder mailbox at a firm's, and an address
    # before a colon that opens a clause: mailboxes all
    ("EMAIL_ADDRESS", "author_email = {}", "maria@test.com"),
    ("EMAIL_ADDRESS", "escalate to {}", "test@acme-corp.com"),
    # "--" below the registered name: a Google Cloud project's id may hold it
    ("EMAIL_ADDRESS", '"client_email": "{}",', "deploy@a0--00.iam.gserviceaccount.com"),
    ("EMAIL_ADDRESS", "write to {}: she knows", "maria@acme-corp.com"),
    # phones (regions: defaults incl. US, GB, DE, FR)
    ("PHONE_NUMBER", "call {} now", "(415) 555-2671"),
    ("PHONE_NUMBER", "call {} now", "415-555-2671"),
    ("PHONE_NUMBER", "tel {}", "+44 20 7946 0958"),
    ("PHONE_NUMBER", "Tel.: {}", "030 901820"),
    ("PHONE_NUMBER", "portable {}", "06 12 34 56 78"),
    ("PHONE_NUMBER", "Tél. : {} (standard)", "01 42 68 53 00"),
    ("PHONE_NUMBER", "ring {}", "+49 30 901820"),
    ("PHONE_NUMBER", "mobile {} any time", "98765 43210"),
    ("PHONE_NUMBER", "office {}", "(362) 748-7752"),
    # cards and IBANs
    ("CREDIT_CARD", "card {} exp 12/29", "4556 0172 8390 6414"),
    ("CREDIT_CARD", "paid with {}", "5352-9841-7760-2149"),
    ("CREDIT_CARD", "amex {}", "3759 876543 21004"),
    ("IBAN_CODE", "pay to {}", "DE41 2605 0000 1562 8071 31"),
    ("IBAN_CODE", "IBAN: {}", "GB54LOYD30963812345672"),
    # national ids
    ("US_SSN", "SSN {}", "536-22-8451"),
    ("US_SSN", "social security number: {}", "536228451"),
    ("UK_NHS", "NHS number {}", "943 476 5919"),
    ("ES_NIF", "NIF {}", "12345678Z"),
    # network
    ("IP_ADDRESS", "server at {} is down", "10.20.30.40"),
    ("IP_ADDRESS", "v6 {} up", "2a00:1450:4001:82a::8a2e:370:7334"),
    ("MAC_ADDRESS", "nic {}", "00:1B:63:84:45:E6"),
    ("MAC_ADDRESS", "eth0 ether {} up", "3c:22:fb:7a:91:0e"),
    ("MAC_ADDRESS", "hw {}", "F4-5C-89-A1-0B-7E"),
    # real addresses in prose that also numbers sections, clauses and versions
    ("IP_ADDRESS", "section 4 lists {} as the proxy", "10.1.2.3"),
    ("IP_ADDRESS", "per ISO 27001 the host {} is logged", "172.16.5.4"),
    ("IP_ADDRESS", "Version 2 runs on {}", "192.168.10.20"),
    ("IP_ADDRESS", "Note: {} is the database host", "10.0.0.5"),
    ("IP_ADDRESS", "routing table {} via 10.0.0.1", "10.8.0.0/24"),
    ("IP_ADDRESS", "traffic from 10.0.0.1 -> {}", "10.0.0.2"),
    ("IP_ADDRESS", "see figure 3; the NAT gateway is {}", "52.14.203.7"),
    # beside a link-local address and a private block's broadcast, which are left out
    ("IP_ADDRESS", "fe80::1ff:fe23:4567:890a%eth0 and the host {}", "10.255.255.254"),
    ("IP_ADDRESS", "broadcast 192.168.255.255, gateway {}", "192.168.255.1"),
    ("IP_ADDRESS", "global v6 {} beside fe80::1", "2a00:1450:4001:82a::200e"),
    # beside a list of section numbers, a version before "or higher", a 0.x version
    ("IP_ADDRESS", "sections 5.2.4 and 6.2.2.3 say the proxy is {}", "10.1.2.3"),
    ("IP_ADDRESS", "requires matplotlib 0.98.5.3 or higher on {}", "172.16.9.8"),
    ("IP_ADDRESS", "the hosts {} and 10.0.0.9", "10.0.0.7"),
    # digits beside decimals, sequences and constants of code (seventh group)
    ("CREDIT_CARD", "record (17, {}, 12, 2027)", "4556017283906414"),
    ("CREDIT_CARD", "card {} today", "4520.1395 8832 7014"),
    ("CREDIT_CARD", "card {} today", "4556.0172.8390.6414"),
    ("CREDIT_CARD", "cards = [4520139588327014, 4556017283906414, {}]", "5352984177602149"),
    ("PHONE_NUMBER", "mobile {}. Or 6 78498 78527.3994", "98765 43210"),
    ("US_BANK_NUMBER", "if TYPE_CHECKING:\n    pass\nACCOUNT_NO = {}\n", "156384712"),
    ("US_BANK_NUMBER", "checking account {} at the bank", "156384712"),
    ("SECRET", "SOCKS_PASSWORD = {}\n", "Zx9!mQ2#vL7p"),
    ("SG_NRIC_FIN", "The customer's FIN, e.g. {}, is on file.", "S2740116C"),
    ("SG_NRIC_FIN", "A FIN has nine characters. Hers is {}.", "S2740116C"),
    # confidentiality of the text itself, also as a heading or defined term
    (
        "CONFIDENTIALITY_MARKER",
        "This e-mail contains {} and is intended for the addressee.",
        "confidential information",
    ),
    ("CONFIDENTIALITY_MARKER", "The attached report includes {} of Acme.", "confidential information"),
    ("CONFIDENTIALITY_MARKER", "# {}\nQ3 pricing follows", "CONFIDENTIAL INFORMATION"),
    ("CONFIDENTIALITY_MARKER", "The Recipient shall protect all {} received.", "Confidential Information"),
    ("CONFIDENTIALITY_MARKER", "Ce document contient des informations: {}", "strictly confidential"),
    ("IP_ADDRESS", "reach it at [{}]:443", "2a00:1450:4001:82a::200e"),
    # German ring roads: "ring" glued to a consonant, an "a" or an "r"
    ("ADDRESS", "Anschrift: {}", "Kaiserring 12, 68161 Mannheim"),
    ("ADDRESS", "Anschrift: {}", "Hansaring 5"),
    # phones next to what the citation and MAC rules read
    ("PHONE_NUMBER", "doi:10.1000/182, call {} for a copy", "+44 20 7946 0958"),
    ("PHONE_NUMBER", "Phys. Rev. E 78, tel {}", "+33 1 42 68 53 00"),
    ("PHONE_NUMBER", "ISSN 0209-9683; fax {}", "030 901820"),
    ("PHONE_NUMBER", "portable {} (MAC 3c:22:fb:7a:91:0e)", "06 12 34 56 78"),
    ("PHONE_NUMBER", "call {}", "(650) 555-1213"),
    # next to object identifiers, versions, SSH algorithm names and hex words (fifth group)
    ("IP_ADDRESS", 'oid = ObjectIdentifier("2.5.4.3")  # served from {}', "10.20.30.41"),
    ("IP_ADDRESS", '__version__ = "3.5.0.1"; HOST = "{}"', "172.16.9.8"),
    ("IP_ADDRESS", "void f(); host {} up", "10.4.4.4"),
    ("EMAIL_ADDRESS", 'b"aes256-gcm@openssh.com" was set up by {}', "jean-luc@acme-corp.fr"),
    ("EMAIL_ADDRESS", "write to {}", "mary-ann2@gmail.com"),
    ("EMAIL_ADDRESS", "the RSA team: {}", "rsa-team@acme-corp.com"),
    # a short word of algorithm names alone makes no algorithm name ("v" of "-cert-v01")
    ("EMAIL_ADDRESS", "write to {}", "john-v2@corp-mail.com"),
    ("EMAIL_ADDRESS", "the key's account: {}", "a000-v@proj-1.iam.gserviceaccount.com"),
    ("EMAIL_ADDRESS", "mailto:{}", "password@acme-corp.com"),
    # what the near-misses of templates, files, labels and user parts leave alone
    ("EMAIL_ADDRESS", "user:{} logged in", "jane@acme-corp.com"),
    ("EMAIL_ADDRESS", "mailto:{}", "maria.gonzalez@example.com"),
    ("EMAIL_ADDRESS", "ask {}", "j@acme-corp.com"),
    ("EMAIL_ADDRESS", "ask {}", "jo@x.com"),
    ("EMAIL_ADDRESS", "write to {}", "jane@xn--mller-kva.de"),
    ("EMAIL_ADDRESS", "write to {}", "ops@a--b.de"),
    ("EMAIL_ADDRESS", "the photographer: {}", "maria@studio.photo"),
    ("ES_NIF", "el NIF {} del cliente", "05000019A"),
    ("ES_NIF", "NIF: {} (pedido 2024-0117)", "12345678Z"),
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
    # places whose name holds an English word no person's name does (pycountry's ISO 3166 names)
    ("PERSON", "Hong Kong Special Administrative Region of China, the Lao People's Democratic Republic"),
    # a repository in SSH's scp syntax (fastapi-cloud-cli's comment), no mailbox
    ("EMAIL_ADDRESS", "# Handles URLs like: git@github.com:owner/repo.git or git@github.enterprise.com:o/r.git"),
    ("EMAIL_ADDRESS", "rsync -a dist/ deploy@build.acme-corp.com:~/releases/"),
    # a placeholder mailbox at a placeholder domain (setuptools' and distutils' tests)
    ("EMAIL_ADDRESS", "author_email = test@test.com\nmaintainer: Name <name@email.com>, author@name.com"),
    # bytes of a dump around two-digit groups (Pillow's MSP decoder): no French phone number
    ("PHONE_NUMBER", "    #  0x00 03 ff 05 00 01 02 03 04\n    #  would yield the bytes:"),
    # a block's network address, and a contract's version spelt the same
    ("IP_ADDRESS", "os.path.join(ref, 'Windows.Foundation.UniversalApiContract', '1.0.0.0'), net 10.20.0.0"),
    # digits that are not phones
    ("PHONE_NUMBER", "version 1.2.3 released 2024-01-15 at 10:30"),
    ("PHONE_NUMBER", "total 1234567 units"),
    ("PHONE_NUMBER", "call 555-123-4567 (invalid area code)"),
    # cards failing Luhn or the issuer prefix
    ("CREDIT_CARD", "card 4556 0172 8390 6415"),
    ("CREDIT_CARD", "number 1234 5678 9012 3456"),
    # the integer part of a decimal (mpmath's tables): no card has a fraction
    ("CREDIT_CARD", "        -49586681013729.32611558353\n    6 4031078400000.0"),
    # IBAN with a wrong checksum
    ("IBAN_CODE", "pay to DE89 3704 0044 0532 0130 01"),
    # the standard's published examples (SWIFT IBAN Registry, python-stdnum's doctests), as
    # presidio-analyzer's own docstring writes one: nobody's account
    ("IBAN_CODE", 'i.e. "I want my deposit in DE89370400440532013000 2 days from today."'),
    ("IBAN_CODE", "e.g. GB29 NWBK 6016 1331 9268 19, GB82WEST12345698765432 or BE31435411161155"),
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
    # MACs of documentation: counting digits or bytes, one byte repeated (dnspython's EUI48 docs)
    ("MAC_ADDRESS", "text_len = byte_len * 3 - 1  # 01-23-45-67-89-ab"),
    ("MAC_ADDRESS", "e.g. 00:11:22:33:44:55, aa:bb:cc:dd:ee:ff or 01:02:03:04:05:06"),
    ("MAC_ADDRESS", "like 12:34:56:78:9a:bc, ab:ab:ab:ab:ab:ab or 0123.4567.89ab"),
    # RFC 7042's documentation block (pydantic-extra-types' docstring)
    ("MAC_ADDRESS", "mac_address: 00:00:5e:00:53:01, or 00-00-5E-00-53-FF"),
    # presidio-analyzer's docstring: the digits after the first byte count up
    ("MAC_ADDRESS", "- Colon-separated: 00:1A:2B:3C:4D:5E\n- Hyphen-separated: 00-1A-2B-3C-4D-5E"),
    ("MAC_ADDRESS", "- Cisco format (dot-separated groups of 4): 0012.3456.789A"),
    # a key's fingerprint (srsly's ruamel tests): sixteen hex pairs, no window of them an address
    ("MAC_ADDRESS", '\'"fingerprint":"MD5:19:dd:41:93:a1:a3:f5:91:4a:8e:9b:d0:ae:ce:66:4c",\''),
    ("IP_ADDRESS", '\'"fingerprint":"MD5:19:dd:41:93:a1:a3:f5:91:4a:8e:9b:d0:ae:ce:66:4c",\''),
    ("MAC_ADDRESS", "SHA1 Fingerprint=4A-8E-9B-D0-AE-CE-66-4C-19-DD-41-93-A1-A3-F5-91-2B-7C-00-E1"),
    # dotted numbers of standards, specs, sections and version specifiers (pypdf, packaging)
    ("IP_ADDRESS", "# ISO 32000-2:2020, 9.7.5.2, Note 1 and Table 116."),
    ("IP_ADDRESS", 'Taken from PDF 1.7 specs, "7.4.4.2 Details of LZW Encoding".'),
    ("IP_ADDRESS", '# a digit." (PDF reference 7.3.4.2, p 16) and Annex 2.1.3.4, § 3.1.4.1'),
    ("IP_ADDRESS", 'foo==1.0.0.0 compares equal, Specifier("== 1.2.3.0") and pkg>=2.0.1.7'),
    ("IP_ADDRESS", "https://doi.org/10.1002/1097-0037(200010)36:3<156::AID-NET2>3.0.CO;2-L"),
    # object identifiers and versions assigned as values (cryptography, urllib3)
    ("IP_ADDRESS", '    X25519 = ObjectIdentifier("1.3.101.110")\n    COMMON_NAME = ObjectIdentifier("2.5.4.3")'),
    ("IP_ADDRESS", 'oid = "2.5.29.17"; OID 2.5.4.10; _oid: 1.3.101.112'),
    ("IP_ADDRESS", '__version__ = "3.5.0.1"\n{"version": "1.0.0.2"}\nVERSION = \'2.0.1.7\''),
    # SSH algorithm names, a URL's password, example hosts, initials at example.com
    ("EMAIL_ADDRESS", 'b"aes256-gcm@openssh.com", _CERT_SUFFIX = b"-cert-v01@openssh.com"'),
    ("EMAIL_ADDRESS", '"sk-ecdsa-sha2-nistp256@openssh.com" and curve25519-sha256@libssh.org'),
    ("EMAIL_ADDRESS", '# "https://username:password@host.com:80/path?query#fragment"'),
    ("EMAIL_ADDRESS", "send to admin@myserver.net or dp@x-force.example.com"),
    # a template's field as the mailbox (huggingface_hub), file names with an "@" (its URI
    # parser's comment), a label no registry delegates (pydantic's hypothesis plugin), one letter
    # at one letter (SQLAlchemy's docs), a user part without its scheme (sentry_sdk's comment)
    ("EMAIL_ADDRESS", 'ssh_host = f"{info.subdomain}@ssh.hf.space"; "{0}@{1}.com".format(u, d)'),
    ("EMAIL_ADDRESS", "# An '@' deeper in the path (e.g. in a filename like 'file@1.txt') is literal."),
    ("EMAIL_ADDRESS", "data/report@v2.json, logs/app@host.log and Main@2.java.class"),
    ("EMAIL_ADDRESS", "    assert email == '0@A0--0.ac'"),
    ("EMAIL_ADDRESS", '>>> stmt = insert(my_table).values(user_email="a@b.com", data="inserted data")'),
    ("EMAIL_ADDRESS", "# strip username:password (netloc can be usr:pwd@example.com)"),
    # hex words of /proc/net and constants, not NIFs (psutil)
    ("ES_NIF", '        "0500000A:0016" -> ("10.0.0.5", 22)'),
    ("ES_NIF", "mask = 0x0500000A"),
    ("ES_NIF", "row 0500000A 0100007F 0000000000000000FFFF00000100007F"),
    # English words in -ering before a number (networkx's citations)
    ("ADDRESS", "IEEE Transactions on Knowledge and Data Engineering 23(12):1842--1856, Monitoring 3"),
    # fictional and service numbers, MAC shapes, DOIs, ISSNs and citations (dnspython, networkx)
    ("PHONE_NUMBER", '"+1.650.555.1212" and "1 (650) 555-1212" are all the same.'),
    ("PHONE_NUMBER", "text_len = byte_len * 3 - 1  # 01-23-45-67-89-ab"),
    # ranges of postcodes (presidio-analyzer's German PLZ recognizer; the en dash folds to "-"):
    # valid only as French numbers, which are never written in groups of five
    ("PHONE_NUMBER", "# Regex covers 01001–09999 (leading zero) and 10000–99998."),
    ("PHONE_NUMBER", "in the range 01001-99998 (boundary values 01000 and 99999 are excluded)"),
    ("PHONE_NUMBER", "# https://doi.org/10.1111/0081-1750.00098"),
    ("PHONE_NUMBER", "#    issn={0209-9683},"),
    ("PHONE_NUMBER", "           Phys. Rev. E 78, 046110 2008"),
    ("PHONE_NUMBER", '"/90ms-RKSJ-H": "cp932",  # Shift-JIS (JIS X 0208-1990), horizontal'),
    # secret-shaped but not secret
    ("SECRET", "sk-short and AKIA123"),
    # the name a definition gives, in a Mollie key's shape (srsly's ujson tests)
    ("SECRET", "    def test_encodeUnicode4BytesUTF8Highest(self):\n        input = 1"),
    ("SECRET", "async def live_fetchUsers4PagesFromUTF8Source(): pass; function test_parseBase64Payload2Json() {}"),
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
    # a sentence about data, not a label on the text (opentelemetry's semantic conventions)
    (
        "CONFIDENTIALITY_MARKER",
        "Note: Useful if `user.id` or `user.name` contain confidential information and cannot be used.",
    ),
    ("CONFIDENTIALITY_MARKER", "Logs may hold confidential information; redact fields before export."),
    # link-local IPv6 (fe80::/10, like 169.254/16: no host beyond its link) and the broadcast
    # address of a private block (asyncpg's DSN docs, prometheus_client's routing probe)
    ("IP_ADDRESS", "postgres://[fe80::1ff:fe23:4567:890a%25eth0]/dbname and fe80::1"),
    ("IP_ADDRESS", "s.connect(('10.255.255.255', 1)); broadcast 172.31.255.255 or 192.168.255.255"),
    # a version before "or higher", a 0.x version, a list of sections (mpmath, yarl)
    ("IP_ADDRESS", "    .. note :: This function requires matplotlib (pylab) 0.98.5.3 or higher."),
    ("IP_ADDRESS", "# normalised output as per sections 5.2.4 and 6.2.2.3 of rfc3986."),
    ("IP_ADDRESS", "see §§ 3.1.4.1, 3.1.4.2 and clauses 7.2, 7.2.1.4; version 0.9.8.1 and 2.0.1.7 or later"),
    # a term of a sequence literal, a decimal's integer part (mpmath's tests and tables)
    ("CREDIT_CARD", "    assert [hyperfac(n) for n in range(7)] == [1, 1, 4, 108, 27648, 86400000, 4031078400000]"),
    ("PHONE_NUMBER", "    6 78498 78527.3994291277(0.000375) 78627.5491594622(0.00165)"),
    # a constant of code near "TYPE_CHECKING", option tuples after credential keys (zmq)
    ("US_BANK_NUMBER", "if TYPE_CHECKING:\n    from x import Self\n\n_HAUSNUMERO = 156384712\n"),
    ("SECRET", "    SOCKS_PASSWORD = 100, _OptType.bytes\n    CURVE_SECRETKEY = 50, _OptType.bytes\n"),
    # the example of a format's description (presidio-analyzer's SG FIN recognizer)
    (
        "SG_NRIC_FIN",
        '# Weak pattern: all FIN number start with "S", "T", "F", "G" or "M"\n# and ends with a character, e.g., S2740116C',
    ),
    ("US_SSN", "An SSN has nine digits in three groups, for example 536-22-8451."),
    ("EXPORT_CONTROL_MARKER", "guitar and zitar and the ear"),
    ("GMP_MARKER", "the batch was recorded"),
]


@pytest.mark.parametrize(("entity", "text"), NEAR_MISSES, ids=[f"{n[0]}-{i}" for i, n in enumerate(NEAR_MISSES)])
def test_near_miss(clf: Classifier, entity: str, text: str) -> None:
    """Text that resembles the entity but is not one yields no finding of that type."""
    assert not {e for e, _ in found(clf, text)} & {entity}


# -- a real address next to numbers that only look like one -------------------------------------

_SECTION_CONTEXTS = [
    "section ",
    "§ ",
    "ISO 32000-2:2020, ",
    "PDF reference ",
    "clause ",
    "version ",
    "==",
    ">= ",
    'ObjectIdentifier("',
    "oid = ",
    '__version__ = "',
]
_SEPARATORS = [" ", ", ", "; ", " and ", "\n", " -> "]


def _reportable(ip: ipaddress.IPv4Address) -> bool:
    """An address the recognizer is meant to report (the ranges it leaves out by design aside)."""
    return not (
        ip.is_loopback
        or ip.is_unspecified
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or any(ip in ipaddress.ip_network(n) for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"))
        or str(ip) in {"1.2.3.4", "1.2.3.5", "4.3.2.1", "8.8.8.8", "8.8.4.4", "1.1.1.1", "1.0.0.1", "9.9.9.9"}
        or ip.packed[2:] == b"\0\0"  # a /16 block's network address ("10.20.0.0"), or a version
        # four single-digit numbers ("3.1.1.6"): a section or a release
        or max(ip.packed) <= 9
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    ip=st.integers(min_value=1 << 24, max_value=(224 << 24) - 1).map(ipaddress.IPv4Address).filter(_reportable),
    section=st.lists(st.integers(min_value=0, max_value=40), min_size=4, max_size=4).map(
        lambda parts: ".".join(map(str, parts))
    ),
    context=st.sampled_from(_SECTION_CONTEXTS),
    separator=st.sampled_from(_SEPARATORS),
    ip_first=st.booleans(),
)
def test_real_address_found_next_to_section_numbers(
    clf: Classifier, ip: ipaddress.IPv4Address, section: str, context: str, separator: str, ip_first: bool
) -> None:
    """Whatever real address stands before or after a section, clause or version number, it is
    found whole, and the number after its section word is not reported as an address."""
    numbered = context + section
    text = f"the host {ip}{separator}{numbered}" if ip_first else f"{numbered}{separator}{ip} is the host"
    ips = {v for e, v in found(clf, text) if e == "IP_ADDRESS"}
    assert str(ip) in ips, (text, ips)
    assert section not in ips or section == str(ip), (text, ips)


# -- real mailboxes next to algorithm names, real NIFs next to hex words ------------------------

_LOCAL_WORDS = ["maria", "jean-luc", "o.brien", "j.smith", "anne-marie", "kowalski", "li.wei", "ops"]
_ALGORITHMS = [
    "aes256-gcm",
    "chacha20-poly1305",
    "sk-ssh-ed25519",
    "sk-ecdsa-sha2-nistp256",
    "hmac-sha2-256-etm",
    "ssh-ed25519-cert-v01",
    "sntrup761x25519-sha512",
]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    local=st.sampled_from(_LOCAL_WORDS),
    digits=st.one_of(st.just(""), st.integers(0, 999).map(str)),
    domain=st.sampled_from(["acme-corp.de", "mail.example.co.uk", "gmail.com", "corp.fr"]),
    algorithm=st.sampled_from(_ALGORITHMS),
    url_first=st.booleans(),
)
def test_mailbox_found_next_to_algorithm_names(
    clf: Classifier, local: str, digits: str, domain: str, algorithm: str, url_first: bool
) -> None:
    """A person's address stays found whole beside SSH algorithm names and a URL's password,
    which are not reported."""
    address = f"{local}{digits}@{domain}"
    noise = f'b"{algorithm}@openssh.com", "https://user:secret@host.com/x"'
    text = f"{noise} -- ask {address}" if url_first else f"ask {address} -- {noise}"
    mails = {v for e, v in found(clf, text) if e == "EMAIL_ADDRESS"}
    assert mails == {address}, (text, mails)


_NIF_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(number=st.integers(0, 99_999_999), hex_line=st.booleans())
def test_nif_found_unless_glued_to_hex(clf: Classifier, number: int, hex_line: bool) -> None:
    """Any NIF is found in prose, also when another line holds hex words; glued to a port or
    after ``0x`` the same digits are hex and not reported."""
    nif = f"{number:08d}{_NIF_LETTERS[number % 23]}"
    other = "\n    0000000000000000FFFF00000100007F:9E49\n" if hex_line else "\n"
    text = f"El NIF del cliente es {nif}.{other}"
    assert ("ES_NIF", nif) in found(clf, text), text
    if nif[-1] in "ABCDEF":
        glued = f"{nif}:0016 and 0x{nif}"
        assert "ES_NIF" not in {e for e, _ in found(clf, glued)}, glued


# -- real addresses and markers next to what only looks like them --------------------------------

# the first 64 /24 networks of each private block (islice: listing the 65,536 of 10/8 on every
# draw made shrinking take minutes)
_PRIVATE_HOSTS = st.sampled_from(
    [net for block in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")
     for net in itertools.islice(ipaddress.ip_network(block).subnets(new_prefix=24), 64)]
).flatmap(lambda net: st.integers(1, 254).map(lambda host: net.network_address + host))  # fmt: skip


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    ip=_PRIVATE_HOSTS,
    link_local=st.integers(0, (1 << 64) - 1).map(lambda low: ipaddress.IPv6Address((0xFE80 << 112) | low)),
    ip_first=st.booleans(),
)
def test_private_host_found_beside_link_local_and_broadcast(
    clf: Classifier, ip: ipaddress.IPv4Address, link_local: ipaddress.IPv6Address, ip_first: bool
) -> None:
    """Any private host is found whole beside a link-local IPv6 address and a private block's
    broadcast address, and neither of those is reported."""
    noise = f"[{link_local}%eth0]:5432, probe 10.255.255.255"
    text = f"db at {ip}; {noise}" if ip_first else f"{noise}; db at {ip}"
    ips = {v for e, v in found(clf, text) if e == "IP_ADDRESS"}
    assert ips == {str(ip)}, (text, ips)


_TEXT_NOUNS = ["e-mail", "email", "message", "document", "attachment", "presentation", "file", "report"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    opener=st.sampled_from(["This", "this", "These", "The attached", "The enclosed"]),
    noun=st.sampled_from(_TEXT_NOUNS),
    verb=st.sampled_from(["contains", "may contain", "includes", "holds", "is and contains"]),
    data=st.sampled_from(["`user.name`", "the payload", "log records", "attributes"]),
)
def test_label_found_beside_data_that_holds_confidential_information(
    clf: Classifier, opener: str, noun: str, verb: str, data: str
) -> None:
    """The text saying it holds confidential information is a marker; a sentence saying some
    data may hold it is none, before or after the label."""
    label = f"{opener} {noun} {verb} confidential information."
    about = f"Useful if {data} contain confidential information and cannot be used."
    for text in (f"{label}\n{about}", f"{about}\n{label}"):
        markers = [f for f in clf.classify(content(text)).findings if f.entity_type == "CONFIDENTIALITY_MARKER"]
        assert [text[f.start : f.end] for f in markers] == ["confidential information"], text
        assert markers[0].start > text.index(label) if text.startswith(about) else markers[0].start < len(label)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    country=st.sampled_from(["DE", "GB", "BE", "GR"]),
    digits=st.text("0123456789", min_size=27, max_size=27),
    example=st.sampled_from(sorted(PUBLISHED_EXAMPLE_IBANS)),
    grouped=st.booleans(),
)
def test_any_iban_found_beside_published_examples(
    clf: Classifier, country: str, digits: str, example: str, grouped: bool
) -> None:
    """Every valid IBAN but the published examples is found whole beside one of them."""
    length = {"DE": 22, "GB": 22, "BE": 16, "GR": 27}[country]
    bban = ("NWBK" + digits)[: length - 4] if country == "GB" else digits[: length - 4]
    value = country + mod_97_10.calc_check_digits(bban + country) + bban
    assume(value not in PUBLISHED_EXAMPLE_IBANS)
    if grouped:
        value = " ".join(value[i : i + 4] for i in range(0, len(value), 4))
    text = f"example {example}; pay to {value} today"
    ibans = {v for e, v in found(clf, text) if e == "IBAN_CODE"}
    assert ibans == {value}, (text, ibans)


def _luhn_complete(body: str) -> str:
    total = 0
    for i, c in enumerate(reversed(body)):
        d = int(c) * (2 if i % 2 == 0 else 1)
        total += d - 9 if d > 9 else d
    return body + str((10 - total % 10) % 10)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    body=st.text("0123456789", min_size=14, max_size=14),
    fraction=st.text("0123456789", min_size=1, max_size=12),
    period=st.booleans(),
)
def test_card_found_beside_decimal_numbers(clf: Classifier, body: str, fraction: str, period: bool) -> None:
    """A Visa number is found whole beside a decimal whose integer part is a valid card number
    too, also at the end of a sentence; the decimal is no card."""
    card = _luhn_complete("4" + body)
    assume(len(set(card[0::2])) > 1 or len(set(card[1::2])) > 1)
    integer = _luhn_complete("4" + body[::-1])
    assume(integer != card)
    decimal = integer + "." + fraction
    text = f"value -{decimal} and card {card}" + ("." if period else " today")
    cards = {v for e, v in found(clf, text) if e == "CREDIT_CARD"}
    assert cards == {card}, (text, cards)


# -- real identifiers beside the numbers of code and mathematics (seventh group) -----------------


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    body=st.text("0123456789", min_size=14, max_size=14),
    exps=st.lists(st.integers(2, 14), min_size=3, max_size=8, unique=True),
    falling=st.booleans(),
    record_first=st.booleans(),
)
def test_card_found_beside_sequence_literals(
    clf: Classifier, body: str, exps: list[int], falling: bool, record_first: bool
) -> None:
    """A Visa number is found whole in a record's tuple beside a growing or falling sequence
    literal (its terms span magnitudes, as the hyperfactorials do) whose largest term is a valid
    card number too; that term is no card."""
    card = _luhn_complete("4" + body)
    assume(len(set(card[0::2])) > 1 or len(set(card[1::2])) > 1)
    term = int(_luhn_complete("4" + body[::-1]))
    assume(term != int(card))
    smaller = [term // 10**e for e in sorted({*exps, 12}, reverse=True)]  # growing, below the term
    literal = "[" + ", ".join(map(str, [term, *reversed(smaller)] if falling else [*smaller, term])) + "]"
    record = f"(17, {card}, 12, 2027)"
    text = f"row {record}\nassert seq == {literal}" if record_first else f"assert seq == {literal}\nrow {record}"
    cards = {v for e, v in found(clf, text) if e == "CREDIT_CARD"}
    assert cards == {card}, (text, cards)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    phone=st.sampled_from(["(415) 555-2671", "+44 20 7946 0958", "030 901820", "98765 43210", "06 12 34 56 78"]),
    whole=st.tuples(st.integers(60000, 99999), st.integers(10000, 99999)),
    fraction=st.text("0123456789", min_size=1, max_size=12),
    phone_first=st.booleans(),
)
def test_phone_found_beside_decimal_tables(
    clf: Classifier, phone: str, whole: tuple[int, int], fraction: str, phone_first: bool
) -> None:
    """A phone number is found whole beside a row of a table of values whose decimal has an
    integer part shaped like a mobile number; that integer part is no phone."""
    row = f"    6 {whole[0]} {whole[1]}.{fraction}(0.000375)"
    text = f"call {phone} now\n{row}\n" if phone_first else f"{row}\ncall {phone} now\n"
    phones = {v for e, v in found(clf, text) if e == "PHONE_NUMBER"}
    assert phones == {phone}, (text, phones)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    account=st.tuples(st.sampled_from("189"), st.text("0123456789", min_size=8, max_size=16)).map("".join),
    constant=st.integers(10**7, 10**12),
    key=st.sampled_from(["ACCOUNT_NUMBER", "acctNo", "bank_account", "CHECKING"]),
    annotated=st.booleans(),
)
def test_account_found_beside_constants_of_code(
    clf: Classifier, account: str, constant: int, key: str, annotated: bool
) -> None:
    """An account number assigned to a name that says so is found whole beside constants of a
    typed module (``if TYPE_CHECKING:`` holds a context word), which are no accounts."""
    assume(len(set(account)) > 1 and account not in "0123456789012345678")
    annotation = ": int" if annotated else ""
    text = f"if TYPE_CHECKING:\n    pass\n\n_HAUSNUMERO = {constant}\n{key}{annotation} = {account}\n"
    accounts = {v for e, v in found(clf, text) if e == "US_BANK_NUMBER"}
    assert accounts == {account}, (text, accounts)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    ip=_PRIVATE_HOSTS,
    sections=st.lists(st.integers(0, 40), min_size=8, max_size=8).map(
        lambda n: (".".join(map(str, n[:3])), ".".join(map(str, n[3:7])))
    ),
    version=st.lists(st.integers(0, 99), min_size=3, max_size=3).map(lambda n: "0." + ".".join(map(str, n))),
    later=st.sampled_from(["or higher", "or later", "and newer"]),
)
def test_address_found_beside_section_lists_and_versions(
    clf: Classifier, ip: ipaddress.IPv4Address, sections: tuple[str, str], version: str, later: str
) -> None:
    """A private host is found whole after a list of section numbers and beside versions before
    "or higher" and versions 0.x, none of which is reported."""
    text = f"per sections {sections[0]} and {sections[1]} the host is {ip}; needs lib {version} {later}"
    ips = {v for e, v in found(clf, text) if e == "IP_ADDRESS"}
    assert ips == {str(ip)}, (text, ips)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    fins=st.lists(
        st.tuples(st.sampled_from("STFGM"), st.text("0123456789", min_size=7, max_size=7), st.sampled_from("ACJKZX")),
        min_size=2,
        max_size=2,
        unique=True,
    ).map(lambda fs: ["".join(f) for f in fs]),
    opener=st.sampled_from(["e.g.,", "e.g.", "for example", "such as"]),
)
def test_fin_found_beside_a_format_description(clf: Classifier, fins: list[str], opener: str) -> None:
    """A FIN stated in a sentence is found whole beside a comment that describes the format
    with an example, which is not reported."""
    comment = f'# Weak pattern: all FIN number start with "S", "T", "F", "G" or "M"\n# and ends with a character, {opener} {fins[1]}'
    text = f"{comment}\n\nThe customer's FIN is {fins[0]}."
    values = {v for e, v in found(clf, text) if e == "SG_NRIC_FIN"}
    assert values == {fins[0]}, (text, values)


_ALNUM = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    password=st.text(_ALNUM, min_size=12, max_size=24).filter(
        lambda v: any(c.isdigit() for c in v) and any(c.isupper() for c in v) and any(c.islower() for c in v)
    ),
    key=st.sampled_from(["SOCKS_PASSWORD", "DB_PASSWORD", "password"]),
    quoted=st.booleans(),
)
def test_password_found_beside_option_tuples(clf: Classifier, password: str, key: str, quoted: bool) -> None:
    """A password assigned to a credential key is found whole beside an enum table whose
    credential keys hold option tuples (``SOCKS_PASSWORD = 100, _OptType.bytes``), which are not
    reported."""
    value = f'"{password}"' if quoted else password
    text = f"    SOCKS_PASSWORD = 100, _OptType.bytes\n    CURVE_SECRETKEY = 50, _OptType.bytes\n{key} = {value}\n"
    secrets = {v for e, v in found(clf, text) if e == "SECRET"}
    assert secrets == {password}, (text, secrets)


# -- real hardware addresses beside documentation MACs and digests ------------------------------


def _random_mac(seed: int, sep: str) -> str:
    """A MAC as a NIC carries one: random bytes (a seeded generator, not hypothesis's draws,
    which favour zeros and repeats, the very shapes documentation writes)."""
    octets = random.Random(seed).randbytes(6)
    if sep == ".":
        digits = octets.hex()
        return ".".join(digits[i : i + 4] for i in range(0, 12, 4))
    return sep.join(f"{b:02x}" for b in octets)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32), sep=st.sampled_from([":", "-", "."]), upper=st.booleans(), mac_first=st.booleans())
def test_random_mac_found_beside_documentation_macs_and_digests(
    clf: Classifier, seed: int, sep: str, upper: bool, mac_first: bool
) -> None:
    """Any MAC with random bytes is found whole beside a key's fingerprint and the counting
    MACs of documentation, and neither of those is reported as a MAC or an IP address."""
    mac = _random_mac(seed, sep)
    mac = mac.upper() if upper else mac
    noise = "fingerprint MD5:19:dd:41:93:a1:a3:f5:91:4a:8e:9b:d0:ae:ce:66:4c, e.g. 00:1A:2B:3C:4D:5E"
    text = f"eth0 ether {mac} up; {noise}" if mac_first else f"{noise}; eth0 ether {mac} up"
    values = found(clf, text)
    assert {v for e, v in values if e == "MAC_ADDRESS"} == {mac}, (text, values)
    assert not {v for e, v in values if e == "IP_ADDRESS"}, (text, values)


# -- real mailboxes beside templates, file names and user parts ----------------------------------

_PUBLIC_SUFFIX_LIST = Path(tldextract.__file__).parent / ".tld_set_snapshot"


def test_file_extensions_are_no_top_level_domains() -> None:
    """Every extension the e-mail recognizer reads as a file's is absent from the Public Suffix
    List's top-level domains (tldextract's snapshot): a mailbox at such a TLD cannot exist."""
    tlds = {
        line.strip().rsplit(".", 1)[-1].lstrip("*!")
        for line in _PUBLIC_SUFFIX_LIST.read_text("utf-8").splitlines()
        if line.strip() and not line.startswith("//")
    }
    assert len(tlds) > 1000
    assert _FILE_EXTENSIONS and not _FILE_EXTENSIONS & tlds, sorted(_FILE_EXTENSIONS & tlds)


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("请把简历发送到zhangwei@163.com即可", "zhangwei@163.com"),
        ("メールはtaro.yamada@example-corp.co.jpまでお願いします", "taro.yamada@example-corp.co.jp"),
        ("Email me at maria.rossi@acme-corp.com.Thanks", "maria.rossi@acme-corp.com"),
        ("jane@acme.comPhone: 555-0100", "jane@acme.com"),
        ("reach jane@mail.lab or bob@host.staging", "jane@mail.lab"),
        ('{"log": "line one\\njane.doe@acme.com"}', "jane.doe@acme.com"),
    ],
)
def test_a_mailbox_with_text_glued_on_or_at_an_internal_name_is_covered(
    clf: Classifier, text: str, address: str
) -> None:
    """Found in a review of a top-level-domain check (withdrawn): a mailbox glued to CJK text, a
    sentence without its blank, extracted text, an internal pseudo-domain, an escape before it.
    Each is stripped whole, with what is glued to it where the shape cannot tell."""
    d = clf.classify(content(text))
    at = text.index(address)
    assert any(f.entity_type == "EMAIL_ADDRESS" and f.start <= at and at + len(address) <= f.end for f in d.findings)


_LOCAL_LABEL = st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=12)


# the metasyntactic hosts the recognizer leaves out by design ("foo.com", "host.com")
_PLACEHOLDER_LABELS = {"foo", "bar", "baz", "qux", "quux", "bat", "foobar", "domain", "host", "server", "hostname"}


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    local=st.lists(_LOCAL_LABEL, min_size=1, max_size=3).map(".".join).filter(lambda v: len(v) >= 2),
    labels=st.lists(
        st.from_regex(r"[a-z0-9](?:[a-z0-9-]{0,14}[a-z0-9])?", fullmatch=True),
        min_size=1,
        max_size=3,
    ).filter(lambda ls: ls[-1][2:4] != "--"),  # (below the registered name, any label: "a0--00.iam…")
    tld=st.sampled_from(["com", "de", "fr", "co.uk", "io", "org", "net", "photo", "zip"]),
    prefix=st.sampled_from(["", "mailto:", "email:", "to ", "user:"]),
)
def test_mailbox_found_beside_templates_and_file_names(
    clf: Classifier, local: str, labels: list[str], tld: str, prefix: str
) -> None:
    """A mailbox of letters and digits at any domain that is no documentation one is found whole
    (after "user:" and "mailto:" too) beside a template's mailbox, a file name with an "@", a
    label no registry delegates, one letter at one letter and a user part without its scheme,
    none of which is reported."""
    assume(not (labels[-1] in _PLACEHOLDER_LABELS or (labels[-1] == "example" and tld in ("com", "org", "net"))))
    # three or more numbers joined by dots are a message's id ("<15090.61304.110929@…>"), by design
    assume(local.count(".") < 2 or not local.replace(".", "").isdigit())
    address = f"{local}@{'.'.join(labels)}.{tld}"
    noise = "f\"{info.subdomain}@ssh.hf.space\", 'file@1.txt', 0@A0--0.ac, a@b.com, usr:pwd@example.com"
    text = f"{noise}; reply {prefix}{address}"
    mails = {v for e, v in found(clf, text) if e == "EMAIL_ADDRESS"}
    assert mails == {address}, (text, mails)


# -- a provider's token beside definitions of names in its shape ---------------------------------


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    seed=st.integers(0, 2**32),
    mode=st.sampled_from(["test", "live"]),
    carrier=st.sampled_from(['MOLLIE_API_KEY = "{}"', "Authorization: Bearer {}", "the key {} is set", "k={}"]),
)
def test_token_found_beside_definitions_in_its_shape(clf: Classifier, seed: int, mode: str, carrier: str) -> None:
    """A random Mollie key (``test_`` or ``live_`` and thirty alphanumerics) is found whole
    beside test methods whose names have its shape, which are not reported."""
    rng = random.Random(seed)
    token = f"{mode}_" + "".join(rng.choice(_ALNUM) for _ in range(30))
    defined = "    def test_encodeUnicode4BytesUTF8Highest(self):\n        pass\n"
    text = f"{defined}{carrier.format(token)}\n{defined}"
    secrets = {v for e, v in found(clf, text) if e == "SECRET"}
    assert secrets == {token}, (text, secrets)


# -- French numbers beside ranges of numbers -----------------------------------------------------


def _french_number(seed: int) -> str:
    """A valid French fixed-line or mobile number (phonenumbers' metadata), national digits."""
    rng = random.Random(seed)
    while True:
        digits = "0" + str(rng.randint(1, 7)) + "".join(str(rng.randint(0, 9)) for _ in range(8))
        if phonenumbers.is_valid_number(phonenumbers.parse(digits, "FR")):
            return digits


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32), sep=st.sampled_from([" ", ".", "-", ""]), dash=st.sampled_from(["-", "–"]))
def test_french_number_found_beside_ranges(clf: Classifier, seed: int, sep: str, dash: str) -> None:
    """A French number written in pairs (or as one run) is found whole beside ranges of
    five-digit numbers, which are not reported."""
    digits = _french_number(seed)
    number = sep.join(digits[i : i + 2] for i in range(0, 10, 2))
    text = f"# covers 01001{dash}09999 and 10000{dash}99998\ntél {number}\nrange 01001{dash}99998"
    phones = {v for e, v in found(clf, text) if e == "PHONE_NUMBER"}
    assert phones == {number}, (text, phones)
