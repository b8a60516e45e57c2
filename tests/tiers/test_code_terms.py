"""Values that only look like people, mailboxes and hosts in code and reference data, each beside
the real thing, which stays found.

Found on a tenth read of real packages (2026-12-05): a docstring's "Turan Graph" under ``def
turan_graph(n, r):``, a span name "Huey Chord" beside the class ``HueyChord``, a Sentry DSN's key
and a job's id in ``scheme://<id>@host`` read as mailboxes, "3.1.1.6" in a list of version
strings and "Guile 3.0.5.130-5a1e7" read as hosts, "Northern Mariana Islands" read as a person
and CNRI's "1895 Preston White Drive" holding one.
"""

from __future__ import annotations

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tiers import Classifier
from tiers._context import power_of_two
from tiers.recognizers._code import spelt_in_code
from tiers.recognizers._english_words import is_english_word
from tiers.recognizers._surnames import is_surname

from .conftest import content

_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

# people's names every build of the recognizer finds in prose (given name from the gazetteer,
# surname no English word), and nouns of code and maths that no census surname spells
_PEOPLE = [("Maria", "Gonzalez"), ("Anna", "Kowalski"), ("Jonas", "Brandt"), ("Pierre", "Lefebvre"),
           ("Wei", "Zhang"), ("Leonie", "Hoffmann"), ("Samuel", "Okafor")]  # fmt: skip
_TERMS = ["Graph", "Chord", "Task", "Path", "Solver", "Lattice", "Queue", "Matrix"]
_GIVEN_WORDS = ["Turan", "Huey", "Diamond", "Mariana", "Maria", "Jonas", "Wei"]


def _values(clf: Classifier, text: str, entity: str) -> set[str]:
    decision = clf.classify(content(text))
    assert not decision.failed_closed, decision.reasons
    return {text[f.start : f.end] for f in decision.findings if f.entity_type == entity}


def _snake(*words: str) -> str:
    return "_".join(w.lower() for w in words)


# -- a term that the code around it spells as an identifier ---------------------------------------


@_SETTINGS
@given(
    given_name=st.sampled_from(_GIVEN_WORDS),
    term=st.sampled_from(_TERMS),
    person=st.sampled_from(_PEOPLE),
    form=st.sampled_from(
        [
            "def {s}(n, r):",
            "def test_{s}_path(self):",
            "x = {c}()",
            "isinstance(item, {c})",
            "tags['{s}_id'] = 1",
            "`graph_{s}`",
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
    person=st.sampled_from(_PEOPLE),
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
        ]
    ),  # fmt: skip
)
def test_a_name_beside_its_own_handle_stays_a_name(clf: Classifier, person: tuple[str, str], handle: str) -> None:
    """A person's name spelt as an identifier alone is that person's login, key or home, and one
    beside "@", "/", "~" or "\\" (a mention, a mailbox, a home directory) is theirs however
    long: the name is still found. (Not covered: an unquoted login with more after the name,
    ``maria_gonzalez_admin``, reads as code; the login then names the person anyway.)"""
    name = f"{person[0]} {person[1]}"
    text = f"{name} ({handle.format(s=_snake(*person))}) reviewed the change.\n"
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


# -- places and streets ----------------------------------------------------------------------------


@_SETTINGS
@given(
    given_name=st.sampled_from(["Mariana", "Solomon", "Marshall", "Ellice", "Maria", "Jonas"]),
    noun=st.sampled_from(["Islands", "Archipelago", "Republic", "Territories", "Peninsula", "Highlands"]),
    person=st.sampled_from(_PEOPLE),
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


@_SETTINGS
@given(
    person=st.sampled_from(_PEOPLE),
    number=st.integers(1, 9999),
    street=st.sampled_from(["Drive", "Avenue", "Road", "Boulevard", "Lane", "Street"]),
)
def test_a_street_named_after_a_person_is_an_address_not_a_person(
    clf: Classifier, person: tuple[str, str], number: int, street: str
) -> None:
    name = f"{person[0]} {person[1]}"
    text = f"an office at {number} {name} {street}, Reston, VA 20191. Ask {name} there."
    people = [text[f.start : f.end] for f in clf.classify(content(text)).findings if f.entity_type == "PERSON"]
    addresses = _values(clf, text, "ADDRESS")
    assert any(f"{number} {name} {street}" in a for a in addresses), addresses
    assert people == [name]  # the person asked, once; the street's name is the address's


# -- a URL's user part that is an id --------------------------------------------------------------


@_SETTINGS
@given(
    user=st.one_of(st.from_regex(r"[0-9a-f]{16,40}", fullmatch=True), st.from_regex(r"[0-9]{8,20}", fullmatch=True)),
    scheme=st.sampled_from(["https", "ssh", "git+ssh", "amqp"]),
    host=st.sampled_from(["o4506985151856640.ingest.us.sentry.io", "ssh.hf.jobs", "queue.acme-corp.de"]),
    mailbox=st.from_regex(r"[a-z]{2,8}\.[a-z]{2,10}", fullmatch=True),
)
def test_an_id_as_a_urls_user_is_no_mailbox(clf: Classifier, user: str, scheme: str, host: str, mailbox: str) -> None:
    text = f'DSN = "{scheme}://{user}@{host}/42"  # owner {mailbox}@acme-corp.de\n'
    mails = _values(clf, text, "EMAIL_ADDRESS")
    assert mails == {f"{mailbox}@acme-corp.de"}, mails
    # the same id written as a mailbox, and a person's login in a URL, are addresses
    assert f"{user}@{host}" in _values(clf, f"write to {user}@{host} today", "EMAIL_ADDRESS")
    assert f"{mailbox}@{host}" in _values(clf, f"{scheme}://{mailbox}@{host}/42", "EMAIL_ADDRESS")


# -- dotted numbers that are versions and sections, default routers -------------------------------

_octet = st.integers(0, 255)


@_SETTINGS
@given(
    small=st.tuples(st.integers(1, 9), st.integers(0, 9), st.integers(0, 9), st.integers(0, 99)),
    private=st.tuples(st.integers(0, 255), st.integers(0, 255), st.integers(2, 254)),
    sep=st.sampled_from(["\n        ", ", ", " and "]),
)
def test_a_quad_of_single_digit_numbers_is_a_version_beside_a_real_address(
    clf: Classifier, small: tuple[int, int, int, int], private: tuple[int, int, int], sep: str
) -> None:
    version = ".".join(map(str, small))
    host = f"10.{private[0]}.{private[1]}.{private[2]}"
    assume(host not in ("10.0.0.1",))
    text = f"versions 1.5.2b2{sep}{version}{sep}3.10a; the build host is {host}\n"
    assert _values(clf, text, "IP_ADDRESS") == {host}


@_SETTINGS
@given(
    quad=st.tuples(st.integers(11, 223), _octet, _octet, st.integers(10, 254)),
    tag=st.sampled_from(["-beta2", "-rc1", "-SNAPSHOT", "-5a1e7", "-g5a1e7f0", "-dev3"]),
)
def test_a_release_with_its_build_tag_is_no_address(clf: Classifier, quad: tuple[int, int, int, int], tag: str) -> None:
    value = ".".join(map(str, quad))
    assume(quad[0] not in (127,))
    found = _values(clf, f"using Guile {value}{tag}.", "IP_ADDRESS")
    assert value not in found
    # a range of addresses and an address with a word after its dash stay addresses
    other = ".".join(map(str, (*quad[:3], quad[3] - 1)))
    spans = _values(clf, f"allow {other}-{value} and {value}-eth0", "IP_ADDRESS")
    if value in _values(clf, f"allow {value} now", "IP_ADDRESS"):  # a public or private host here
        assert value in spans and other in spans


@given(last=st.integers(2, 254), block=st.sampled_from(["192.168.0", "192.168.1", "10.0.0", "172.16.0"]))
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_default_router_is_no_host_but_its_neighbours_are(clf: Classifier, last: int, block: str) -> None:
    host = f"{block}.{last}"
    text = f"gateway {block}.1, then ssh to {host}"
    assert _values(clf, text, "IP_ADDRESS") == {host}


# -- a greeting in a program's string; a list's tail ----------------------------------------------


@_SETTINGS
@given(
    given_name=st.sampled_from(["Ada", "Maria", "Jonas", "Wei", "Leonie"]),
    greeting=st.sampled_from(["Hello, ", "Hi ", "hello ", "Dear "]),
    quote=st.sampled_from(["'", '"', "`"]),
    person=st.sampled_from(_PEOPLE),
)
def test_a_programs_greeting_of_one_word_is_no_person_but_a_letters_is(
    clf: Classifier, given_name: str, greeting: str, quote: str, person: tuple[str, str]
) -> None:
    code = f"    ExecutionResult(data={{'greeting': {quote}{greeting}{given_name}!{quote}}}, errors=None)\n"
    assert given_name not in _values(clf, code, "PERSON")
    name = f"{person[0]} {person[1]}"
    # a full name in the same string, and a letter's own greeting line, are people
    assert name in _values(clf, f"body = {quote}{greeting}{name}, your order shipped.{quote}\n", "PERSON")
    assert given_name in _values(clf, f"{greeting}{given_name},\nthe invoice is attached.\n", "PERSON")


@_SETTINGS
@given(
    firm=st.sampled_from(["Watts, Black and Field", "Baker, Botts and Lovell", "Sullivan, Cromwell and Hale"]),
    lead=st.sampled_from(["Top and ", "North & ", "Links und "]),
)
def test_a_lists_tail_is_no_firm_but_a_firm_after_prose_is(clf: Classifier, firm: str, lead: str) -> None:
    tail = firm.replace("Watts", "Bottom").replace("Baker", "Bottom").replace("Sullivan", "Bottom")
    assert not _values(clf, f"trim the pixels on {lead}{tail} first.", "ORGANIZATION")
    assert firm in _values(clf, f"the contract with {firm} was signed.", "ORGANIZATION")


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


# -- a tenth group's classes: fetch modes, schema types, optional chaining, masks, licences -------


@_SETTINGS
@given(
    mode=st.sampled_from(["include", "omit", "same-origin", "boolean?", "string[]", "number?"]),
    key=st.sampled_from(["credentials", "password", "apiKey", "secret"]),
    syntax=st.sampled_from(["t.{k}=`{v}`", '"{k}": "{v}",', "{k}: '{v}'", '{k} = "{v}"']),
    secret=st.sampled_from(["Zx9!mQ2#vL7p", "hT4%rW8qLs2!", "Pq7#Vn2!xK9m"]),
)
def test_a_fetch_mode_or_a_schema_type_is_no_credential(
    clf: Classifier, mode: str, key: str, syntax: str, secret: str
) -> None:
    assert not _values(clf, syntax.format(k=key, v=mode) + "\n", "SECRET")
    assert secret in _values(clf, syntax.format(k="password", v=secret) + "\n", "SECRET")


@_SETTINGS
@given(
    obj=st.from_regex(r"[a-z]{3,8}[0-9]?", fullmatch=True),
    attr=st.sampled_from(["authInfo", "token", "password", "apiKey"]),
    key=st.sampled_from(["auth", "token", "password", "apiKey"]),
)
def test_optional_chaining_is_code_under_any_key(clf: Classifier, obj: str, attr: str, key: str) -> None:
    assert not _values(clf, f"const {key} = {obj}?.{attr};\n", "SECRET")


@_SETTINGS
@given(exponent=st.integers(16, 40), other=st.integers(65537, 10**10))
def test_a_power_of_two_beside_a_context_word_is_no_licence(clf: Classifier, exponent: int, other: int) -> None:
    mask = str(2**exponent)
    assume(other & (other - 1) != 0 and len(str(other)) >= 7)
    text = f"(r=El,El={mask},Dl(e,t,n),El=r) DL {other}"
    licences = _values(clf, text, "US_DRIVER_LICENSE")
    assert mask not in licences
    assert power_of_two(mask) and not power_of_two(str(other))


@_SETTINGS
@given(
    subject=st.sampled_from(["you", "You", "the Licensee", "we"]),
    label=st.sampled_from(["Confidential - do not distribute", "DO NOT DISTRIBUTE", "Please do not distribute."]),
)
def test_do_not_distribute_with_a_subject_is_a_condition_not_a_label(clf: Classifier, subject: str, label: str) -> None:
    condition = f"provided that {subject} do not Distribute the Modified Version."
    assert not _values(clf, condition, "CONFIDENTIALITY_MARKER")
    assert _values(clf, f"{label}\n{condition}", "CONFIDENTIALITY_MARKER")


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
    state=st.sampled_from(["MA", "CA", "NY", "TX", "DC", "WA"]),
    zip5=st.integers(1000, 99999),
    plus4=st.integers(1, 9999),
    sep=st.sampled_from([" ", ", ", "\n    ", ",\n"]),
    phone=st.sampled_from(["(415) 555-2671", "+1 617 542 5942", "+44 20 7946 0958"]),
)
def test_a_zip_plus_4_after_a_state_is_no_phone(
    clf: Classifier, state: str, zip5: int, plus4: int, sep: str, phone: str
) -> None:
    code = f"{zip5:05d}-{plus4:04d}"
    text = (
        f"write to the Free Software Foundation, Inc., 51 Franklin Street, Boston, {state}{sep}{code} USA. Tel. {phone}"
    )
    phones = _values(clf, text, "PHONE_NUMBER")
    assert code not in phones
    assert phone in phones


_SCRIPTS = ["Old Hungarian", "Garay", "Malayalam", "Meroitic Cursive", "Rumi Numeral Symbols", "Old Turkic"]


@_SETTINGS
@given(
    given_name=st.sampled_from(["Hanifi", "Mende", "Maria", "Jonas"]),
    term=st.sampled_from(["Rohingya", "Kikakui", "Extended"]),
    at=st.integers(1, 4),
    row=st.sampled_from(['    "{c}",  # {v}', "    0x{n:05X},  # .. 0x{n:05X} ; {v}", "    {n},  // {v}"]),
    people=st.permutations(_PEOPLE),
)
def test_a_comment_column_of_terms_holds_no_person_but_one_of_people_does(
    clf: Classifier, given_name: str, term: str, at: int, row: str, people: list[tuple[str, str]]
) -> None:
    candidate = f"{given_name} {term}"
    terms = [*_SCRIPTS[:at], candidate, *_SCRIPTS[at:]]
    lines = [row.format(c=f"c{i}", n=0x10000 + i * 64, v=v) for i, v in enumerate(terms)]
    assert candidate not in _values(clf, "\n".join(lines) + "\n", "PERSON")
    # the same rows naming people are people; so is a person among firms in a CSV's last column
    names = [f"{g} {s}" for g, s in people[:5]]
    lines = [row.format(c=f"c{i}", n=0x10000 + i * 64, v=v) for i, v in enumerate(names)]
    assert set(names) <= _values(clf, "\n".join(lines) + "\n", "PERSON")
    csv = "id;account\n1;Acme\n2;Globex\n" + f"3;{names[0]}\n" + "4;Initech\n5;Umbrella\n"
    assert names[0] in _values(clf, csv, "PERSON")


@_SETTINGS
@given(
    key=st.sampled_from(["pat", "token", "api_key", "access_key"]),
    line=st.sampled_from(['call i32 asm sideeffect "mov $1, $2", "=r,r"( i32 123 )', 'f(a, b) == {"x": [1, 2]}']),
    selector=st.sampled_from([".special-token:empty::before{", "a.token:hover {", "#api-key:focus{"]),
    secret=st.sampled_from(["ghp_ZxC9mQ2vL7pWq8RtY3uI0oPaS4dF6gH1jK2l", "Zx9mQ2vL7pWq8RtY3uI0oPaS"]),
)
def test_code_and_selectors_under_a_tokens_name_are_no_tokens(
    clf: Classifier, key: str, line: str, selector: str, secret: str
) -> None:
    assert not _values(clf, f"        {key} = '{line}'\n", "SECRET")
    assert not _values(clf, f"{selector}\n    position: relative;\n}}\n", "SECRET")
    assert secret in _values(clf, f"        {key} = '{secret}'\n", "SECRET")


@_SETTINGS
@given(
    salutation=st.sampled_from(["Welcome", "Thanks", "Hello", "Congratulations"]),
    given_name=st.sampled_from(["John", "Maria", "Jonas"]),
    surname=st.sampled_from(["Penfold", "Gonzalez", "Brandt"]),
)
def test_a_salutation_before_a_comma_is_no_surname(
    clf: Classifier, salutation: str, given_name: str, surname: str
) -> None:
    assert f"{salutation}, {given_name}" not in _values(clf, f'page.getByText("{salutation}, {given_name}")', "PERSON")
    assert f"{surname}, {given_name}" in _values(clf, f"signed: {surname}, {given_name}\n", "PERSON")
