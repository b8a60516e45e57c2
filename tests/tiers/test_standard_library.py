"""Values that only look like secrets, mailboxes, people and hosts in the interpreter's standard
library, its test suite and the npm client's tree (the fifteenth group of ``bench/outside.py``),
each beside the real thing, which stays found.

Found there (2026-12-07): code that goes on using an assigned value (``authorization =
base64.decodebytes(authorization)``, ``exports.A = exports.B = void 0``, ``user_pass = '%s:%s' %
(…)``, ``pw = " ...\\n".join(pairs)``), file and name patterns under a "pat" key, a message or a
namedtuple's fields as a token's pair, a header's name under ``…_hdr``; messages' ids in mail
headers and mailboxes at domains no mail reaches (``aperson@dom.ain``, ``bbb@zzz.org``, a
locale's ``ks_IN@devanagari.UTF-8``); "John X. Doe"; a section's number quoted with its title and
object identifiers under a key that names them.
"""

from __future__ import annotations

import random
import string

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tiers import Classifier
from tiers.recognizers._english_words import is_english_word
from tiers.recognizers._tlds import tld_exists
from tiers.recognizers.contact import _FILE_EXTENSIONS

from .conftest import content

_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
_rnd = st.integers(0, 2**32).map(random.Random)


def _values(clf: Classifier, text: str, entity: str) -> set[str]:
    decision = clf.classify(content(text))
    assert not decision.failed_closed, decision.reasons
    return {text[f.start : f.end] for f in decision.findings if f.entity_type == entity}


def _token(rnd: random.Random, n: int = 20) -> str:
    """A machine-made value: letters of both cases and digits, each class present, and a digit
    between two lower-case letters (a draw that splits into capitalised words, "FW6Pbamrm…",
    reads as an identifier under a token's name: a known limit, not this file's subject)."""
    chars = [rnd.choice(string.ascii_uppercase)] + [
        rnd.choice(string.ascii_letters + string.digits) for _ in range(n - 4)
    ]
    rnd.shuffle(chars)
    middle = rnd.choice(string.ascii_lowercase) + rnd.choice(string.digits) + rnd.choice(string.ascii_lowercase)
    return "".join(chars[:5]) + middle + "".join(chars[5:])


_KEYS = ["authorization", "auth_token", "api_key", "password", "client_secret", "access_token"]
_MODULES = ["base64", "crypto2", "utils", "oauth2lib", "keys"]
_FUNCS = ["decodebytes", "b64decode", "load_secret", "fetch_token", "read_key"]


# -- secrets: what code goes on using is no literal -------------------------------------------------


@_SETTINGS
@given(st.sampled_from(_KEYS), st.sampled_from(_MODULES), st.sampled_from(_FUNCS), st.sampled_from(["", "    "]), _rnd)
def test_a_called_value_is_code_but_a_literal_beside_it_is_a_secret(
    clf: Classifier, key: str, module: str, func: str, indent: str, rnd: random.Random
) -> None:
    call = f"{indent}{key} = {module}.{func}({key})\n"
    assert not _values(clf, call, "SECRET")
    literal = _token(rnd)
    assert literal in _values(clf, call + f'{indent}{key} = "{literal}"\n', "SECRET")
    # a literal that is used as it is (encoded, stripped) is still the credential
    assert literal in _values(clf, f'{indent}{key} = "{literal}".encode("ascii")\n', "SECRET")


@_SETTINGS
@given(st.lists(st.sampled_from(["Socks5Auth", "AuthToken", "SecretKey", "Socks4Response2", "ApiKey9"]),
                min_size=2, max_size=5, unique=True))  # fmt: skip
def test_a_chain_of_assignments_assigns_names_not_values(clf: Classifier, names: list[str]) -> None:
    chain = " = ".join(f"exports.{n}" for n in names) + " = void 0;\n"
    assert not _values(clf, chain, "SECRET")


@_SETTINGS
@given(
    st.sampled_from(["user_pass", "auth_token", "api_key", "password"]),
    st.lists(st.sampled_from(["%s", "%d", "%r"]), min_size=2, max_size=4),
    st.sampled_from([":", "-", "/", "."]),
    st.sampled_from(["'", '"']),
)
def test_templates_formatted_or_joined_are_no_secrets(
    clf: Classifier, key: str, verbs: list[str], sep: str, quote: str
) -> None:
    template = sep.join(verbs)
    assert not _values(clf, f"{key} = {quote}{template}{quote} % (user, pw)\n", "SECRET")
    assert not _values(clf, f"{key} = {quote} {sep}\\n{quote}.join(pairs) + last\n", "SECRET")
    assert not _values(clf, f"{key} = {quote}{{}}{sep}{{}}{quote}.format(user, pw)\n", "SECRET")


@_SETTINGS
@given(
    st.sampled_from(["pat", "GROUP_PAT", "token_pattern_pat", "api_token_glob"]),
    st.sampled_from(["test_*.py", "fr.comp.lang.*", "**/*.js", "*.pem", "src/*/keys", "logs/app-*"]),
    _rnd,
)
def test_a_file_or_name_pattern_is_no_secret(clf: Classifier, key: str, pattern: str, rnd: random.Random) -> None:
    assert not _values(clf, f"def get(dir, {key}='{pattern}'):\n", "SECRET")
    assert not _values(clf, f"    {key.upper()} = '{pattern}'\n", "SECRET")
    # a password with a star between its letters is one
    word = rnd.choice(["Dragon", "Winter", "Falcon"]) + "*" + rnd.choice(["Slayer", "Storm"]) + str(rnd.randint(1, 99))
    assert word in _values(clf, f'password: "{word}"\n', "SECRET")


@_SETTINGS
@given(
    st.sampled_from(["token", "TokenInfo", "api_key", "auth"]),
    st.lists(
        st.sampled_from("getting list type string start end line horse battery".split()),
        min_size=2,
        max_size=5,
        unique=True,
    ),
)
def test_words_as_a_tokens_pair_are_a_message_but_a_passwords_are_a_passphrase(
    clf: Classifier, key: str, words: list[str]
) -> None:
    phrase = " ".join(words)
    assert not _values(clf, f"log.info('{key}', '{phrase}')\n", "SECRET")
    assert phrase in _values(clf, f"creds = ('password', '{phrase}')\n", "SECRET")


def test_a_headers_name_under_a_header_key_is_no_secret(clf: Classifier) -> None:
    assert not _values(clf, '            proxy_auth_hdr = "Proxy-Authorization"\n', "SECRET")
    assert not _values(clf, "const UNEXPECTED_TOKEN = /^Unexpected token '?(.)'?(,)? /i\n", "SECRET")


@_SETTINGS
@given(st.lists(st.sampled_from(["Kx9", "orbit", "Violet", "tram42", "q"]), min_size=2, max_size=4, unique=True))
def test_a_quoted_netrc_password_is_stripped_whole(clf: Classifier, words: list[str]) -> None:
    password = " ".join(words)
    line = f'machine api.acme-corp.io login deploy password "{password}" account ops\n'
    found = _values(clf, line, "SECRET")
    assert f'"{password}"' in found, found


# -- mailboxes: messages' ids and domains no mail reaches ------------------------------------------


_ID_HEADERS = ["Message-ID", "Message-Id", "In-Reply-To", "Content-ID", "Original-envelope-id"]


@_SETTINGS
@given(st.sampled_from(_ID_HEADERS), st.sampled_from(["jane.doe", "a4929a40", "15090.61304", "CAF9x"]),
       st.booleans())  # fmt: skip
def test_ids_in_id_headers_are_no_mailboxes_but_the_sender_is(
    clf: Classifier, header: str, local: str, folded: bool
) -> None:
    ident = f"{local}@mail.acme-corp.com"
    sender = "jane.doe@acme-corp.com"
    head = f"{header}: <x1@acme-corp.com>\n\t<{ident}>" if folded else f"{header}: <{ident}>"
    found = _values(clf, f"From: Jane Doe <{sender}>\n{head}\nSubject: hi\n", "EMAIL_ADDRESS")
    assert sender in found and ident not in found, found


@_SETTINGS
@given(_rnd)
def test_machine_made_ids_are_no_mailboxes(clf: Classifier, rnd: random.Random) -> None:
    uuid = "-".join("".join(rnd.choice("0123456789ABCDEF") for _ in range(n)) for n in (8, 4, 4, 4, 12))
    dotted = ".".join(str(rnd.randint(1, 99999)) for _ in range(rnd.randint(3, 5)))
    dollar = f"{rnd.randint(10**7, 10**8):x}$0${rnd.randint(1, 99999)}"
    for local in (uuid, dotted, dollar):
        assert not _values(clf, f"\t<{local}@googlegroups.com>\t1641\t27\n", "EMAIL_ADDRESS")
    assert "luo1257857309@gmail.com" in _values(clf, "reply to luo1257857309@gmail.com\n", "EMAIL_ADDRESS")


_NO_TLD = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=6
).filter(
    # (a file's extension is read as a file's name: "jane.doe@dom.der" is a certificate)
    lambda t: (
        not tld_exists(t)
        # ("comor" is ".com" with a word glued on)
        and not any(tld_exists(t[:k]) and is_english_word(t[k:]) for k in range(3, len(t) - 1))
        and t not in {"local", "lan", "corp", "home"}
        and t not in _FILE_EXTENSIONS
    )
)


@_SETTINGS
@given(_NO_TLD, st.sampled_from(["aperson", "buser", "me", "test", "user123", "ks_IN", "foo-bar"]),
       st.sampled_from(["jane.doe", "maria.gonzalez", "pierre", "wei.zhang"]))  # fmt: skip
def test_a_mailbox_under_no_top_level_domain_counts_only_with_a_name(
    clf: Classifier, tld: str, placeholder: str, person: str
) -> None:
    assert not _values(clf, f"From: {placeholder}@dom.{tld}\n", "EMAIL_ADDRESS")
    assert f"{person}@dom.{tld}" in _values(clf, f"From: {person}@dom.{tld}\n", "EMAIL_ADDRESS")
    # at a real top-level domain the same placeholder is somebody's mailbox
    assert f"{placeholder}@dom.com" in _values(clf, f"From: {placeholder}@dom.com\n", "EMAIL_ADDRESS")


@_SETTINGS
@given(st.sampled_from("abcdpxz"), st.integers(3, 5), st.sampled_from(["org", "com", "dk"]))
def test_one_letter_repeated_is_an_examples_domain(clf: Classifier, letter: str, n: int, tld: str) -> None:
    domain = f"{letter * n}.{tld}"
    assert not _values(clf, f"Return-Path: <{letter * 3}@{domain}>\nTo: ppp-admin@{domain}\n", "EMAIL_ADDRESS")
    assert f"john.smith@{domain}" in _values(clf, f"write to john.smith@{domain}\n", "EMAIL_ADDRESS")


def test_a_sites_own_top_level_domain_still_reaches_somebody(clf: Classifier) -> None:
    assert "jsmith@acme.local" in _values(clf, "to: jsmith@acme.local\n", "EMAIL_ADDRESS")
    assert "rhall@acme.dom" in _values(clf, "From: Brenda Roberts <rhall@acme.dom>\n", "EMAIL_ADDRESS")
    # scraped text glues the next word to a real top-level domain
    assert _values(clf, "Email: info@acme.comPhone: 555 0100\n", "EMAIL_ADDRESS")
    assert "jsmith@mmm.com" in _values(clf, "mail jsmith@mmm.com\n", "EMAIL_ADDRESS")
    assert not _values(clf, "'ks_in@devanagari.utf8': 'ks_IN.UTF-8@devanagari',\n", "EMAIL_ADDRESS")


# -- people and hosts -----------------------------------------------------------------------------


@_SETTINGS
@given(st.sampled_from(["John", "Jane"]), st.sampled_from("QXAIB"), st.just("."))
def test_a_placeholder_name_with_a_middle_initial_is_nobody(
    clf: Classifier, given_name: str, initial: str, dot: str
) -> None:
    assert not _values(clf, f"From: {given_name} {initial}{dot} Doe <jdoe@example.org>\n", "PERSON")
    real = f"{given_name} {initial}{dot} Gonzalez"
    assert real in _values(clf, f"From: {real} <jg@acme-corp.com>\n", "PERSON")


@_SETTINGS
@given(st.integers(1, 9), st.integers(1, 9), st.integers(1, 9), st.integers(10, 99),
       st.sampled_from(["OID_EDDSA", "EXTENSION_OID_SUBJECT_KEY_ID", "SIG_OID_RSA"]))  # fmt: skip
def test_quoted_sections_and_keyed_object_identifiers_are_no_hosts(
    clf: Classifier, a: int, b: int, c: int, d: int, key: str
) -> None:
    number = f"{a}.{b}.{c}.{d}"
    assert not _values(clf, f'# According to the HTML5 specs sections "{number} Bogus comment state"\n', "IP_ADDRESS")
    assert not _values(clf, f"const {key} = '{number}';\n", "IP_ADDRESS")
    host = f"81.2.{a}{b}.{d}"
    assert host in _values(clf, f"const SERVER_HOST = '{host}';\n", "IP_ADDRESS")


@_SETTINGS
@given(st.sampled_from(["Maria", "John", "Leonie", "Pierre", "Samuel"]), st.sampled_from("AIEQ"),
       st.sampled_from(["Gonzalez", "Lopez", "Kowalski", "Lefebvre"]),
       st.sampled_from(["From: {n} <x@acme-corp.com>", "Signed by {n} today.", "{n}\n"]))  # fmt: skip
def test_a_middle_initial_that_is_a_word_alone_stays_in_the_name(
    clf: Classifier, given_name: str, initial: str, surname: str, carrier: str
) -> None:
    """ "A." and "I." are English words without their full stop: the name went on past them only
    for the other letters ("Maria E. Lopez" whole, "Maria A. Lopez" cut to "Maria", "Maria I.
    Lopez" not found)."""
    name = f"{given_name} {initial}. {surname}"
    assert name in _values(clf, carrier.format(n=name), "PERSON")


@_SETTINGS
@given(
    st.sampled_from(
        ["qq.com", "aa.com", "163.com", "пример.рф", "παράδειγμα.δοκιμή", "оун-упа.укр", "acmecorp.com.ost"]
    ),
    st.sampled_from(["li", "王鿏", "δοκιμή", "криївка", "zhangwei"]),
)
def test_real_providers_and_other_scripts_keep_their_mailboxes(clf: Classifier, domain: str, local: str) -> None:
    """Two-letter providers (QQ, an airline's), top-level domains in other scripts (read folded,
    or IANA's test names written as real ones are) and a file's extension after a real domain
    are no unreachable domains: the mailbox stays reported."""
    address = f"{local}@{domain}"
    found = _values(clf, f"mail {address} today\n", "EMAIL_ADDRESS")
    assert any(address in f or f in address for f in found), found


def test_under_a_passwords_name_a_glob_shaped_value_is_still_one(clf: Classifier) -> None:
    assert "/Users/.*22232456" in _values(clf, "DB_PASSWORD=/Users/.*22232456\n", "SECRET")


@_SETTINGS
@given(st.sampled_from(["ssh", "git+ssh", "https"]), st.sampled_from(["git", "deploy", "anonymous"]),
       st.sampled_from(["jane.doe", "maria.gonzalez"]))  # fmt: skip
def test_a_services_login_in_a_url_is_no_mailbox_but_a_persons_is(
    clf: Classifier, scheme: str, service: str, person: str
) -> None:
    assert not _values(clf, f'"url": "{scheme}://{service}@github.com/acme/app.git"\n', "EMAIL_ADDRESS")
    assert f"{person}@gitlab.acme-corp.com" in _values(
        clf, f"clone {scheme}://{person}@gitlab.acme-corp.com/acme/app.git\n", "EMAIL_ADDRESS"
    )


@_SETTINGS
@given(st.integers(0, 2**32 - 1), st.integers(0, 2**128 - 1))
def test_multicast_and_reserved_addresses_are_no_hosts_but_public_ones_are(clf: Classifier, v4: int, v6: int) -> None:
    import ipaddress

    group4 = ipaddress.IPv4Address(0xE0000000 | (v4 & 0x0FFFFFFF))  # 224.0.0.0/4
    reserved4 = ipaddress.IPv4Address(0xF0000000 | (v4 & 0x0FFFFFFE))  # 240.0.0.0/4, no broadcast
    group6 = ipaddress.IPv6Address((0xFF << 120) | (v6 & ((1 << 120) - 1)))  # ff00::/8
    unallocated6 = ipaddress.IPv6Address((0x05 << 120) | (v6 & ((1 << 118) - 1)) | 1)  # 0400::/6
    for address in (group4, reserved4, group6, unallocated6):
        assert not _values(clf, f"bind {address} now\n", "IP_ADDRESS"), address
    host = ipaddress.IPv4Address(0x51000000 | (v4 & 0x00FFFFFF))  # 81.0.0.0/8, public unicast
    if not (host.packed[2:] == b"\0\0" or host.packed[3] == 0):
        assert str(host) in _values(clf, f"bind {host} now\n", "IP_ADDRESS")
    # an IPv4-mapped address is the IPv4 host's
    assert _values(clf, "host ::ffff:192.168.1.1 now\n", "IP_ADDRESS")


@_SETTINGS
@given(st.integers(0, 23), st.integers(0, 59), st.integers(0, 59), st.integers(0, 999999), st.integers(-12, 14),
       st.integers(1, 28), st.integers(1, 12), st.integers(1950, 2030))  # fmt: skip
def test_numbers_glued_to_a_time_are_no_phones(
    clf: Classifier, h: int, m: int, s: int, us: int, tz: int, day: int, month: int, year: int
) -> None:
    stamp = f"'{year}-{month:02d}-{day:02d}T{h:02d}:{m:02d}:{s:02d}.{us:06d}{tz:+03d}:00',"
    assert not _values(clf, stamp + "\n", "PHONE_NUMBER")
    assert not _values(clf, f"'{day:02d}-{month:02d}-{year} {h:02d}:{m:02d}:{s:02d}',\n", "PHONE_NUMBER")
    assert "(415) 555-2671" in _values(clf, f"call (415) 555-2671 at {h:02d}:{m:02d}\n", "PHONE_NUMBER")


# -- names written with escapes --------------------------------------------------------------------

_ACCENTED = [("José", "García"), ("Zoë", "Müller"), ("François", "Lefèvre"), ("Łukasz", "Wójcik"),
             ("Søren", "Kierkegård"), ("Ana", "Ibáñez")]  # fmt: skip


@_SETTINGS
@given(st.sampled_from(_ACCENTED), st.sampled_from(["json", "ascii", "utf8-bytes"]),
       st.sampled_from(["customer", "author", "contact"]))  # fmt: skip
def test_a_name_written_with_escapes_is_found_and_stripped_whole(
    clf: Classifier, name: tuple[str, str], form: str, key: str
) -> None:
    """JSON written with ``ensure_ascii`` and Python's ``ascii()`` spell every accented letter as
    an escape ("Jos\\u00e9 Garc\\u00eda"); the name was not read at all."""
    import json

    person = " ".join(name)
    if form == "json":
        written = json.dumps(person)[1:-1]
    elif form == "ascii":
        written = ascii(person)[1:-1]
    else:
        written = "".join(f"\\x{b:02x}" if b >= 0x80 else chr(b) for b in person.encode("utf-8"))
    text = f'{{"{key}": "{written}", "status": "open"}}\n'
    assert written in _values(clf, text, "PERSON"), (text, _values(clf, text, "PERSON"))
    c = content(text)
    stripped = clf.strip(c, clf.classify(c)).content.segments[0].text
    assert written not in stripped and '"status": "open"' in stripped


def test_escapes_in_code_stay_as_written(clf: Classifier) -> None:
    from tiers.normalize import normalize_text

    for code in ['sep = "\\x00\\u2028"', 'path = "C:\\\\Users\\\\u00e9"', 'emoji = "\\ud83d\\ude00"', r'"\\xe9"']:
        assert normalize_text(code) == code, code


@_SETTINGS
@given(st.integers(10**6, 10**9), st.integers(0, 999), st.sampled_from(["+", "-"]))
def test_a_signed_decimal_is_no_phone_but_epps_format_is(clf: Classifier, whole: int, frac: int, sign: str) -> None:
    assert not _values(clf, f"Decimal('{sign}{whole}.{frac}')\n", "PHONE_NUMBER")
    assert "+1.4155552671" in _values(clf, "Phone: +1.4155552671\n", "PHONE_NUMBER")


@_SETTINGS
@given(_rnd, st.sampled_from(["token", "auth_hdr", "SECRET_INFO", "api_key"]))
def test_a_token_stays_one_in_the_shapes_code_is_told_apart_by(clf: Classifier, rnd: random.Random, key: str) -> None:
    """The review's counterexamples: a token under a key ending in "hdr" or "info", inside a
    template whose fields are filled, with a star at its end, after a slash; and a password
    written like a regex literal."""
    tok = _token(rnd, 24)
    assert tok in _values(clf, f"{key} = '{tok}'\n", "SECRET")
    assert f"%s:%s:{tok}" in _values(clf, f"{key} = '%s:%s:{tok}' % (u, p)\n", "SECRET")
    assert f"{tok}*" in _values(clf, f"{key}: {tok}*\n", "SECRET")
    assert f"/^{tok}/i" in _values(clf, f"passwd=/^{tok}/i\n", "SECRET")


@_SETTINGS
@given(st.sampled_from(["Fax: ", "Tel. ", "phone: "]), st.sampled_from(["050-7367512", "0411394174", "(415) 555-2671"]))
def test_a_number_after_a_phone_word_is_one_whatever_follows(clf: Classifier, word: str, number: str) -> None:
    assert number in _values(clf, f"{word}{number}:00\n", "PHONE_NUMBER")
    assert "+48 506 891 428" in _values(clf, "contacts.csv:42:+48 506 891 428\n", "PHONE_NUMBER")


def test_a_cvs_references_and_a_user_id_keep_their_mailboxes(clf: Classifier) -> None:
    assert "jane.doe@mit.edu" in _values(clf, "References: Jane Doe <jane.doe@mit.edu>\n", "EMAIL_ADDRESS")
    assert "jane.doe@mit.edu" in _values(clf, "user id <jane.doe@mit.edu>\n", "EMAIL_ADDRESS")


@_SETTINGS
@given(st.sampled_from(["THAI CHARACTER", "HANGUL SYLLABLE", "CJK IDEOGRAPH", "Thai Character"]),
       st.sampled_from([("CHO", "CHAN"), ("KO", "KAI"), ("KIM", "LEE")]),
       st.sampled_from([("Maria", "Lopez"), ("Jonas", "Brandt")]))  # fmt: skip
def test_a_characters_unicode_name_is_no_person_but_a_name_beside_it_is(
    clf: Classifier, prefix: str, glyph: tuple[str, str], person: tuple[str, str]
) -> None:
    words = " ".join(w.capitalize() if prefix[1:].islower() else w for w in glyph)
    assert not _values(clf, f"    '\\u0e08'   #  0xA8 -> {prefix} {words}\n", "PERSON")
    name = " ".join(person)
    assert name in _values(clf, f"    # {prefix} {words}, added by {name}\n", "PERSON")
    assert name.upper() in _values(clf, f"COVER LETTER {name.upper()}\n", "PERSON")


_WORDISH_FIRST = (
    "Section Plan Appendix Grade Vitamin Type Model Mark Will Grace Amber Rose June Max Ray Victor Maria".split()
)
_WORDISH_LAST = "Overview Results Options Levels Review Complete Ready Alert Garden Report Smith Table Lopez".split()


@_SETTINGS
@given(st.sampled_from(_WORDISH_FIRST), st.sampled_from("ABCDIQX"), st.sampled_from(_WORDISH_LAST),
       st.sampled_from(["{n}\n", "See {n} for details.", "## {n}\n", "Contact: {n}\n"]))  # fmt: skip
def test_an_undotted_middle_initial_reads_a_name_only_where_the_two_words_are_one(
    clf: Classifier, first: str, initial: str, last: str, carrier: str
) -> None:
    """Exports drop the initial's full stop ("Maria E Lopez"): the pair is then read as it is
    without the initial, never more ("Section B Overview", "Plan B Options" stay)."""
    with_initial = f"{first} {initial} {last}"
    found = with_initial in _values(clf, carrier.format(n=with_initial), "PERSON")
    plain = f"{first} {last}"
    assert found <= (plain in _values(clf, carrier.format(n=plain), "PERSON")), with_initial
    if first == "Maria" and last == "Lopez":
        assert found
