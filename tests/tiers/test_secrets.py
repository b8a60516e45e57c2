"""Secrets, table-driven: every provider format (a positive and two known negatives), a
carriers x formats matrix, every credential syntax with the whole value stripped, placeholders
and code that are not secrets, and property tests over generated assignments and placeholders."""

from __future__ import annotations

import base64
import functools
import itertools
import json
import re
import string
import unicodedata
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tiers import Classifier
from tiers.classifier import _LINES_AFTER, _LINES_BEFORE, _escape_windows
from tiers.recognizers.secrets import provider_formats
from tiers.recognizers.secrets._values import entropy, is_placeholder, mixed_classes

from .conftest import content
from .secret_corpus import CARRIERS, CLEAN_CODE, PLACEHOLDERS, SYNTAXES

FORMATS = provider_formats()
IDS = [f"{f.provider}-{i}" for i, f in enumerate(FORMATS)]


def secret_spans(clf: Classifier, text: str) -> list[tuple[int, int]]:
    d = clf.classify(content(text))
    assert not d.failed_closed, d.reasons
    return sorted((f.start, f.end) for f in d.findings if f.entity_type == "SECRET")


def covered(spans: list[tuple[int, int]], s: int, e: int) -> bool:
    """Whether the union of ``spans`` covers ``[s, e)``."""
    pos = s
    for a, b in spans:
        if a <= pos < b:
            pos = b
    return pos >= e


def stripped_text(clf: Classifier, text: str) -> str:
    c = content(text)
    return clf.strip(c, clf.classify(c)).content.segments[0].text


def test_at_least_150_providers() -> None:
    """The table documents the formats of at least 150 providers."""
    assert len({f.provider for f in FORMATS}) >= 150


@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
def test_provider_token_found_whole(clf: Classifier, fmt) -> None:  # type: ignore[no-untyped-def]  # fmt is a parametrised row of the token table
    """A token of the documented shape is one finding covering all of it."""
    token = fmt.shape.sample(seed=7)
    text = f"key: {token}"
    assert covered(secret_spans(clf, text), 5, 5 + len(token)), (fmt.fmt, token)


@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
def test_provider_masked_token_is_no_secret(clf: Classifier, fmt) -> None:  # type: ignore[no-untyped-def]  # fmt is a parametrised row of the token table
    """The same shape filled with a mask (documentation's ``xxxx``) is not a secret."""
    sample = fmt.shape.sample(seed=7)
    masked = "".join("x" if c.isalnum() and i >= len(sample) // 3 else c for i, c in enumerate(sample))
    assert secret_spans(clf, f"key: {masked}") == [], (fmt.fmt, masked)


@pytest.mark.parametrize("fmt", FORMATS, ids=IDS)
def test_provider_token_one_short_is_not_that_token(clf: Classifier, fmt) -> None:  # type: ignore[no-untyped-def]  # fmt is a parametrised row of the token table
    """One character short of the documented length, the token is not reported whole by its
    own format (a wider format may still take it: then not as this exact value)."""
    import re2

    short = fmt.shape.sample(seed=7, short=True)
    rx = re2.compile(fmt.regex)
    m = rx.search(f" {short} ")
    assert m is None or m.group("value") != short, (fmt.fmt, short)


@pytest.mark.parametrize(("carrier", "template"), CARRIERS, ids=[c for c, _ in CARRIERS])
def test_carriers_by_formats(clf: Classifier, carrier: str, template: str) -> None:
    """Every format's token is found whole in every carrier."""
    missed = []
    for i, fmt in enumerate(FORMATS):
        token = fmt.shape.sample(seed=i)
        text = template.format(t=token)
        s = text.index(token)
        if not covered(secret_spans(clf, text), s, s + len(token)):
            missed.append(f"{fmt.provider}: {token}")
    assert missed == []


VALUES = ["Zx9!mQ2#vL7p", "correct horse battery staple", "hunter2hunter2", "q8Zr3LmN0pXv7Ty2"]


def _expressible(values: list[str]) -> list[tuple[str, str, str]]:
    """(syntax, template, value) for every value a syntax can hold (a shell word cannot hold a space)."""
    return [(syntax, template, v) for syntax, template, forbidden in SYNTAXES for v in values
            if not any(c in forbidden for c in v)]  # fmt: skip


@pytest.mark.parametrize(("syntax", "template", "value"), _expressible(VALUES),
                         ids=[f"{s}-{VALUES.index(v)}" for s, _, v in _expressible(VALUES)])  # fmt: skip
def test_credential_syntax_stripped_whole(clf: Classifier, syntax: str, template: str, value: str) -> None:
    """The whole value of a credential assignment is the finding; nothing of it is sent."""
    text = template.format(v=value)
    s = text.index(value)
    assert covered(secret_spans(clf, text), s, s + len(value)), syntax
    out = stripped_text(clf, text)
    assert value not in out and all(w not in out for w in value.split() if len(w) >= 4), out


@pytest.mark.parametrize(("syntax", "template", "placeholder"), _expressible(PLACEHOLDERS),
                         ids=[f"{s}-{PLACEHOLDERS.index(v)}" for s, _, v in _expressible(PLACEHOLDERS)])  # fmt: skip
def test_placeholder_is_no_secret(clf: Classifier, syntax: str, template: str, placeholder: str) -> None:
    """Templates, masks, references and examples in any syntax are not secrets."""
    text = template.format(v=placeholder)
    s = text.index(placeholder)
    spans = secret_spans(clf, text)
    assert not any(a < s + len(placeholder) and b > s for a, b in spans), (syntax, placeholder)


@pytest.mark.parametrize("line", CLEAN_CODE)
def test_code_about_credentials_is_clean(clf: Classifier, line: str) -> None:
    """Code and config that name credentials without holding one yield no secret."""
    assert secret_spans(clf, line) == []


CASES = [
    # the examples of issue 12
    ('DB_PASSWORD="correct horse battery staple"', "correct horse battery staple"),
    ("POSTGRES_PASSWORD=Zx9!mQ2#vL7p", "Zx9!mQ2#vL7p"),
    ("  password: cGFzc3dvcmQxMjM=", "cGFzc3dvcmQxMjM="),
    ("data:\n  DB_URL: cG9zdGdyZXM6Ly9hcHA6eEBkYi9hcHA=\n", "cG9zdGdyZXM6Ly9hcHA6eEBkYi9hcHA="),
    ("Authorization: Basic YWRtaW46UGE1NXcwcmQh", "YWRtaW46UGE1NXcwcmQh"),
    ("redis://:Hq7zPw2kQ@cache:6379/0", "redis://:Hq7zPw2kQ@cache:6379/0"),
    ("sshpass -p 'Hq7z Pw2k' ssh host", "'Hq7z Pw2k'"),
    ("docker login -u bot -p Hq7zPw2kQ registry.internal.test", "Hq7zPw2kQ"),
    ('<entry key="password">Hq7zPw2kQ</entry>', "Hq7zPw2kQ"),
    ("machine h\n  login bob\n  password Hq7zPw2kQ\n", "Hq7zPw2kQ"),
    (
        'x = {"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBg\\n-----END PRIVATE KEY-----\\n"}',
        "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBg\\n-----END PRIVATE KEY-----",
    ),
    (
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: k\nPublic-Lines: 1\nAAAAC3NzaC1lZDI1NTE5\n"
        "Private-Lines: 1\nAAAAIBx9c2Vjcg==\nPrivate-MAC: 8f3a9b2c",
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: k\nPublic-Lines: 1\nAAAAC3NzaC1lZDI1NTE5\n"
        "Private-Lines: 1\nAAAAIBx9c2Vjcg==\nPrivate-MAC: 8f3a9b2c",
    ),
    (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
    ),
]


@pytest.mark.parametrize(("text", "value"), CASES, ids=range(len(CASES)))
def test_named_cases(clf: Classifier, text: str, value: str) -> None:
    """Forms named in issue 12 are found whole."""
    s = text.index(value)
    assert covered(secret_spans(clf, text), s, s + len(value)), secret_spans(clf, text)


# -- properties ---------------------------------------------------------------------------------

_ALPHABET = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789!%^*_+.~=-@#&;:/"
# escapes of quotes, of "%" itself, of a letter, of delimiters and of a space: each decodes to
# something that would end, shorten or flatten the value if the value were judged decoded
_ESCAPES = ["%22", "%27", "%42", "%25", "%2542", "%3D", "%26", "%3B", "%23", "%40", "%2F", "%3A", "%20", "%7B", "%3C"]


@st.composite
def credentials(draw: st.DrawFn) -> tuple[str, str, str]:
    syntax, template, forbidden = draw(st.sampled_from(SYNTAXES))
    chars = [c for c in _ALPHABET if c not in forbidden]
    escapes = [e for e in _ESCAPES if "%" not in forbidden] or chars  # Oracle's identifier holds no "%"
    value = draw(st.lists(st.sampled_from(chars) | st.sampled_from(escapes), min_size=8, max_size=40).map("".join))
    value = draw(st.sampled_from("abcdefghk")) + value + draw(st.sampled_from("23456789"))
    # values starting or ending with punctuation read as code or comments in some syntaxes
    # (and with some variety, 2.5 bits a character: a token is not ``a222223452``, which is
    # where shrinking ends). Variety is that of the value as written: ``aAAAABC%42`` is a
    # credential in a dotenv file though it decodes to ``aAAAABCB``. A placeholder is one in
    # either spelling (``%24%7BVAR%7D`` is ``${VAR}``), as the recognizers judge it.
    assume(value[-1].isalnum() and not is_placeholder(value) and entropy(value) >= 2.5)
    return syntax, template, value


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(credentials())
def test_any_generated_assignment_is_stripped_whole(clf: Classifier, case: tuple[str, str, str]) -> None:
    """In any syntax, a generated credential value is found, and no four characters of it in a
    row survive stripping (beyond those the surrounding text has anyway)."""
    syntax, template, value = case
    text = template.format(v=value)
    s = text.index(value)
    assert covered(secret_spans(clf, text), s, s + len(value)), (syntax, value)
    out = stripped_text(clf, text)
    carrier = text[:s] + "\x00" + text[s + len(value) :]
    leaks = {value[i : i + 4] for i in range(len(value) - 3)} - {carrier[i : i + 4] for i in range(len(carrier))}
    assert not [g for g in leaks if g in out], (syntax, value, out)


_VALUE_CHARS = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"


@st.composite
def escaped_values(draw: st.DrawFn) -> str:
    """A random credential of 12 or more characters with one or more percent-escapes in it
    (never at its ends)."""
    runs = draw(st.lists(st.text(st.sampled_from(_VALUE_CHARS), min_size=2, max_size=8), min_size=2, max_size=5))
    escapes = draw(st.lists(st.sampled_from(_ESCAPES), min_size=len(runs) - 1, max_size=len(runs) - 1))
    value = runs[0] + "".join(e + r for e, r in zip(escapes, runs[1:])) + draw(st.sampled_from("23456789"))
    assume(len(value) >= 12 and not is_placeholder(value) and entropy(value) >= 2.5)
    return value


# the syntaxes that can hold a percent-escape (Oracle's unquoted identifier cannot)
_ESCAPABLE = [x for x in SYNTAXES if "%" not in x[2]]


@pytest.mark.parametrize(("syntax", "template", "forbidden"), _ESCAPABLE, ids=[s for s, _, _ in _ESCAPABLE])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=escaped_values())
def test_percent_escaped_value_is_stripped_whole(
    clf: Classifier, syntax: str, template: str, forbidden: str, value: str
) -> None:
    """In every syntax, a value holding percent-escapes (quotes, ``%``, letters, delimiters
    escaped) is one value to its real end, escapes included, and none of it survives stripping:
    an escaped quote does not close it, an escaped letter does not make it plain."""
    text = template.format(v=value)
    s = text.index(value)
    assert covered(secret_spans(clf, text), s, s + len(value)), (syntax, value, secret_spans(clf, text))
    out = stripped_text(clf, text)
    # a run that is also in the carrier ("test" of "api.internal.test") or in a placeholder's
    # label ("SECRET" of "<SECRET_1>") says nothing about a leak
    rest = re.sub(r"<[A-Z_]+_[0-9]+>", "\x00", out)
    runs = re.split(r"%[0-9A-F]{2}", value)
    assert value not in out and all(len(run) < 4 or run in template or run not in rest for run in runs), out


ESCAPED_CASES = [
    ("DB_PASSWORD=aAAAABC%42\n", "aAAAABC%42"),
    ("export API_TOKEN=aAAAABC%42\n", "aAAAABC%42"),
    ('DB_PASSWORD="Hq7z%22Pw2kQ"\n', "Hq7z%22Pw2kQ"),
    ('{"user": "app", "password": "Hq7z%22Pw%27kQ"}', "Hq7z%22Pw%27kQ"),
    ("const apiKey = 'Zq8%27vLm2Xr7p';\n", "Zq8%27vLm2Xr7p"),
    ("jdbc:postgresql://db:5432/app?user=app&password=Hq7z%26Pw%3B2kQ\n", "Hq7z%26Pw%3B2kQ"),
    ("Server=db;User Id=app;Password=Hq7z%3BPw%25kQ;\n", "Hq7z%3BPw%25kQ"),
    # long segments, scanned alone, the literal reading only around their escapes
    ("notes " * 100 + '\nDB_PASSWORD="Hq7z%22Pw2kQ"\n', "Hq7z%22Pw2kQ"),
    (
        "see https://x.test/a%20b\n" + "notes\n" * 100 + "machine h\n  login bob\n  password Hq7z%22Pw2kQ\n",
        "Hq7z%22Pw2kQ",
    ),
]


@pytest.mark.parametrize(("text", "value"), ESCAPED_CASES, ids=range(len(ESCAPED_CASES)))
def test_percent_escaped_named_cases(clf: Classifier, text: str, value: str) -> None:
    """The failures named on issue 12: ``%42`` flattening a value, ``%22`` closing it early. The
    value is one finding, though both readings of the text (decoded, literal) find some of it."""
    s = text.index(value)
    assert secret_spans(clf, text) == [(s, s + len(value))]
    assert value not in stripped_text(clf, text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["a", "bc", "\n", "%41", "%2", "%zz", " x\n"]), max_size=60).map("".join))
def test_literal_windows_hold_every_escape_in_whole_lines(text: str) -> None:
    """The lines a long segment is read literally in hold every escape with the lines the
    recognizers judge it by, start and end at line breaks, and neither overlap nor touch."""
    windows = _escape_windows(text)
    for m in re.finditer(r"%[0-9A-Fa-f]{2}", text):
        line = text.count("\n", 0, m.start())
        lines = text.split("\n")
        want_lo = sum(len(x) + 1 for x in lines[: max(0, line - _LINES_BEFORE)])
        want_hi = min(len(text), sum(len(x) + 1 for x in lines[: line + _LINES_AFTER + 1]))
        assert any(a <= want_lo and want_hi <= b for a, b in windows), (text, windows, m.start())
    assert all(a == 0 or text[a - 1] == "\n" for a, b in windows)
    assert all(b == len(text) or text[b - 1] == "\n" for a, b in windows)
    assert all(windows[k][1] < windows[k + 1][0] for k in range(len(windows) - 1))


_NAMES = st.from_regex(r"[A-Z][A-Z_]{2,12}", fullmatch=True)
placeholders = st.one_of(
    st.builds(lambda n: "${" + n + "}", _NAMES),
    st.builds(lambda n: "{{ " + n.lower() + " }}", _NAMES),
    st.builds(lambda n: "<your-" + n.lower().replace("_", "-") + ">", _NAMES),
    st.builds(lambda n: "%" + n + "%", _NAMES),
    st.builds(lambda n: "$" + n, _NAMES),
    st.builds(lambda k: "x" * k, st.integers(4, 40)),
    st.builds(lambda k: "X" * k, st.integers(4, 40)),
    st.builds(lambda k: "*" * k, st.integers(4, 40)),
    st.sampled_from(
        [
            "changeme",
            "example",
            "dummy",
            "placeholder",
            "redacted",
            "your-token-here",
            "insert_api_key_here",
            "test",
            "none",
            "null",
        ]
    ),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(SYNTAXES), placeholders)
def test_generated_placeholders_are_no_secrets(clf: Classifier, syntax: tuple[str, str, str], placeholder: str) -> None:
    """A generated template, mask or example word in any syntax is not a finding."""
    name, template, forbidden = syntax
    assume(not any(c in forbidden for c in placeholder))
    text = template.format(v=placeholder)
    s = text.index(placeholder)
    spans = secret_spans(clf, text)
    assert not any(a < s + len(placeholder) and b > s for a, b in spans), (name, placeholder, spans)


ESCAPED_PLACEHOLDERS = ["%24%7BVAR%7D", "%24%7BDB_PASSWORD%7D", "%3Cyour-key%3E", "%2A%2A%2A%2A%2A%2A", "your%20api%20key%20here",
                        "%7B%7B%20vault_password%20%7D%7D", "%25DB_PASSWORD%25", "changeme"]  # fmt: skip


@pytest.mark.parametrize(("syntax", "template", "placeholder"), _expressible(ESCAPED_PLACEHOLDERS),
                         ids=[f"{s}-{ESCAPED_PLACEHOLDERS.index(v)}" for s, _, v in _expressible(ESCAPED_PLACEHOLDERS)])  # fmt: skip
def test_percent_escaped_placeholder_is_no_secret(
    clf: Classifier, syntax: str, template: str, placeholder: str
) -> None:
    """A placeholder spelled with percent-escapes (``%24%7BVAR%7D`` is ``${VAR}``) is still one."""
    text = template.format(v=placeholder)
    s = text.index(placeholder)
    spans = secret_spans(clf, text)
    assert not any(a < s + len(placeholder) and b > s for a, b in spans), (syntax, placeholder, spans)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(SYNTAXES), placeholders.map(lambda p: quote(p, safe="")))
def test_generated_escaped_placeholders_are_no_secrets(
    clf: Classifier, syntax: tuple[str, str, str], placeholder: str
) -> None:
    """A generated placeholder with every character but letters, digits and ``_.-~`` escaped is
    not a finding either: what it decodes to is what it means."""
    name, template, _ = syntax
    text = template.format(v=placeholder)
    s = text.index(placeholder)
    spans = secret_spans(clf, text)
    assert not any(a < s + len(placeholder) and b > s for a, b in spans), (name, placeholder, spans)


# Formats and alphabets taken in after an outside rule set (bench/secret_outside.py) found them
# missing: every format, any seed (the sampler draws each class's whole alphabet, mixed-case hex
# included), any carrier.
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(FORMATS), st.integers(0, 2**32), st.sampled_from(CARRIERS))
def test_any_drawn_provider_token_is_found_whole(clf: Classifier, fmt, seed: int, carrier: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]  # fmt is a row of the token table
    token = fmt.shape.sample(seed=seed)
    # as ``providers._masked`` reads a token: no runs or masks, and two character classes at least
    # unless long and random (a short word of capitals is an identifier: ``SCWVMMHMOHSS…``)
    assume(not re.search(r"(.)\1{3}|xxxx|0{10}", token, re.IGNORECASE) and len(set(token[-16:])) >= 4)
    assume(mixed_classes(token) >= 2 or (len(token) >= 30 and entropy(token) >= 4.0))
    text = carrier[1].format(t=token)
    s = text.index(token)
    assert covered(secret_spans(clf, text), s, s + len(token)), (fmt.provider, fmt.fmt, carrier[0], token)


_PATH_ROOTS = ["Users", "home", "root", "etc", "opt", "tmp", "usr", "var", "bin", "srv", "run", "mnt"]
_path_part = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-", min_size=1, max_size=14
)
_paths = st.builds(
    lambda root, parts: "/" + "/".join([root, *parts]),
    st.sampled_from(_PATH_ROOTS),
    st.lists(_path_part, min_size=1, max_size=5),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(SYNTAXES), _paths)
def test_generated_path_values_are_no_secrets(clf: Classifier, syntax: tuple[str, str, str], path: str) -> None:
    """``password: /run/secrets/db``: an absolute path under a Unix top-level directory names the
    file that holds the credential; it is not one."""
    name, template, forbidden = syntax
    assume(not any(c in forbidden for c in path))
    text = template.format(v=path)
    s = text.index(path)
    spans = secret_spans(clf, text)
    assert not any(a < s + len(path) and b > s for a, b in spans), (name, path, spans)


# words that make a drawn value read as a placeholder or a mask (``012xxXx0AQ7``, ``SECRETKEY``)
_PLACEHOLDER_WORDS = r"(?i:secret|key|pass|token|xx|example|sample|dummy|test|change|your)"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    _paths,
    st.sampled_from("!#^*+=,@"),
    st.text(alphabet="abcdefghkmnpqrstuvwxyzABCDEFGHJKMNPQRSTUVWXYZ23456789", min_size=8, max_size=16),
)
def test_password_that_only_starts_like_a_path_is_still_found(clf: Classifier, path: str, mark: str, tail: str) -> None:
    """The path rule takes path characters only: a value with another character in it is judged
    as a value (``/etc/x#Q7mZ…`` under a password key is a password)."""
    value = f"{path}{mark}{tail}"
    # a run is a mask, and credential words in the value make it a placeholder ("SECRETKEY")
    assume(len(set(tail)) >= 5 and not re.search(r"(.)\1{3}|[xX*.#?_-]{3}|" + _PLACEHOLDER_WORDS, value))
    # template words, whatever the list above holds ("USERNAME"), and an alphabet written out in
    # the path ("/Users/0123456789!…"): placeholders by design
    assume(not is_placeholder(tail) and not is_placeholder(value))
    text = f"DB_PASSWORD={value}\n"
    s = text.index(value)
    assert covered(secret_spans(clf, text), s, s + len(value)), value


_name_word = st.from_regex(r"[a-wyz]{3,10}", fullmatch=True)  # no x: "_xxx" is a mask
_names = st.builds(
    lambda words, joint, count: joint.join(words) + count,
    st.lists(_name_word, min_size=2, max_size=3),
    st.sampled_from(["_", "-", "."]),
    st.sampled_from(["", "", "2", "38", "-1", "_07"]),
)
_MEDIUM_KEYS = [
    "API_KEY={v}\n",
    "auth_token: {v}\n",
    '{{"access_key": "{v}"}}',
    'apiKey = "{v}";\n',
    "<apiKey>{v}</apiKey>",
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(_MEDIUM_KEYS), _names)
def test_generated_names_after_token_keys_are_no_secrets(clf: Classifier, template: str, name: str) -> None:
    """``API_KEY=channel-markdown59``: words joined as a name, with a count of one or two digits,
    name a thing (Betterleaks drops such values of its generic-api-key rule too)."""
    text = template.format(v=name)
    s = text.index(name)
    spans = secret_spans(clf, text)
    assert not any(a < s + len(name) and b > s for a, b in spans), (template, name, spans)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(_MEDIUM_KEYS), _names, st.from_regex(r"[A-Za-z0-9]{3}[0-9]{3}[A-Za-z0-9]{4}", fullmatch=True))
def test_a_name_with_a_random_tail_after_a_token_key_is_still_found(
    clf: Classifier, template: str, name: str, tail: str
) -> None:
    """Only a short count makes a name: three digits or more, or mixed letters after, are a value."""
    value = f"{name}{tail}"
    assume(len(set(tail)) >= 6 and any(c.isupper() for c in tail) and entropy(value) >= 3.0)
    text = template.format(v=value)
    s = text.index(value)
    assert covered(secret_spans(clf, text), s, s + len(value)), value


def _run(alphabet: str, start: int, length: int) -> str:
    return alphabet[start : start + length]


_runs = st.lists(
    st.sampled_from(["0123456789", "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"]).flatmap(
        lambda a: st.builds(_run, st.just(a), st.integers(0, len(a) - 3), st.integers(3, len(a)))
    ),
    min_size=1,
    max_size=2,
).map("".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(SYNTAXES), _runs)
def test_generated_alphabet_runs_are_no_secrets(clf: Classifier, syntax: tuple[str, str, str], value: str) -> None:
    """``abcdefghijklmnop``, ``1234567890abcdef``: one or two runs along an alphabet are the
    alphabet written out (detect-secrets' sequential strings), never a credential."""
    assume(len(value) >= 8)
    name, template, forbidden = syntax
    assume(not any(c in forbidden for c in value))
    text = template.format(v=value)
    s = text.index(value)
    spans = secret_spans(clf, text)
    assert not any(a < s + len(value) and b > s for a, b in spans), (name, value, spans)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_runs, st.from_regex(r"[a-z0-9]{2}[A-Z][a-z0-9]{2}[A-Z]", fullmatch=True))
def test_runs_broken_by_random_characters_are_still_passwords(clf: Classifier, run: str, noise: str) -> None:
    """Three or more breaks are no written-out alphabet: ``abcdef`` with ``q8Zr3X`` inside is a value."""
    value = run[:3] + noise + run[3:7] + "Q7"  # short runs: a long one is an alphabet (``_samples``)
    assume(len(set(value)) >= 6 and not re.search(r"(.)\1{3}|[xX*.#?_-]{3}|" + _PLACEHOLDER_WORDS, value))
    text = f"DB_PASSWORD={value}\n"
    s = text.index(value)
    assert covered(secret_spans(clf, text), s, s + len(value)), value


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=34, max_size=34), st.sampled_from(CARRIERS))
def test_one_class_token_that_is_long_and_random_is_found(clf: Classifier, body: str, carrier: tuple[str, str]) -> None:
    """``hf_`` and 34 lower-case letters drawn at random is a token (no word is that long and
    that random); one lower-case word after a prefix stays an identifier."""
    token = "hf_" + body
    assume(entropy(token) >= 4.0 and len(set(body[-16:])) >= 4 and not re.search(r"(.)\1{3}|xxxx", body))
    text = carrier[1].format(t=token)
    s = text.index(token)
    assert covered(secret_spans(clf, text), s, s + len(token)), token


@pytest.mark.parametrize("word", ["hf_abcdefghijklmnopqrstuvwxyzabcdefgh", "hf_thisisaverylongidentifiernameokay"])
def test_one_class_word_after_a_prefix_is_no_token(clf: Classifier, word: str) -> None:
    assert not secret_spans(clf, f"name = {word}\n"), word


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.sampled_from(["ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz", "0123456789"]).flatmap(
        lambda a: st.builds(lambda i, n, k: a[i : i + n] * k, st.integers(0, len(a) - 4), st.integers(4, 6), st.just(2))
    )
)
def test_an_alphabet_run_repeated_under_an_indented_key_is_no_secret(clf: Classifier, value: str) -> None:
    """``password: TUVWTUVW`` in YAML: a run along the alphabet, twice, is the alphabet written
    out, though as base64 it decodes to text by chance ("MUVMUV")."""
    assume(len(value) >= 8)
    text = f"database:\n  password: {value}\n"
    s = text.index(value)
    assert not any(a < s + len(value) and b > s for a, b in secret_spans(clf, text)), value


@functools.cache
def _printable_quads(letters: str) -> list[str]:
    """The four-letter runs of ``letters`` that decode as base64 to printable ASCII."""
    quads = ("".join(q) for q in itertools.product(letters, repeat=4))
    return [q for q in quads if all(0x20 <= b < 0x7F for b in base64.b64decode(q))]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.integers(0, 10**6), min_size=2, max_size=10),
    st.sampled_from(["  {k}: {v}\n", '    "{k}": "{v}"\n']),
)
def test_a_lower_case_word_under_an_indented_key_is_no_secret(clf: Classifier, picks: list[int], line: str) -> None:
    """A tokenizer's vocabulary (``"token_str": "entially"``) or a YAML word: lower-case letters
    that decode as base64 to printable text (drawn so that they do) are no Secret's data."""
    quads = _printable_quads(string.ascii_lowercase)
    value = "".join(quads[i % len(quads)] for i in picks)
    text = "entries:\n" + line.format(k="piece", v=value)
    s = text.index(value)
    assert not any(a < s + len(value) and b > s for a, b in secret_spans(clf, text)), value


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.one_of(
        st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=6, max_size=48),
        st.text(st.sampled_from(string.ascii_uppercase + string.digits), min_size=6, max_size=12),
    )
)
def test_base64_of_text_under_a_secrets_data_key_is_found(clf: Classifier, plain: str) -> None:
    """The other side: a Secret's data, base64 of any printable value that is no placeholder, is
    found whole, upper-case values too (``TUFTVEVS`` is "MASTER", all capitals), unless its
    encoding happens to be lower-case letters only (about 3 in 1,000 lower-case passwords of six
    letters, none longer)."""
    assume(not is_placeholder(plain))
    value = base64.b64encode(plain.encode()).decode()
    assume(not (value.isalpha() and value.islower()))
    text = f"apiVersion: v1\nkind: Secret\ndata:\n  app-value: {value}\n"
    s = text.index(value)
    assert (s, s + len(value)) in secret_spans(clf, text), (plain, value)


# what a vocabulary's pieces are made of: letters and marks of every script, punctuation,
# symbols, spaces, format characters (a zero-width non-joiner) and line breaks, each as NFKC
# leaves it (tokenizers normalise so; "㍘" would be read as "0点", a piece of 12 "random"
# characters from one of 10)
_PIECE_CHARS = st.characters(
    categories=["L", "M", "P", "S", "Zs", "Cf"], include_characters="\t\n", codec="utf-8"
).filter(lambda c: unicodedata.normalize("NFKC", c) == c)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.text(_PIECE_CHARS, min_size=1, max_size=10), min_size=1, max_size=8),
    st.sampled_from(["token_str", "tokenStr", "TOKEN_STR"]),
)
def test_a_tokenizer_vocabulary_is_no_secret(clf: Classifier, pieces: list[str], key: str) -> None:
    """A tokenizer's vocabulary as JSON (mistral's ``tekken.json``: 150,000 entries, pieces of a
    few characters): pieces of text in any script under ``token_str`` are no credentials,
    whatever they spell, nor their bytes as base64 under ``token_bytes`` (they decode to the
    piece). Digits are left out: a token's text has them (tekken splits numbers into single
    digits, too short to judge), and so is a piece shaped as a login (``a:b``, ``a@b``), whose
    base64 is Basic auth's."""
    assume(not any(re.search(r"\w(?::(?!:)|@)", p) for p in pieces))
    vocab = [{"rank": i, "token_bytes": base64.b64encode(p.encode()).decode(), key: p} for i, p in enumerate(pieces)]
    text = json.dumps({"vocab": vocab}, indent=4, ensure_ascii=False)
    assert secret_spans(clf, text) == [], pieces


@pytest.mark.parametrize("key", ["access_token_str", "authTokenStr", "token_str", "token"])
@pytest.mark.parametrize(
    "value", ["q8Vr2LmZ7xT4nWc9", "c150cd2477e114db47ed", "dG9rZW4tc2VjcmV0LXZhbHVlLTEyMzQ1Njc4OTA"]
)
def test_a_token_under_a_vocabularys_key_or_a_credentials_is_found(clf: Classifier, key: str, value: str) -> None:
    """A vocabulary's keys take only its pieces: a random-looking token under ``token_str`` (a
    variable in code) is found, as under any key naming a token (random key material under
    ``token_bytes``: ``test_encoded_words``)."""
    text = f'config = {{"{key}": "{value}"}}'
    s = text.index(value)
    assert (s, s + len(value)) in secret_spans(clf, text)


@pytest.mark.parametrize(
    "value",
    ["MGExMDBhNWYyNGRhODUyYQ", "0a100a5f24da852a", "64e94b694bed6a2d", "IuKYnFxq7JGDXnDv", "rrp0WyDflNqQUEhACduI"],
)
@pytest.mark.parametrize("key", ["api_key", "API_TOKEN", "access_token"])
def test_random_tokens_that_decode_to_text_by_chance_stay_tokens(clf: Classifier, key: str, value: str) -> None:
    """An adversarial review's finds against a wider reading of base64 as text under every
    token's key: these decode to valid UTF-8 of several scripts (``0a100a5f24da852a`` is
    "ѭtѮ_ۇZ"), and are tokens. The wide reading is a vocabulary key's only."""
    assert value in [text[a:b] for text in [f'{key}: "{value}"'] for a, b in secret_spans(clf, text)]
