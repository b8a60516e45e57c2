"""Values that only look like people, mailboxes and hosts in code and reference data, each beside
the real thing, which stays found.

Found on real packages (2026-12-05): a docstring's "Turan Graph" under ``def turan_graph(n,
r):``, a span name "Huey Chord" beside ``isinstance(item, HueyChord)``, "3.1.1.6" in a list of
version strings and "Guile 3.0.5.130-5a1e7" read as hosts, "Northern Mariana Islands" read as a
person and CNRI's "1895 Preston White Drive" holding one. Each property also holds the real thing
beside it, including the counterexamples an adversarial review of the first version of these
rules found (a name beside its own handle or file, a surname greeted in a quoted chat message,
"please place Maria Gonzalez", a private host with a "-dev" tag, a token in a Git URL).
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tiers import Classifier
from tiers._context import power_of_two
from tiers.recognizers._code import spelt_in_code
from tiers.recognizers._hash_constants import hash_constant
from tiers.recognizers._english_words import is_english_word
from tiers.recognizers._surnames import is_surname

from .conftest import content

_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

# people's names every build of the recognizer finds in prose (given name from the gazetteer,
# surname no English word), and nouns of code and maths that no census surname spells
_PEOPLE = [("Maria", "Gonzalez"), ("Anna", "Kowalski"), ("Jonas", "Brandt"), ("Pierre", "Lefebvre"),
           ("Wei", "Zhang"), ("Leonie", "Hoffmann"), ("Samuel", "Okafor")]  # fmt: skip
# people whose surname is a word of the dictionary too: the identifier rule may read their names
_WORD_PEOPLE = [("Anna", "Hill"), ("John", "Baker"), ("Maria", "Stone"), ("Jonas", "Fisher")]
_TERMS = ["Graph", "Chord", "Task", "Path", "Solver", "Lattice", "Queue", "Matrix"]
_GIVEN_WORDS = ["Turan", "Huey", "Diamond", "Mariana", "Maria", "Jonas", "Wei"]


def _values(clf: Classifier, text: str, entity: str) -> set[str]:
    decision = clf.classify(content(text))
    assert not decision.failed_closed, decision.reasons
    return {text[f.start : f.end] for f in decision.findings if f.entity_type == entity}


def _snake(*words: str) -> str:
    return "_".join(w.lower() for w in words)


# -- a term that the code around it spells as an identifier ---------------------------------------


# a term (a given name that is a word and a noun of code) and a person named beside it
_TERM_AND_PERSON = {
    "given_name": st.sampled_from(_GIVEN_WORDS),
    "term": st.sampled_from(_TERMS),
    "person": st.sampled_from(_PEOPLE + _WORD_PEOPLE),
}


def _filler(lines: int) -> str:
    return "".join(f"    value_{i} = compute(value_{i - 1}, {i})\n" for i in range(1, lines))


@_SETTINGS
@given(
    **_TERM_AND_PERSON,
    form=st.sampled_from(
        [
            "def {s}(n, r):",
            "def test_{s}_path(self):",
            "x = {c}()",
            "isinstance(item, {c})",
            "class {c}:",
            "`graph_{s}`",
            "g.{s}_cache",
        ]
    ),  # fmt: skip
)
def test_a_term_spelt_as_an_identifier_nearby_is_no_person(
    clf: Classifier, given_name: str, term: str, person: tuple[str, str], form: str
) -> None:
    name = f"{person[0]} {person[1]}"
    code = form.format(s=_snake(given_name, term), c=given_name + term)
    text = f'{code}\n    """Return the {given_name} {term} of the graph.\n\n    Written by {name}.\n    """\n'
    people = _values(clf, text, "PERSON")
    assert f"{given_name} {term}" not in people
    assert name in people  # the author beside it is still a person


@_SETTINGS
@given(
    **_TERM_AND_PERSON,
    form=st.sampled_from(
        ["def is_{s}_available():", "class {c}ImageProcessor(Base):", "class Fast{c}:", "def {s}(x):"]
    ),
    lines=st.integers(60, 400),
    definition_first=st.booleans(),
)
def test_a_term_the_text_defines_far_away_is_no_person(
    clf: Classifier, given_name: str, term: str, person: tuple[str, str], form: str, lines: int,
    definition_first: bool,
) -> None:  # fmt: skip
    """A definition anywhere in the text (``class ZoeDepthImageProcessor`` two hundred lines
    above "# Zoe Depth model adds padding") names the term wherever it stands; a person named
    beside the comment stays a person, and the same comment in a text that defines nothing of
    that name stays read as it was."""
    name = f"{person[0]} {person[1]}"
    code = form.format(s=_snake(given_name, term), c=given_name + term)
    filler = _filler(lines)
    comment = f"    # {given_name} {term} adds padding here; reviewed by {name}.\n"
    text = f"{code}\n{filler}{comment}" if definition_first else f"{comment}{filler}{code}\n"
    assert len(text) > 2048  # beyond the window of the spellings read near the candidate
    people = _values(clf, text, "PERSON")
    assert f"{given_name} {term}" not in people
    assert name in people
    # a definition of another name says nothing of this one
    other = text.replace(code, form.format(s=_snake("Ruler", term), c="Ruler" + term))
    assert name in _values(clf, other, "PERSON")


@_SETTINGS
@given(
    given_name=st.sampled_from(["Grace", "John", "Mark", "Anna", "Jonas", "Maria"]),
    surname=st.sampled_from(["Hill", "Smith", "Price", "Stone", "Baker", "Walker", "Young", "Fisher"]),
    form=st.sampled_from(["def test_refund_for_{s}(client):", "class {c}Test:", "public class {c}InvoiceTest {{",
                          "def {s}_fixture():"]),
    lines=st.integers(60, 200),
    carrier=st.sampled_from(["Customer {n} says her refund never arrived.", "Dear {n},", "Ms. {n}", "reported by {n}"]),
)  # fmt: skip
def test_a_customer_named_in_a_test_far_away_stays_a_person(
    clf: Classifier, given_name: str, surname: str, form: str, lines: int, carrier: str
) -> None:
    """A test named after the customer who reported the bug, far from where the customer is
    named: a definition from afar counts only for words whose last is no census surname."""
    name = f"{given_name} {surname}"
    code = form.format(s=_snake(given_name, surname), c=given_name + surname)
    filler = _filler(lines)
    text = f"{code}\n{filler}\n{carrier.format(n=name)}\n"
    assert name in _values(clf, text, "PERSON"), text


@_SETTINGS
@given(
    person=st.sampled_from(_PEOPLE + _WORD_PEOPLE),
    handle=st.sampled_from(
        [
            "@{s}",
            "@{s}_dev",
            "/home/{s}/project",
            "/home/{s}_old/x",
            "{s}@corp-mail.de",
            "{s}_2@corp-mail.de",
            '"{s}": {{"id": 7}}',
            "login {s} approved",
            "~{s}_bak/notes",
            "user = '{s}'",
            r"C:\\Users\\{s}_x",
            "{c}_CV.pdf",
            "{s}_resume.pdf",
            "#{c}",
            "{c} in Jira",
            "{c}2024",
            "file: {s}_1982",
        ]
    ),  # fmt: skip
)
def test_a_name_beside_its_own_handle_stays_a_name(clf: Classifier, person: tuple[str, str], handle: str) -> None:
    """A person's name spelt as an identifier that is no code (a login, a key, a mention, a
    mailbox, a home directory, a file's name, a record's id) is theirs: the name is still found,
    whether or not the surname is a word of the dictionary."""
    name = f"{person[0]} {person[1]}"
    text = f"{name} ({handle.format(s=_snake(*person), c=''.join(person))}) reviewed the change.\n"
    assert name in _values(clf, text, "PERSON"), text


def test_spelt_in_code_reads_whole_words_of_an_identifier() -> None:
    text = "credit_distances = 3\nthe Edit Distance of two graphs"
    at = text.index("Edit")
    assert not spelt_in_code(text, at, at + len("Edit Distance"))
    text = "graph_edit_distance(g1, g2)\nthe Edit Distance of two graphs"
    at = text.index("Edit")
    assert spelt_in_code(text, at, at + len("Edit Distance"))
    # the camel form must end where its last word does: "HueyChords" names something else
    text = "class HueyChords: ...\nspan = 'Huey Chord'"
    at = text.index("Huey Chord")
    assert not spelt_in_code(text, at, at + len("Huey Chord"))
    # a definition far away counts only with its words whole: "HueyChords" again
    text = "class HueyChords: ...\n" + "x = 1\n" * 400 + "span = 'Huey Chord'"
    at = text.index("Huey Chord")
    assert not spelt_in_code(text, at, at + len("Huey Chord"))
    text = text.replace("HueyChords", "FastHueyChordCache")
    at = text.index("Huey Chord")
    assert spelt_in_code(text, at, at + len("Huey Chord"))
    # a surname that is no word of the dictionary is never read as a term
    text = "def maria_gonzalez_report(x): ...\nby Maria Gonzalez"
    at = text.index("Maria Gonzalez")
    assert not spelt_in_code(text, at, at + len("Maria Gonzalez"))


# -- places and streets ----------------------------------------------------------------------------


@_SETTINGS
@given(
    given_name=st.sampled_from(["Mariana", "Solomon", "Marshall", "Ellice", "Maria", "Jonas"]),
    noun=st.sampled_from(["Islands", "Archipelago", "Republic", "Territories", "Peninsula", "Highlands"]),
    person=st.sampled_from(_PEOPLE + _WORD_PEOPLE),
    before=st.sampled_from(["", "Northern ", "the "]),
)
def test_a_given_name_before_a_place_noun_names_a_place(
    clf: Classifier, given_name: str, noun: str, person: tuple[str, str], before: str
) -> None:
    name = f"{person[0]} {person[1]}"
    text = f'{{"name": "{before}{given_name} {noun}", "numeric": "580", "contact": "{name}"}}'
    people = _values(clf, text, "PERSON")
    assert not any(noun in p for p in people), people
    assert name in people
    # a person's name before a place's noun in a title is the person ("Region Lead")
    assert name in _values(clf, f"{name} {noun} Lead approved the discount.", "PERSON")


@_SETTINGS
@given(
    person=st.sampled_from(_PEOPLE),
    number=st.integers(1, 9999),
    street=st.sampled_from(["Drive", "Avenue", "Boulevard", "Street", "Blvd", "Ave", "Pkwy"]),
    suffix=st.sampled_from(["", " Jr.", " Jr", " Sr."]),
)
def test_a_street_named_after_a_person_is_an_address_not_a_person(
    clf: Classifier, person: tuple[str, str], number: int, street: str, suffix: str
) -> None:
    name = f"{person[0]} {person[1]}"
    line = f"{number} {name}{suffix} {street}"
    text = f"an office at {line}, Reston, VA 20191. Ask {name} there."
    people = [text[f.start : f.end] for f in clf.classify(content(text)).findings if f.entity_type == "PERSON"]
    addresses = _values(clf, text, "ADDRESS")
    assert any(line in a for a in addresses), addresses
    assert people == [name]  # the person asked, once; the street's name is the address's
    # a verb, an id before a name, a surname that is a street's type: people
    for other in (f"Please place {name} on the list.", f"Employee {number} {name} joined.",
                  f"{number}, {name}, left", f"ID: {number} Diane Lane and {number} Glenn Close",
                  f"ticket #{number} {name} Drive team", f"ID: {number} {name} Avenue office"):  # fmt: skip
        found = _values(clf, other, "PERSON")
        assert found & {name, "Diane Lane", "Glenn Close"}, (other, found)


@_SETTINGS
@given(
    person=st.sampled_from(_PEOPLE + _WORD_PEOPLE),
    number=st.integers(1, 9999),
    street=st.sampled_from(["AVENUE", "BOULEVARD", "STREET", "BLVD", "AVE", "ST", "RD", "PKWY"]),
    suffix=st.sampled_from(["", " JR", " JR.", " SR"]),
    tail=st.sampled_from(["", ", RESTON, VA 20191", "\nRESTON VA 20191", ", APT 4"]),
)
def test_a_street_line_in_capitals_is_an_address_and_no_person(
    clf: Classifier, person: tuple[str, str], number: int, street: str, suffix: str, tail: str
) -> None:
    """As labels print it ("1400 MARTIN LUTHER KING JR BLVD"): the whole line an address, the
    person the street is named after no person."""
    line = f"{number} {person[0].upper()} {person[1].upper()}{suffix} {street}"
    text = f"DELIVER TO {line}{tail}\nREF 7"
    addresses = _values(clf, text, "ADDRESS")
    assert any(line in a for a in addresses), (text, addresses)
    assert not any("REF" in a for a in addresses), addresses  # the next line is no town
    assert not _values(clf, text, "PERSON"), text


@pytest.mark.parametrize(
    "text",
    ["STEP 3 PRESS THE ROAD", "4 OF THE BEST ROAD TRIPS", "ERROR 404 NOT FOUND", "SELECT 1 FROM DUAL",
     # an adversarial review's: products, counters, courts, a town that is none
     "2 TB EXTERNAL HARD DRIVE 79.99", "STEP 4 INSERT USB DRIVE", "TRACK 1 ABBEY ROAD", "TOP 10 WALL STREET STOCKS",
     "2 LANE ROAD AHEAD", "FILED UNDER CHAPTER 11 BANKRUPTCY COURT", "THE 10 BEST ROAD TRIPS IN THE USA",
     "EVENT: 10 K ROAD RACE", "100 MILE ROAD RACE", "COUNTY APPROVES $5 MILLION ROAD PROJECT"],
)  # fmt: skip
def test_instructions_in_capitals_are_no_address(clf: Classifier, text: str) -> None:
    assert not _values(clf, text, "ADDRESS"), text


def test_a_street_line_takes_no_words_after_it_for_a_town(clf: Classifier) -> None:
    assert _values(clf, "12 MAIN ST, THANK YOU", "ADDRESS") == {"12 MAIN ST"}


@pytest.mark.parametrize(
    ("text", "name"),
    [("Top 10 Maria Lopez street photography", "Maria Lopez"),  # a lower-case "street" is no street's type
     ("Chapter 3 Maria Gonzalez Road trip", "Maria Gonzalez"),  # a number that counts chapters
     ("Ward 3 Mary Jones St Thomas Hospital", "Mary Jones")],  # "St" before a name: a saint's
)  # fmt: skip
def test_people_after_numbers_that_are_no_house_numbers_stay_people(clf: Classifier, text: str, name: str) -> None:
    assert name in _values(clf, text, "PERSON"), text


# -- dotted numbers that are versions and sections -------------------------------------------------

_octet = st.integers(0, 255)


@_SETTINGS
@given(
    small=st.tuples(st.integers(1, 9), st.integers(0, 9), st.integers(0, 9), st.integers(0, 9)),
    private=st.tuples(st.integers(0, 255), st.integers(0, 255), st.integers(2, 254)),
    sep=st.sampled_from(["\n        ", ", ", " and "]),
)
def test_a_quad_of_single_digit_numbers_is_a_version_beside_a_real_address(
    clf: Classifier, small: tuple[int, int, int, int], private: tuple[int, int, int], sep: str
) -> None:
    version = ".".join(map(str, small))
    host = f"10.{private[0]}.{private[1]}.{private[2]}"
    text = f"versions 1.5.2b2{sep}{version}{sep}3.10a; the build host is {host}\n"
    assert _values(clf, text, "IP_ADDRESS") == {host}


@_SETTINGS
@given(
    version=st.tuples(st.integers(1, 9), st.integers(0, 9), st.integers(0, 9), st.integers(10, 255)),
    host=st.tuples(st.sampled_from([10, 93, 172, 192]), st.integers(16, 168), _octet, st.integers(10, 254)),
    tag=st.sampled_from(["-beta2", "-rc1", "-SNAPSHOT", "-5a1e7", "-g5a1e7f0", "-dev3"]),
)
def test_a_release_with_its_build_tag_is_no_address_but_a_tagged_host_is(
    clf: Classifier, version: tuple[int, int, int, int], host: tuple[int, int, int, int], tag: str
) -> None:
    release = ".".join(map(str, version))
    assert release not in _values(clf, f"using Guile {release}{tag}.", "IP_ADDRESS")
    address = ".".join(map(str, host))
    assume(address in _values(clf, f"allow {address} now", "IP_ADDRESS"))
    assert address in _values(clf, f"hosts: {address}{tag}, then scp file {address}{tag}:/tmp", "IP_ADDRESS")


# -- a list's tail, alternatives, greetings ---------------------------------------------------------


@_SETTINGS
@given(
    firm=st.sampled_from(["Watts, Black and Field", "Baker, Botts and Lovell", "Sullivan, Cromwell and Hale"]),
    lead=st.sampled_from(["Top and ", "North & ", "Front and "]),
)
def test_a_lists_tail_is_no_firm_but_a_firm_after_prose_is(clf: Classifier, firm: str, lead: str) -> None:
    tail = firm.replace("Watts", "Bottom").replace("Baker", "Bottom").replace("Sullivan", "Bottom")
    assert not _values(clf, f"trim the pixels on {lead}{tail} first.", "ORGANIZATION")
    assert firm in _values(clf, f"the contract with {firm} was signed.", "ORGANIZATION")
    # after another firm and a conjunction, a list of firms
    assert firm in _values(clf, f"We retained Skadden and {firm}.", "ORGANIZATION")


_word = st.sampled_from("template data text read write horse battery staple correct violet orbit".split())


@_SETTINGS
@given(
    left=st.lists(_word, min_size=1, max_size=3),
    right=st.lists(_word, min_size=1, max_size=3),
    key=st.sampled_from(["TOKEN_DATA", "API_TOKEN", "access_key", "auth_token"]),
)
def test_words_offered_as_alternatives_describe_a_token_but_a_passphrase_is_one(
    clf: Classifier, left: list[str], right: list[str], key: str
) -> None:
    described = f"{' '.join(left)} / {' '.join(right)}"
    passphrase = " ".join(left + right)
    assume(len(set(left + right)) >= 3 and not any(w in key.lower() for w in left + right))
    assert not _values(clf, f'    {key}: "{described}",\n', "SECRET")
    assert passphrase in _values(clf, f'    {key}: "{passphrase}",\n', "SECRET")
    # under a password's name any value is one, alternatives or not
    assert described in _values(clf, f'    DB_PASSWORD: "{described}",\n', "SECRET")


@_SETTINGS
@given(
    salutation=st.sampled_from(["Welcome", "Thanks", "Hello", "Hey", "Bye"]),
    given_name=st.sampled_from(["John", "Maria", "Jonas", "Samuel"]),
    surname=st.sampled_from(["Penfold", "Gonzalez", "Brandt"]),
    quote=st.sampled_from(['"', "'", ""]),
)
def test_a_salutation_before_a_comma_is_no_surname_but_the_greeted_is_a_person(
    clf: Classifier, salutation: str, given_name: str, surname: str, quote: str
) -> None:
    people = _values(clf, f"reply: {quote}{salutation}, {given_name} - the contract is ready{quote}", "PERSON")
    assert f"{salutation}, {given_name}" not in people
    assert given_name in people
    assert f"{surname}, {given_name}" in _values(clf, f"signed: {surname}, {given_name}\n", "PERSON")
    # a surname greeted in a quoted chat message is the person greeted
    assert surname in _values(clf, f'{{"content": "Hi {surname}, the lab results are in"}}', "PERSON")


# -- fetch modes, schema types, optional chaining, code under a token's name, masks ----------------


@_SETTINGS
@given(
    syntax=st.sampled_from(["t.{k}=`{v}`", '"{k}": "{v}",', "{k}: '{v}'", '{k} = "{v}"']),
    mode=st.sampled_from(["include", "omit", "same-origin"]),
    schema=st.sampled_from(["boolean?", "string[]", "number?", "integer"]),
    key=st.sampled_from(["credentials", "password", "apiKey", "secret"]),
)
def test_a_fetch_mode_or_a_schema_type_is_no_credential(
    clf: Classifier, syntax: str, mode: str, schema: str, key: str
) -> None:
    assert not _values(clf, syntax.format(k="credentials", v=mode) + "\n", "SECRET")
    assert not _values(clf, syntax.format(k=key, v=schema) + "\n", "SECRET")
    # a fetch mode's word under a password's name is that password
    assert mode in _values(clf, syntax.format(k="password", v=mode) + "\n", "SECRET")


@_SETTINGS
@given(
    obj=st.from_regex(r"[a-z]{3,8}[0-9]?", fullmatch=True),
    attr=st.sampled_from(["authInfo", "token", "password", "apiKey"]),
    key=st.sampled_from(["auth", "token", "password", "apiKey"]),
    secret=st.sampled_from(["Kx9mQ2?.Horse", "Zq7?.Vn2xK9m"]),
)
def test_optional_chaining_is_code_but_a_value_with_its_marks_is_not(
    clf: Classifier, obj: str, attr: str, key: str, secret: str
) -> None:
    assert not _values(clf, f"const {key} = {obj}?.{attr};\n", "SECRET")
    assert secret in _values(clf, f"DB_PASSWORD={secret}\nAPI_KEY={secret}\n", "SECRET")


@_SETTINGS
@given(
    key=st.sampled_from(["pat", "token", "api_key", "access_key"]),
    line=st.sampled_from(['call i32 asm sideeffect "mov $1, $2", "=r,r"( i32 123 )', 'f(a, b) == {"x": [1, 2]}']),
    selector=st.sampled_from([".special-token:empty::before{", "a.token:hover {", "#api-key:focus{"]),
    secret=st.sampled_from(
        ["ghp_ZxC9mQ2vL7pWq8RtY3uI0oPaS4dF6gH1jK2l", "Zx9mQ2vL7pWq8RtY3uI0oPaS", "a8F!k (2x) $z=Q9"]
    ),
)
def test_code_and_selectors_under_a_tokens_name_are_no_tokens(
    clf: Classifier, key: str, line: str, selector: str, secret: str
) -> None:
    assert not _values(clf, f"        {key} = '{line}'\n", "SECRET")
    assert not _values(clf, f"{selector}\n    position: relative;\n}}\n", "SECRET")
    assert secret in _values(clf, f"        {key} = '{secret}'\n", "SECRET")


@_SETTINGS
@given(exponent=st.integers(16, 40), other=st.integers(65537, 10**10))
def test_a_power_of_two_beside_a_context_word_is_no_licence(clf: Classifier, exponent: int, other: int) -> None:
    mask = str(2**exponent)
    assume(other & (other - 1) != 0 and 7 <= len(str(other)) <= 9)
    assume(not hash_constant(str(other)))  # a hash's published constant is none either
    text = f"(r=El,El={mask},Dl(e,t,n),El=r)\nDL {other}"
    licences = _values(clf, text, "US_DRIVER_LICENSE")
    assert mask not in licences
    assert str(other) in _values(clf, f"DL {other}", "US_DRIVER_LICENSE")
    assert power_of_two(mask) and not power_of_two(str(other))


# -- licences, roles, postcodes, tokens in URLs ----------------------------------------------------


@_SETTINGS
@given(
    word=st.sampled_from(["UNKNOWN", "NONE", "NOBODY", "ANONYMOUS"]),
    surname=st.sampled_from(["SMITH", "GONZALEZ", "MILLER"]),
    role=st.sampled_from(["Author: ", "Owner: ", "Contact: "]),
)
def test_a_word_in_capitals_after_a_role_is_no_person_but_a_surname_is(
    clf: Classifier, word: str, surname: str, role: str
) -> None:
    assume(is_english_word(word.lower()) and not is_surname(word))
    assert word not in _values(clf, f"{role}{word}\nVersion: 1.0\n", "PERSON")
    assert surname in _values(clf, f"{role}{surname}\nVersion: 1.0\n", "PERSON")


@_SETTINGS
@given(
    state_prefix=st.sampled_from(
        [("MA", 21), ("MA", 10), ("CA", 941), ("NY", 100), ("TX", 787), ("DC", 200), ("WA", 981)]
    ),
    rest=st.integers(0, 99),
    plus4=st.integers(1, 9999),
    # a line break may carry the next comment line's mark: the GPL header in chardet's "#" lines
    sep=st.sampled_from([" ", ", ", "\n    ", ",\n", "\n# ", "\n// ", "\n * ", "\n-- ", "\n;; "]),
    phone=st.sampled_from(["(415) 555-2671", "+1 617 542 5942", "+44 20 7946 0958"]),
)
def test_a_zip_plus_4_after_a_state_is_no_phone_but_a_number_after_a_word_is(
    clf: Classifier, state_prefix: tuple[str, int], rest: int, plus4: int, sep: str, phone: str
) -> None:
    state, prefix = state_prefix
    code = f"{prefix * 100 + rest:05d}-{plus4:04d}"
    text = (
        f"write to the Free Software Foundation, Inc., 51 Franklin Street, Boston, {state}{sep}{code} USA. Tel. {phone}"
    )
    phones = _values(clf, text, "PHONE_NUMBER")
    assert code not in phones
    assert phone in phones
    # a state's code that is a word or a country ("DE", "OR", "ME") without a town before it
    # nor a code whose ZIP range the number is not in (Delaware's start 197-199)
    for carrier in (
        "Hotline DE 06221-5678",
        "Please call 0711-123456 OR 06221-5678",
        "Hotline DE\n# 06221-5678",
        "# Musterfirma GmbH, Heidelberg, DE\n# 06221-5678",
        "// Contact: Acme, Heidelberg, DE\n// 06221-5678",
    ):
        assert "06221-5678" in _values(clf, carrier, "PHONE_NUMBER")


@_SETTINGS
@given(
    token=st.from_regex(r"[0-9a-f]{40}", fullmatch=True),
    marker=st.sampled_from(["do not distribute", "do not forward"]),
    subject=st.sampled_from(["you", "we", "they"]),
)
def test_tokens_in_urls_and_asked_for_confidentiality_stay_found(
    clf: Classifier, token: str, marker: str, subject: str
) -> None:
    """Counterexamples to rules tried and taken out: a token as a Git URL's user is reported (as
    a secret with its URL, or as the mailbox it is shaped like where it reads as no token: a run
    of zeros), and a marker asked of someone is a marker."""
    text = f"git clone https://{token}@github.com/acme/private.git"
    assert any(token in v for v in _values(clf, text, "SECRET") | _values(clf, text, "EMAIL_ADDRESS")), text
    assert _values(clf, f"Please make sure {subject} do not distribute this deck.", "CONFIDENTIALITY_MARKER")


_CASES = {"lower": str.lower, "title": str.title, "upper": str.upper}


_LICENCE_BEFORE = re.compile(r"(?:^|[^A-Za-z])[a-z]+ $")
_MARKER_PLACES = ("Provided that you ", "Provided that Licensee ", "# ", "Board minutes [", "internal draft, ", "(", "", "Subject: ")  # fmt: skip
_NEAR_MISSES = ("do not\nDistribute", "do  not Distribute", "do not  Distribute", "Do not Distribute", "do NOT Distribute", "do not DISTRIBUTE", "do not distribute")  # fmt: skip


@_SETTINGS
@given(
    before=st.sampled_from(["Provided that you ", "provided that\n    you ", "so long as the recipient ", "if they "]),
    rest=st.sampled_from(["the Modified Version", "the Package", "it.", "any copies"]),
)
def test_a_licence_s_defined_verb_is_no_marker(clf: Classifier, before: str, rest: str) -> None:
    """The Artistic License's "provided that you do not Distribute the Modified Version": a
    capitalised term in a lower-case sentence (a lower-case word and one space before it, one
    space between its words) is a condition the licence defines."""
    text = f"{before}do not Distribute {rest}"
    assert not _values(clf, text, "CONFIDENTIALITY_MARKER"), text


@_SETTINGS
@given(
    spell=st.tuples(*[st.sampled_from(sorted(_CASES))] * 3),
    gap=st.sampled_from([" ", "  ", "\n"]),
    before=st.sampled_from(_MARKER_PLACES),
    rest=st.sampled_from(["the Modified Version", "this deck", "it.", "any copies"]),
)
def test_do_not_distribute_stays_a_marker_elsewhere(
    clf: Classifier, spell: tuple[str, str, str], gap: str, before: str, rest: str
) -> None:
    """The phrase in any other spelling or place stays a marker: one case, title case, after a
    comment's mark, a bracket, a comma or a capitalised word, alone, across a line break."""
    words = [_CASES[case](word) for case, word in zip(spell, ("do", "not", "distribute"), strict=True)]
    assume(not (spell == ("lower", "lower", "title") and gap == " " and _LICENCE_BEFORE.search(before)))
    phrase = gap.join(words)
    text = f"{before}{phrase} {rest}"
    assert _values(clf, text, "CONFIDENTIALITY_MARKER") == {phrase}, text


@_SETTINGS
@given(
    before=st.sampled_from(["Provided that you ", "so long as the recipient ", "if they "]),
    near=st.sampled_from(_NEAR_MISSES),
)
def test_near_misses_of_the_licence_form_stay_markers(clf: Classifier, before: str, near: str) -> None:
    """One step from the licence's spelling in the same sentence (a line break or a double space
    between the words, another case) is a marker again."""
    text = f"{before}{near} this deck."
    assert _values(clf, text, "CONFIDENTIALITY_MARKER") == {near}, text
