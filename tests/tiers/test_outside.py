"""What measuring on outside material (bench/outside.py) found, held as tests.

* Code shapes from real packages that were taken for people, companies, licences, accounts,
  addresses, phones and credentials (each row written here after a false positive seen in the
  installed sources of SQLAlchemy, litestar, pydantic, aiohttp, presidio-analyzer, click, rich,
  redis, pygments, openai, anthropic, schemathesis …), and the identifiers next to them that must
  still be found.
* Faker-generated EN/DE/FR documents (names, companies, addresses, dates of birth from Faker's
  locale providers): recall floors per family over seeds chosen by hypothesis.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tiers import Classifier, Content, Segment, TiersConfig

from .faker_documents import clean_documents, faker_documents


@pytest.fixture(scope="module")
def bare() -> Classifier:
    return Classifier(TiersConfig())


def content(text: str) -> Content:
    return Content((Segment(("messages", 0, "content"), text),))


def found(clf: Classifier, text: str) -> list[tuple[str, str]]:
    d = clf.classify(content(text))
    assert not d.failed_closed
    return [(f.entity_type, text[f.start : f.end]) for f in d.findings]


# (entity that must not be reported, text)
CODE_NEGATIVES = [
    ("PERSON", "    def __get__(self, instance: Literal[None], owner: Literal[None]) -> Self: ..."),
    ("PERSON", "        owner: Mapped[User] = relationship(back_populates='accounts')"),
    ("PERSON", "    def column_reflect(self, inspector: Inspector, table: Table) -> None:"),
    ("PERSON", "        self.owner: Router | None = None"),
    ("PERSON", "    contact: Contact | None = field(default=None)"),
    ("PERSON", '    "Exception raised by Queue.get(block=0)/get_nowait()."'),
    ("PERSON", '    "HISTORY": "MEDICAL_HISTORY",\n    "FAMILY_HISTORY": "X",'),
    ("PERSON", "    - HIJKLX is a random number"),
    ("PERSON", "            # hide UNSET values as None."),
    ("PERSON", "Foreign Key Arguments to Avoid\n~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~"),
    ("PERSON", '        """Run SHOW CREATE TABLE for a ``Table``."""'),
    ("PERSON", "## 2. Key Technical Concepts\n## 3. Files and Code Sections"),
    ("PERSON", "Philippine Passport numbers and Thai TNIN values"),
    ("PERSON", "        # Settings, Ping and WindowUpdate need no action here"),
    ("PERSON", "            # Revert MOVING state and So MOVED replies; Save ACL"),
    ("PERSON", "Certainly, Jane! Here is the summary."),
    ("PERSON", "Claude Managed Agents and the Claude Tag cost report"),
    ("PERSON", "    'Ruby Host': ('ruby', 'Tera Term', 'Merge Join'),"),
    ("PERSON", "# Last updated: Tue Nov 17 and Mon Sep 8"),
    ("PERSON", "The customer John Doe and Max Mustermann are placeholders."),
    ("PERSON", "the Los Angeles Kings and the Sparkling British Spring Water"),
    ("ORGANIZATION", "    def __init__(self, client: T) -> None:"),
    ("ORGANIZATION", "            client: The AsyncResolver instance requesting the resolver."),
    ("ORGANIZATION", '    ("password", "clientCredentials", "authorizationCode")'),
    ("ORGANIZATION", "        client: Optional[DeidentificationClient] = None,"),
    ("ORGANIZATION", "corporations: GmbH, AG, KGaA and OHG, KG"),
    ("ORGANIZATION", "    Examples\n            B AB 1234      (Berlin)\n            HH AB 12"),
    ("ORGANIZATION", "    VENDOR: ORGANIZATION\n    ORG: ORGANIZATION"),
    ("US_DRIVER_LICENSE", "# This module is released under the MIT License: pg8000 and E501 v2 a1"),
    ("US_DRIVER_LICENSE", "see the SPDX license list /v2.3/#a1-licenses, # noqa: E501"),
    ("US_BANK_NUMBER", "# every valid ACN whose check digit is 0 (e.g. 000000180) is rejected"),
    ("US_BANK_NUMBER", "# a degenerate account 1111111111 or 12345678901"),
    ("US_PASSPORT", "let us travel: the document 123456789 is a test id"),
    ("EMAIL_ADDRESS", "use ``@contextlib.asynccontextmanager`` and LIKE '%@gmail.com'"),
    ("EMAIL_ADDRESS", "e.g. ed@foo.com, foo@bar.com and bar@bat.com"),
    ("IP_ADDRESS", "data[1::4] and 1000:: and would be:: and rfc7692#section-7.2.3.1"),
    ("PHONE_NUMBER", "INT_MAX = 2147483647, 2147483648 and legacy 017700000001"),
    ("SECRET", '    options.headers = {"Authorization": authorization if authorization else x}'),
    ("SECRET", "        self._expected_authorization = expected_authorization"),
    ("SECRET", "    object_level_authorization: SimpleCheckConfig"),
    ("SECRET", '    "jwt": "urn:ietf:params:oauth:token-type:jwt",'),
    ("SECRET", '    "passwd:dir",\n    "passwd:gecos",\n    "passwd:gid",'),
    ("DATE_OF_BIRTH", "id;due;city\n1;14.03.2026;Ulm\n"),
    ("ORGANIZATION", "an RBAC Group, the Instance Group and a Kafka Consumer Group"),
    ("ORGANIZATION", "        client: The MCP `ClientSession` used to call the tool."),
    ("PERSON", 'raised by Hypothesis, not verified by Anthropic: [{"content": "Hello, Claude"}]'),
    ("PERSON", "    Po       GREEK QUESTION MARK"),
    ("PHONE_NUMBER", "leap seconds 2272060800 10 # 1 Jan 1972, stamp 2026111700, primorial 6469693230"),
    ("PHONE_NUMBER", "the fictional +1 415 555 0123 and (212) 555-0199"),
    ("IP_ADDRESS", "version '11.4.0.15.0', metadata 169.254.169.254, blocks 10.0.0.0/8 and 192.168.0.0/16"),
    ("IP_ADDRESS", "e.g. 1.2.3.4 and the resolver 8.8.8.8"),
    ("EMAIL_ADDRESS", "agent@example.com and password@www.example.com"),
    ("ADDRESS", "Spring 6 and Spring 5.3 errors"),
    ("CREDIT_CARD", "metrics_value=0.2662102282047272, modularity 0.35714285714285715, and 5454545454545454"),
    ("US_SSN", "'sha256': '9be78edb5b928eba33aa88f431551348f7466ba9f5ef3daf1d552398722a5436'"),
    ("CONFIDENTIALITY_MARKER", "'nda': '\\u0928', 'ear99.txt' and itar"),
    # the fourteenth group (transformers, torch, sympy): a mailbox's shape under no top-level
    # domain, in generated source and a usage string
    ("EMAIL_ADDRESS", '    res += "\\n@triton.jit\\n"'),
    ("EMAIL_ADDRESS", '        sys.stderr.write("    file.zip@member.pkl\\n")'),
    # a model's tensors and special tokens under a token's name; comparisons under a pass's
    ("SECRET", '    _pad_token_tensor: "torch.Tensor | None"'),
    ("SECRET", '        self.image_newline_token = "|NEWLINE|"\n        self.speaker_token = "|SPEAKER|"'),
    ("SECRET", '    IMAGE_TOKEN = "]<]image[>["\n    VIDEO_TOKEN = "]<]video[>["'),
    ("SECRET", '        image_token = "<|vision_start|><|image_pad|><|vision_end|>"'),
    ("SECRET", '    eos_token = "</s>"\n    cls_token = "[CLS]"'),
    ("SECRET", "        state_first_in_pass = self._training_state != TrainingState.FORWARD"),
    ("SECRET", "                # First pass: decided_mask==0, every element participates."),
    ("SECRET", '        ("qwen2_5_omni_token2wav", "Qwen2_5OmniToken2WavConfig"),'),
    # classes imported in a docstring's example, a list of one index type, acronyms after "by"
    (
        "PERSON",
        "        >>> from sympy.physics.quantum.state import Ket, Bra\n        >>> from sympy import Point, Ray\n",
    ),
    ("PERSON", "        _IndexStructure([(m0, 0), (m3, 3)], [(1, 2)], [Lorentz, Lorentz, Lorentz, Lorentz])"),
    ("PERSON", '    r"""Return number of devices as reported by NVML or negative value if NVML discovery fails.'),
    ("PERSON", "            The opened file handles will be closed by Python's GC periodically."),
    # a software's driver is no driver's licence
    ("US_DRIVER_LICENSE", "    # CUDA driver allocated memory was 1254555648 and is now 1242955776."),
    ("US_DRIVER_LICENSE", "    # the JDBC driver version 42010004"),
    # sixteen letters inside an identifier, beside a "cf." comment
    ("IT_FISCAL_CODE", "    # cf. issues 5795 and 5545\n    raises(InconsistentAssumptions, lambda: Symbol('x'))"),
]

# (entity, text, value that must be reported whole)
OUTSIDE_POSITIVES = [
    # the special token's shape under a password's key, or with a token's digits, stays a secret
    ("SECRET", 'db_password = "]<]Winter[>["', "]<]Winter[>["),
    ("SECRET", 'api_token = "]<]9f8a7b6c5d4e3f2a1b0c[>["', "]<]9f8a7b6c5d4e3f2a1b0c[>["),
    # found in a review: passphrases in brackets under a token's key mix cases or add slashes
    ("SECRET", 'ADMIN_TOKEN: "//Sunshine_Rainbow//"', "//Sunshine_Rainbow//"),
    ("SECRET", '{"api_token": "<<DragonSlayer>>"}', "<<DragonSlayer>>"),
    ("SECRET", 'export GITLAB_TOKEN="[[MonkeyBusiness]]"', "[[MonkeyBusiness]]"),
    ("SECRET", 'apiToken := "||Shadow_Knight||"', "||Shadow_Knight||"),
    ("SECRET", 'token = "|MonkeyBusiness|"', "|MonkeyBusiness|"),
    ("SECRET", 'AUTH_TOKEN="<Horse>Battery<Staple>"', "<Horse>Battery<Staple>"),
    ("US_DRIVER_LICENSE", "Driver license: D1234567", "D1234567"),
    ("US_DRIVER_LICENSE", "his driving licence number B12345678", "B12345678"),
    ("US_BANK_NUMBER", "bank account 40032198765 for the refund", "40032198765"),
    ("US_PASSPORT", "passport number 912803456", "912803456"),
    ("EMAIL_ADDRESS", "write to jane.doe@corp.de", "jane.doe@corp.de"),
    ("IP_ADDRESS", "the host fe80::1ff:fe23:4567:890a and 10.1.2.3", "10.1.2.3"),
    ("PERSON", "Prepared by Deborah Spieß", "Deborah Spieß"),
    ("PERSON", "Mark Phillips confirmed the date.", "Mark Phillips"),
    ("PERSON", "Christian Schwartz confirmed the date.", "Christian Schwartz"),
    ("PERSON", "Anthony Hill confirmed the date.", "Anthony Hill"),
    ("PERSON", "Harriet McDonald and Dawn O'Neill signed.", "Harriet McDonald"),
    ("PERSON", "Juergen Heintze hat bestätigt.", "Juergen Heintze"),
    ("PERSON", "Gonzalez, Maria signed", "Gonzalez, Maria"),
    ("PHONE_NUMBER", "call 4155552671 today", "4155552671"),
    ("CREDIT_CARD", "card 4556 0172 8390 6414 on file", "4556 0172 8390 6414"),
    ("US_SSN", "ssn_536228451", "536228451"),
    ("CONFIDENTIALITY_MARKER", "we signed an NDA last week", "NDA"),
    ("IP_ADDRESS", "the gateway at 192.168.10.20 drops it", "192.168.10.20"),
    ("ADDRESS", "Anschrift: Schillerring 12, 68161 Mannheim", "Schillerring 12, 68161 Mannheim"),
    ("ORGANIZATION", "order from Textor GmbH & Co. KGaA today", "Textor GmbH & Co. KGaA"),
    ("ORGANIZATION", "audit at Johann OHG mbH next week", "Johann OHG mbH"),
    ("ORGANIZATION", "visit of Davies Holdings tomorrow", "Davies Holdings"),
    ("ORGANIZATION", "avec Seguin Courtois et Fils", "Seguin Courtois et Fils"),
    ("ORGANIZATION", "Employer: Dominguez", "Dominguez"),
    (
        "ADDRESS",
        "Ship to: 7094 Lauren Passage Suite 846\nLake Crystal, ND 67461\n",
        "7094 Lauren Passage Suite 846\nLake Crystal, ND 67461",
    ),
    (
        "ADDRESS",
        "send to Flat 3, Lane Bridge, North Alisonshire, E9U 3EZ please",
        "Flat 3, Lane Bridge, North Alisonshire, E9U 3EZ",
    ),
    ("ADDRESS", "PSC 1152, Box 7611, APO AE 73174", "PSC 1152, Box 7611, APO AE 73174"),
    ("ADDRESS", "Anschrift: Annedore-Klapp-Weg 1/7, 56663 Sternberg", "Annedore-Klapp-Weg 1/7, 56663 Sternberg"),
    ("ADDRESS", "Adresse : chemin Julien Barre, 22369 Mahenec", "chemin Julien Barre, 22369 Mahenec"),
    ("ADDRESS", "Adresse : 18, chemin Lucas, 04207 Morin-les-Bains", "18, chemin Lucas, 04207 Morin-les-Bains"),
    ("DATE_OF_BIRTH", 'name,company,born,city\nAnna Berg,"Pham, Garza and Garcia",14.03.1962,Ulm\n', "14.03.1962"),
    ("DATE_OF_BIRTH", "| Name | Geburtsdatum |\n|---|---|\n| Anna | 14.03.1962 |\n", "14.03.1962"),
    ("DATE_OF_BIRTH", "DOB;14.03.1962;x", "14.03.1962"),
    # what the fourteenth group's fixes must not cost
    ("EMAIL_ADDRESS", "mail jane@acme.local about it", "jane@acme.local"),
    ("EMAIL_ADDRESS", "write to ivan@пример.рф", "ivan@пример.рф"),
    ("EMAIL_ADDRESS", "write to jane.doe@acme.museum", "jane.doe@acme.museum"),
    ("SECRET", 'GITHUB_TOKEN = "ghp_4Yx9Qm2LkP7sV3nB8wR1tZ6cF0hJ5dG2aE7u"', "ghp_4Yx9Qm2LkP7sV3nB8wR1tZ6cF0hJ5dG2aE7u"),
    ("SECRET", "PASSWORD=Pa55!=word", "Pa55!=word"),
    ("SECRET", "kind: Secret\ndata:\n  password: d==Qt^Qa+6/Jzi/67ko6\n", "d==Qt^Qa+6/Jzi/67ko6"),
    ("SECRET", "DB_PASSWORD=abc123==", "abc123=="),
    ("SECRET", 'api_token = "ApiTokenX9fQ2mLp"', "ApiTokenX9fQ2mLp"),
    ("ORGANIZATION", "Smith-Jones order 4411 shipped", "Smith-Jones"),
    ("ORGANIZATION", "Patient Garcia-Lopez scan results attached", "Garcia-Lopez"),
    ("ORGANIZATION", "a quote from Harrison-Burke Windows for the kitchen", "Harrison-Burke"),
    ("PERSON", "Prepared by MÜLLER", "MÜLLER"),
    ("US_DRIVER_LICENSE", "driver: 123456789 (CUDA driver 12.1)", "123456789"),
    ("US_DRIVER_LICENSE", "Truck driver license 12345678", "12345678"),
    # found in a review of the fourteenth group's rules: none of these may be lost
    ("US_DRIVER_LICENSE", "TRUCK DRIVER ID: D1234567", "D1234567"),
    ("US_DRIVER_LICENSE", "TX driver: D1234567", "D1234567"),
    ("US_DRIVER_LICENSE", "Network driver training: employee Jane, D1234567", "D1234567"),
    ("PERSON", "Signed by Ngozi OKONJO", "Ngozi OKONJO"),
    ("PERSON", "Dr. Siddharth VENKATARAMAN", "Siddharth VENKATARAMAN"),
    ("PERSON", "Dear Mr. VOLKOVSKY", "VOLKOVSKY"),
    ("PERSON", "Name: James, James", "James, James"),
    ("PERSON", "... import duties paid by Maria Gonzalez", "Maria Gonzalez"),
    ("PERSON", ">>> class reunion organised by Maria Gonzalez", "Maria Gonzalez"),
    ("SECRET", "AZURE_OPENAI_API_KEY_EMBEDDINGS=8f2b1c9d7e6a4f3b2c1d0e9f8a7b6c5d", "8f2b1c9d7e6a4f3b2c1d0e9f8a7b6c5d"),
    ("SECRET", '"grafana_admin_password": "GrafanaAdminWinter"', "GrafanaAdminWinter"),
    ("SECRET", "password: my_pass==word", "my_pass==word"),
    ("SECRET", "wifi pass: hunter22x", "hunter22x"),
    ("SECRET", "Account created.\nUsername: jsmith\nInitial pass: Welcome2024!", "Welcome2024!"),
    ("PERSON", "Verified by TEMBO", "TEMBO"),
    ("PERSON", "Approved by NKOSI", "NKOSI"),
    ("SECRET", "DB_PASSWORD=Tq_8v!=Lm2#", "Tq_8v!=Lm2#"),
    ("SECRET", 'password = "|Correct Horse Battery|"', "|Correct Horse Battery|"),
    ("IT_FISCAL_CODE", "codice fiscale: vedi file CF_RSSMRA85T10A562S.pdf", "RSSMRA85T10A562S"),
    # and a second review's
    ("PERSON", "Approved by AMIT", "AMIT"),
    ("PERSON", "... import Maria Gonzalez", "Maria Gonzalez"),
    ("SECRET", "password: 'Spring.2024|Blue'", "Spring.2024|Blue"),
    ("SECRET", "DB_PASSWORD=admin_pw==2024", "admin_pw==2024"),
    ("SECRET", '"acme_admin_password": "AcmeAdminClient"', "AcmeAdminClient"),
    ("SECRET", 'password = "|WINTER|"', "|WINTER|"),
    ("US_DRIVER_LICENSE", "ABC Moving & Storage driver: D1234567", "D1234567"),
    ("US_DRIVER_LICENSE", "Video driver: D1234567", "D1234567"),
    ("ORGANIZATION", "Patient Garcia-Lopez angles of knee flexion 95 deg", "Garcia-Lopez"),
    ("PERSON", "Approved by: Maria GONZALEZ", "Maria GONZALEZ"),
    ("PERSON", ">>> sign('Gonzalez, Maria')", "Gonzalez, Maria"),
    ("IT_FISCAL_CODE", "Codice fiscale: RSSMRA85T10A562S.", "RSSMRA85T10A562S"),
]


@pytest.mark.parametrize(("entity", "text"), CODE_NEGATIVES, ids=[f"{n[0]}-{i}" for i, n in enumerate(CODE_NEGATIVES)])
def test_code_negative(bare: Classifier, entity: str, text: str) -> None:
    """Shapes of real code and documentation are no identifiers of that kind."""
    assert [v for e, v in found(bare, text) if e == entity] == []


@pytest.mark.parametrize(
    ("entity", "text", "value"), OUTSIDE_POSITIVES, ids=[f"{p[0]}-{i}" for i, p in enumerate(OUTSIDE_POSITIVES)]
)
def test_outside_positive(bare: Classifier, entity: str, text: str, value: str) -> None:
    """What the code negatives must not cost: the identifier next to them is still found whole."""
    assert (entity, value) in found(bare, text)


_CONTROLS = st.one_of(st.integers(0, 0x1F), st.just(0x7F))


# (an escape, the characters that may follow it before "@"): a letter escape alone, a code's
# escape with a protobuf field's tag or without
_ESCAPES = st.one_of(
    st.tuples(st.sampled_from("abfnrtv"), st.just([""])),
    st.tuples(_CONTROLS.map(lambda b: f"x{b:02x}"), st.just(["", "Z", "2", "q"])),
    st.tuples(_CONTROLS.map(lambda b: f"{b:03o}"), st.just(["", "Z", "2", "q"])),
    st.tuples(_CONTROLS.map(lambda c: f"u{c:04X}"), st.just(["", "Z", "2", "q"])),
)
# a code that spells a letter continues a mailbox: JSON's "jos\\u00e9@empresa.es"
_CODES_OF_LETTERS = st.sampled_from([0x61, 0xE9, 0xEB, 0xFC, 0x4E2D])
_LOCALS = st.sampled_from(["maria.gonzalez", "j.smith", "anna_weber", "ops-lead", "jo"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(drawn=_ESCAPES, data=st.data(), local=_LOCALS, quote=st.sampled_from(["b'", '"']))
def test_an_escape_before_at_is_no_mailbox_and_an_address_after_one_is(
    bare: Classifier, drawn: tuple[str, list[str]], data: st.DataObject, local: str, quote: str
) -> None:
    """In a string literal, an escape and at most one more character before "@" (a protobuf
    descriptor's ``\\x01Z@google.golang.org/…``, generated ``"\\n@triton.jit"``) is no mailbox;
    a mailbox written right after an escape (``"\\x20maria.gonzalez@acme-corp.com"``) is found and
    stripped whole."""
    escape, tags = drawn
    tag = data.draw(st.sampled_from(tags))
    text = f"DESCRIPTOR = {quote}\\{escape}{tag}@google.golang.org/genproto{quote[-1]}"
    assert [v for e, v in found(bare, text) if e == "EMAIL_ADDRESS"] == [], text
    text = f"TO = {quote}\\{escape}{local}@acme-corp.com{quote[-1]}"
    values = [v for e, v in found(bare, text) if e == "EMAIL_ADDRESS"]
    assert len(values) == 1 and values[0].endswith(f"{local}@acme-corp.com"), (text, values)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(code=_CODES_OF_LETTERS, before=st.sampled_from(["jos", "no", "m"]), json=st.booleans())
def test_an_escaped_letter_in_a_mailbox_keeps_it_one(bare: Classifier, code: int, before: str, json: bool) -> None:
    """Found in a review: JSON writes non-ASCII escaped (``"jos\\u00e9@empresa.es"``); the
    escape spells a letter of the local part, and the mailbox is still reported."""
    escape = f"u{code:04x}" if json else (f"x{code:02x}" if code <= 0xFF else f"u{code:04x}")
    text = f'{{"email": "{before}\\{escape}@empresa.es"}}'
    assert "EMAIL_ADDRESS" in {e for e, _ in found(bare, text)}, text


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (r'net localgroup administrators /add "AzureAD\jd@contoso.com"', "jd@contoso.com"),
        (r"Event 4624: Account Name: AzureAD\tk@contoso.com", "tk@contoso.com"),
        (r"Get-Mailbox -Identity CONTOSO\hr@contoso.com", "hr@contoso.com"),
        (r"runas /user:MicrosoftAccount\jo@outlook.com cmd.exe", "jo@outlook.com"),
        (r"C:\Users\li\AppData\Local\Microsoft\Outlook\li@acmecorp.com.ost is 48 GB", "li@acmecorp.com"),
        (r'{"user": "AzureAD\\jd@contoso.com"}', "jd@contoso.com"),
        (r'{"ost": "C:\\Outlook\\tk@acmecorp.com.ost"}', "tk@acmecorp.com"),
        (r"\author{J. Doe\\jd@stanford.edu}", "jd@stanford.edu"),
        (r"send: b'RCPT TO:<jos\xc3\xa9@empresa.es>\r\n'", "@empresa.es"),
        (r'write(3, "RCPT TO:<jos\303\251@empresa.es>\r\n", 36)', "@empresa.es"),
        (r'{"email": "jose\u0301@empresa.es"}', "@empresa.es"),
        (r'{"to": "\u003cj@acme.com\u003e"}', "j@acme.com"),
        (r"user=\x22j@acme.com\x22", "j@acme.com"),
        (r"STUDENTS\U12345678@students.usf.edu", "U12345678@students.usf.edu"),
    ],
)
def test_a_mailbox_after_a_backslash_that_escapes_nothing_is_found(bare: Classifier, text: str, value: str) -> None:
    """Found in reviews of the escape rule: a Windows account's domain, a path's folder, an
    escaped backslash or LaTeX's line break stand before real mailboxes with short local parts;
    a mailbox written as bytes or in JSON escapes a letter, an accent or a bracket right before
    "@"."""
    found_values = [v for e, v in found(bare, text) if e == "EMAIL_ADDRESS"]
    assert any(value in v for v in found_values), (text, found_values)


_GIVEN = st.sampled_from(["Lucas", "Maria", "Anna", "Jonas", "Dixon", "Pierre", "Fatima", "Hiroshi"])
_SURNAMES = st.sampled_from(["Gonzalez", "Weber", "Okonkwo", "Dubois", "Kowalski", "Brennan"])
_OBJECTS = st.sampled_from(["Theorem", "Theorems", "Conjecture", "Resultant", "Pseudoprimes", "Polynomials", "Lemmata"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(given=_GIVEN, surname=_SURNAMES, obj=_OBJECTS, lead=st.sampled_from(["", "By the ", "See ", "# "]))
def test_an_eponyms_object_is_no_surname(bare: Classifier, given: str, surname: str, obj: str, lead: str) -> None:
    """ "Lucas Theorem", "Dixon Resultant" (sympy): the object an eponym names, capitalised, is
    no surname, as "Lucas theorem" has none; the same given name before a surname is a person,
    and the object after a colleague's full name leaves the name to the eponym rule as in lower
    case."""
    assert "PERSON" not in {e for e, _ in found(bare, f"{lead}{given} {obj} holds for every n.")}
    assert ("PERSON", f"{given} {surname}") in found(bare, f"{lead}{given} {surname} joined the team on Monday.")


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Prepared by: Karen Garcia Estimator\nProject: Riverside Medical Office Building", "Karen Garcia"),
        ("Kind regards,\nKaren Garcia Estimator\nABC Builders", "Karen Garcia"),
        ("Attendees\n- Karen Garcia Estimator\n- Mike Ross Superintendent", "Karen Garcia"),
        ("Herr Klaus Schmidt Estimator", "Klaus Schmidt"),
        ("Dear Dr. Emily Davis Formula,", "Emily Davis"),
        ("To: Linda Taylor Expansion Manager <ltaylor@abc-retail.com>", "Linda Taylor"),
        ("Fernando Alonso Formula 1 return confirmed by Aston Martin", "Fernando Alonso"),
        ("Interviewed: Greg Skinner Quadrature Capital quant researcher", "Greg Skinner"),
    ],
)
def test_a_name_before_a_capitalised_title_stays_a_name(bare: Classifier, text: str, name: str) -> None:
    """Found in a review of the eponym rule: after a given name and a surname, a capitalised
    word of the objects' list may be a job, a series or a firm; the person is still found."""
    assert any(e == "PERSON" and name in v for e, v in found(bare, text)), found(bare, text)


# recall floors per family on Faker documents: the targets where the family is found by
# its own shape; companies by legal form, role word, joined surnames, a table's company column,
# an address block's line or a bare surname after "bei der" / "avec", but not after "de" ("les
# certificats de Menard"): ≈ 96 % over 700 documents, the floor a few standard deviations below
# that for 84
RECALL_FLOOR = {"PERSON": 0.95, "ADDRESS": 0.9, "DATE_OF_BIRTH": 0.9, "ORGANIZATION": 0.88}


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(min_value=0, max_value=2**31 - 1))
# 112 of 120 people before the name fields, columns and greetings of people_fields.py (117 after)
@example(seed=156723740)
def test_faker_documents_recall(bare: Classifier, seed: int) -> None:
    """Names, companies, addresses and dates of birth from Faker's EN/DE/FR providers are
    stripped whole at the floors above, whatever the seed."""
    hits: dict[str, int] = {}
    total: dict[str, int] = {}
    for doc in faker_documents(3, seed=seed):
        d = bare.classify(content(doc.text))
        assert not d.failed_closed
        covered = bytearray(len(doc.text))
        for f in d.findings:
            covered[f.start : f.end] = b"\x01" * (f.end - f.start)
        for p in doc.planted:
            total[p.family] = total.get(p.family, 0) + 1
            hits[p.family] = hits.get(p.family, 0) + all(covered[p.start : p.end])
    for family, floor in RECALL_FLOOR.items():
        assert hits[family] / total[family] >= floor, (family, hits[family], total[family], seed)


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(min_value=0, max_value=2**31 - 1))
def test_faker_clean_prose_is_forwarded_unchanged(bare: Classifier, seed: int) -> None:
    """Business prose with Faker's towns, countries, jobs, months and weekdays and no identifier
    has nothing to strip (at most one sentence in 20 may, the issue's 99 % over many seeds)."""
    docs = clean_documents(5, seed=seed)
    flagged = [(t, found(bare, t)) for _, t in docs if found(bare, t)]
    assert len(flagged) <= len(docs) // 20, flagged
