"""Property tests for the token and URL shapes of the third outside round: URLs with a template
user or a three-character password, JWTs whose JSON was written with a blank or as a dict,
Slack session cookies with JSON's ``\\/``, app-level tokens told apart from hyphenated names, and
connection strings with blanks around their ``=`` and ``;``."""

from __future__ import annotations

import base64
import json
import random
import urllib.parse

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tiers import Classifier
from tiers.recognizers._vocabulary import is_common
from tiers.recognizers.secrets._values import is_placeholder, looks_random

from .conftest import content
from .secret_corpus import CARRIERS
from .test_secret_shapes import connection_strings
from .test_secrets import covered, secret_spans, stripped_text

_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
_URL = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
# random bytes as a key generator makes them (hypothesis's own randoms shrink to zeros: a mask)
_rnd = st.integers(0, 2**32).map(random.Random)


_password_chars = st.text(
    alphabet="abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789!*_~", min_size=3, max_size=3
)


@_SETTINGS
@given(
    st.sampled_from(["mongodb+srv", "mongodb", "postgresql", "redis", "amqp"]),
    st.sampled_from(["<user>", "<username>", "<db_user>", "app", "svc-reader"]),
    _password_chars | st.text(alphabet=_URL, min_size=8, max_size=24),
    st.sampled_from(CARRIERS),
)
def test_url_password_is_found_with_a_template_user_or_three_characters(
    clf: Classifier, scheme: str, user: str, password: str, carrier: tuple[str, str]
) -> None:
    """Whoever fills in ``<user>`` has pasted the password already; three characters are a weak
    password, still the database's."""
    # (a common word of three letters is documentation's: ``alice:you@``)
    assume(len(set(password)) >= 3 and not is_placeholder(password, min_len=3) and not is_common(password))
    url = f"{scheme}://{user}:{password}@cluster0.{user.strip('<>')}.example.net/app?retryWrites=true"
    text = carrier[1].format(t=url)
    s = text.index(url)
    assert covered(secret_spans(clf, text), s, s + len(url)), text


@_SETTINGS
@given(
    st.sampled_from(["mongodb", "postgresql", "redis"]),
    st.sampled_from(
        ["user:pw", "u:p", "user:pwd", "<user>:pwd", "admin:abc", "foo:bar", "user:***", "worker:%+X", "u:%08x"]
    ),
    st.sampled_from([c for c in CARRIERS if c[0] != "bearer"]),  # (a bearer token is anything after it)
)
def test_url_with_a_template_password_is_no_secret(
    clf: Classifier, scheme: str, userinfo: str, carrier: tuple[str, str]
) -> None:
    text = carrier[1].format(t=f"{scheme}://{userinfo}@localhost:5432/app")
    assert not secret_spans(clf, text), text


@_SETTINGS
@given(_rnd, st.integers(120, 240), st.sampled_from(CARRIERS))
def test_slack_cookie_with_escaped_slashes_is_found_whole(
    clf: Classifier, rnd: random.Random, size: int, carrier: tuple[str, str]
) -> None:
    """A decoded ``d`` cookie holds ``/`` and ``+``; a JSON writer that escapes ``/`` gives ``\\/``."""
    raw = base64.b64encode(rnd.randbytes(size * 3 // 4)).decode()
    assume("/" in raw)
    token = "xoxd-" + raw.replace("/", "\\/")
    text = carrier[1].format(t=token)
    s = text.index(token)
    assert covered(secret_spans(clf, text), s, s + len(token)), text


@_SETTINGS
@given(st.integers(1, 9), _rnd, st.sampled_from(CARRIERS))
def test_slack_app_token_is_found_whole(
    clf: Classifier, version: int, rnd: random.Random, carrier: tuple[str, str]
) -> None:
    app = "A" + "".join(rnd.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") for _ in range(rnd.randint(8, 11)))
    number = str(rnd.randrange(10**9, 10**13))
    token = f"xapp-{version}-{app}-{number}-{rnd.randbytes(32).hex()}"
    text = carrier[1].format(t=token)
    s = text.index(token)
    assert covered(secret_spans(clf, text), s, s + len(token)), text


@_SETTINGS
@given(
    st.integers(1, 9),
    st.lists(st.from_regex(r"[a-z][a-z0-9]{1,9}", fullmatch=True), min_size=1, max_size=3),
    st.integers(0, 99),
    st.from_regex(r"[a-z][a-z0-9]{0,9}", fullmatch=True),
    st.sampled_from(["image: registry/{t}:latest", "name: {t}", "see {t} below", "helm install {t} ./chart"]),
)
def test_hyphenated_names_after_xapp_are_no_tokens(
    clf: Classifier, version: int, words: list[str], number: int, last: str, carrier: str
) -> None:
    """``xapp-2-kpimon-1-go``: a name in lower case, not an app id in capitals."""
    name = f"xapp-{version}-{'-'.join(words)}-{number}-{last}"
    text = carrier.format(t=name)
    s = text.index(name)
    assert not any(a < s + len(name) and b > s for a, b in secret_spans(clf, text)), text


_SPACED = st.sampled_from([" = ", "= ", " =", "\t=\t"])
_SEMIS = st.sampled_from(["; ", " ; ", " ;", ";\t"])


@_SETTINGS
@given(
    connection_strings(),
    _SPACED,
    _SEMIS,
    st.sampled_from(['conn = "{t}"\n', "the string {t} was rotated", '<add connectionString="{t}" />']),
)
def test_connection_string_with_blanks_around_its_pairs_is_stripped_whole(
    clf: Classifier, case: tuple[str, str], eq: str, semi: str, carrier: str
) -> None:
    """``Endpoint = sb://…; SharedAccessKey = …``: the SDKs trim the blanks; the endpoint is
    stripped with the key."""
    conn, key = case
    pairs = [p.split("=", 1) for p in conn.rstrip(";").split(";")]
    spaced = semi.join(f"{n}{eq}{v}" for n, v in pairs)
    text = carrier.format(t=spaced)
    s = text.index(spaced)
    assert covered(secret_spans(clf, text), s, s + len(spaced)), text
    out = stripped_text(clf, text)
    assert key not in out and pairs[0][1] not in out, out


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@_SETTINGS
@given(
    st.sampled_from(["HS256", "RS256", "none"]),
    st.sampled_from(["blank", "dict"]),
    st.sampled_from(["base64url", "base64", "base64 in JSON"]),
    _rnd,
    st.booleans(),
    st.sampled_from(CARRIERS),
)
def test_jwt_with_json_written_otherwise_is_found_whole(
    clf: Classifier, alg: str, style: str, encoding: str, rnd: random.Random, signed: bool, carrier: tuple[str, str]
) -> None:
    """``{ "alg": "HS256" }`` (a blank after the brace: ``eyAi…``) or a dict as Python prints it
    (``{'alg': 'HS256'}``: ``eyd…``) is still an object: the token is found whole, signed or not,
    in base64url or in the base64 some libraries write (``+``, ``/``, ``\\/`` in a JSON string)."""
    claims = {"sub": str(rnd.randrange(10**8)), "exp": rnd.randrange(10**9, 2 * 10**9), "scope": "read write"}

    def dump(obj: dict[str, object]) -> bytes:
        return ("{ " + json.dumps(obj)[1:-1] + " }" if style == "blank" else str(obj)).encode()

    def enc(raw: bytes) -> str:
        if encoding == "base64url":
            return _b64url(raw)
        text = base64.b64encode(raw).decode().rstrip("=")
        return text.replace("/", "\\/") if encoding == "base64 in JSON" else text

    header, payload = enc(dump({"alg": alg, "typ": "JWT"})), enc(dump(claims))
    token = f"{header}.{payload}." + (enc(rnd.randbytes(32)) if signed else "")
    text = carrier[1].format(t=token)
    s = text.index(token.rstrip("."))
    assert covered(secret_spans(clf, text), s, s + len(token.rstrip("."))), text


@_SETTINGS
@given(
    st.lists(st.from_regex(r"[A-Z][a-z]{2,8}", fullmatch=True), min_size=3, max_size=5),
    st.lists(st.from_regex(r"[A-Z][a-z]{2,8}", fullmatch=True), min_size=3, max_size=5),
    st.sampled_from(["x = {t}\n", "{t}(1)", "see {t} below"]),
)
def test_names_after_ey_joined_by_dots_are_no_jwt(
    clf: Classifier, first: list[str], second: list[str], carrier: str
) -> None:
    """``eyeColorDefault.eyebrowStyleName.``: words after ``ey``, not base64 of JSON."""
    name = "eye" + "".join(first) + ".eyebrow" + "".join(second) + ".x"
    text = carrier.format(t=name)
    s = text.index(name)
    assert not any(a < s + len(name) and b > s for a, b in secret_spans(clf, text)), text


def _escape(text: str, depth: int) -> str:
    for _ in range(depth):
        text = json.dumps(text)[1:-1]
    return text


@_SETTINGS
@given(
    _rnd,
    st.sampled_from(["client_secret", "password", "api_key", "DB_PASSWORD", "accessToken", "private-token"]),
    st.integers(1, 3),
    st.sampled_from(['CONFIG="{t}"\n', '{{"env": "{t}"}}', "log: payload={t}", "x = '{t}'"]),
    st.booleans(),
    st.sampled_from([None, 0, 2]),  # one line, or pretty-printed: a written line break before a key
)
def test_escaped_assignments_are_found_whole(
    clf: Classifier, rnd: random.Random, key: str, depth: int, carrier: str, neighbours: bool, indent: int | None
) -> None:
    """JSON escaped into a string once to three times (a dotenv value, JSON of JSON, a log line):
    a credential assigned there is stripped whole, next to other fields or alone."""
    value = "".join(rnd.choice(_URL) for _ in range(rnd.randint(16, 40)))
    assume(looks_random(value) and not is_placeholder(value))
    fields = {"region": "eu-west-1", key: value, "retries": "3"} if neighbours else {key: value}
    text = carrier.format(t=_escape(json.dumps(fields, indent=indent), depth))
    s = text.index(value)
    assert covered(secret_spans(clf, text), s, s + len(value)), text
    assert value not in stripped_text(clf, text)


# -- the last stop's review: what a finding must not miss, and where it must end ---------------


@_SETTINGS
@given(
    st.text(
        alphabet="abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789!#$&()*+,/:;=?@[]^{}|~",
        min_size=3,
        max_size=16,
    ),
    st.sampled_from(["amqp", "postgresql", "redis", "mongodb"]),
    st.sampled_from(CARRIERS),
)
def test_percent_encoded_url_password_is_found(
    clf: Classifier, password: str, scheme: str, carrier: tuple[str, str]
) -> None:
    """A password written with every character escaped (``%2F%3D%2B%5E``, as URL builders
    write it) is a value, not format verbs: the URL is found whole."""
    assume(len(set(password)) >= 3 and not is_placeholder(password, min_len=3))
    url = f"{scheme}://svc:{urllib.parse.quote(password, safe='')}@broker.internal:5672/app"
    text = carrier[1].format(t=url)
    s = text.index(url)
    assert covered(secret_spans(clf, text), s, s + len(url)), text


_WORD = st.from_regex(r"[a-z]{3,9}", fullmatch=True)


@_SETTINGS
@given(
    st.lists(_WORD, min_size=1, max_size=3),
    st.lists(_WORD, min_size=1, max_size=3),
    st.integers(1900, 2099),
    st.sampled_from(["-", "_"]),
    st.sampled_from(["pdf", "png", "docx", ""]),
    st.sampled_from(["see {t} for details", "files/{t}", "x = '{t}'", "{t}"]),
)
def test_file_names_after_ey_are_no_jwt(
    clf: Classifier, first: list[str], second: list[str], year: int, sep: str, ext: str, carrier: str
) -> None:
    """``eyelid-surgery-2019.eyebrow-lift-2020.pdf``: words and a year after ``ey``, in one case,
    decode to no object's text: a file name."""
    name = "eye" + sep.join([*first, str(year)]) + ".eye" + sep.join([*second, str(year + 1)]) + "." + ext
    text = carrier.format(t=name)
    s = text.index(name)
    assert not any(a < s + len(name) and b > s for a, b in secret_spans(clf, text)), text


@_SETTINGS
@given(
    _rnd,
    st.sampled_from(
        [
            ("https://api.example.net/v1/sessions/{t}/items/list", "/items"),
            ("GET / HTTP/1.1\\r\\nAuthorization: Bearer {t}\\r\\nHost: api.example.net", "\\r\\nHost"),
        ]
    ),
)
def test_base64url_jwt_ends_where_it_ends(clf: Classifier, rnd: random.Random, case: tuple[str, str]) -> None:
    """A JWT in base64url (it shows a ``-`` or ``_``) is found whole and ends before the URL path
    or the written line break after it; what follows reaches the vendor."""
    claims = {"sub": str(rnd.randrange(10**8)), "exp": rnd.randrange(10**9, 2 * 10**9)}
    token = ".".join(
        [_b64url(b'{"alg":"HS256","typ":"JWT"}'), _b64url(json.dumps(claims).encode()), _b64url(rnd.randbytes(32))]
    )
    assume("-" in token or "_" in token)
    carrier, after = case
    text = carrier.format(t=token)
    s = text.index(token)
    spans = secret_spans(clf, text)
    assert covered(spans, s, s + len(token)), text
    assert after in stripped_text(clf, text), text


@_SETTINGS
@given(connection_strings(), st.sampled_from(["; retries = 5", "; timeout=30", ";\tpool_size = 10"]))
def test_connection_string_ends_before_other_settings(clf: Classifier, case: tuple[str, str], tail: str) -> None:
    """The string is found whole; a setting after it that no SDK reads in one stays readable."""
    conn, key = case
    text = f"{conn.rstrip(';')}{tail}"
    assert covered(secret_spans(clf, text), 0, len(conn.rstrip(";"))), text
    out = stripped_text(clf, text)
    assert key not in out and tail.lstrip(";").strip() in out, out


_PARSERS = [
    'if (line.equals("{b}")) {{ {v} = true; }} else if (line.equals("{e}")) {{ {v} = false; }}',
    'if line == "{b}":\n    {v} = True\nelif line == "{e}":\n    {v} = False',
    'const {v} = pem.indexOf("{b}") >= 0 && pem.indexOf("{e}") > 0;',
    'for (const l of lines) {{ if (l === "{b}") {{ continue; }} if (l === "{e}") break; {v}.push(l); }}',
]


@_SETTINGS
@given(
    st.sampled_from(_PARSERS),
    st.from_regex(r"[a-z][A-Za-z]{2,10}", fullmatch=True),
    st.sampled_from(["", "RSA ", "EC ", "OPENSSH "]),
)
def test_parser_code_between_armour_strings_is_no_key(clf: Classifier, code: str, var: str, kind: str) -> None:
    text = code.format(b=f"-----BEGIN {kind}PRIVATE KEY-----", e=f"-----END {kind}PRIVATE KEY-----", v=var)
    assert not secret_spans(clf, text), text


@_SETTINGS
@given(st.sampled_from(["you", "the", "and", "can", "one"]), st.sampled_from(["alice", "bob", "user"]))
def test_common_word_as_url_password_is_documentation(clf: Classifier, word: str, user: str) -> None:
    """A word as a password at a documentation host is an example; at any other host it is a
    weak password, still the database's."""
    assume(is_common(word))
    text = f"open https://{user}:{word}@example.com/ now"
    assert not secret_spans(clf, text), text
    if is_placeholder(word, min_len=3):
        return  # ("the": a template word wherever it stands)
    url = f"postgres://{user}:{word}@db.internal:5432/app"
    text = f"DATABASE_URL={url}"
    s = text.index(url)
    assert covered(secret_spans(clf, text), s, s + len(url)), text


@_SETTINGS
@given(
    st.sampled_from(["amqp", "postgresql", "redis", "mongodb", "mysql"]),
    st.sampled_from(["guest", "postgres", "rabbit", "Guest", "mqadmin"]),
    st.sampled_from(["localhost", "localhost:5672", "127.0.0.1:5432", "[::1]:6379"]),
    st.sampled_from(["db.corp.internal:5432", "10.1.2.3", "broker.prod.acme-corp.net"]),
    st.sampled_from([c for c in CARRIERS if c[0] != "bearer"]),
)
def test_a_servers_default_account_on_this_machine_is_no_secret(
    clf: Classifier, scheme: str, user: str, loopback: str, remote: str, carrier: tuple[str, str]
) -> None:
    """``amqp://guest:guest@localhost`` is the broker's default account on a developer's own
    machine (pydantic-extra-types' docs); the same account on another host is a credential to it,
    and another password on the loopback host is one too."""
    assert not is_placeholder(user, min_len=3)  # ("admin", "test" are placeholders anywhere)
    local = f"{scheme}://{user}:{user.lower()}@{loopback}/app"
    assert not secret_spans(clf, carrier[1].format(t=local))
    for url in (f"{scheme}://{user}:{user}@{remote}/app", f"{scheme}://{user}:Zq8{user}x7@{loopback}/app"):
        text = carrier[1].format(t=url)
        s = text.index(url)
        assert covered(secret_spans(clf, text), s, s + len(url)), text


@_SETTINGS
@given(
    st.sampled_from(["application", "text", "image", "audio", "video", "multipart", "font", "model"]),
    st.from_regex(r"[a-z][a-z0-9.-]{1,20}(\+(jwt|json|xml|cbor))?", fullmatch=True),
    st.sampled_from(["API_TOKEN", "APPLICATION_JWT", "secret_key", "access_token"]),
)
def test_a_media_type_is_no_credential(clf: Classifier, top: str, subtype: str, key: str) -> None:
    """Every HTTP library lists media types as constants (``APPLICATION_JWT =
    'application/jwt'``), under names a credential's key has too."""
    for line in (f"{key} = '{top}/{subtype}'\n", f'"{key}": "{top}/{subtype}",\n', f"{key}: {top}/{subtype}\n"):
        assert not secret_spans(clf, line), line


@_SETTINGS
@given(
    st.integers(0, 2**32).map(random.Random),
    st.integers(0, 19),
    st.sampled_from(["X-_X", "x--x", "_xX_", "--__"]),
)
def test_a_signature_with_four_mask_characters_in_a_row_is_still_a_jwts(
    clf: Classifier, rnd: random.Random, at: int, run: str
) -> None:
    """A random base64url signature meets "x", "X", "-" and "_" four in a row about once in
    1,700 draws (CI drew ``…y--gTRX-_X8``): the token stays found; a signature of mask
    characters in documentation (``xxxxxxxx-xxxx``) is still none."""
    # a seeded generator, not hypothesis's own draws: those shrink to runs of "0" and "a", which
    # are masks, not the random signature this is about
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    random_part = "".join(rnd.choice(alphabet) for _ in range(32))
    assume(any(c.isupper() for c in random_part) and any(c.islower() for c in random_part))
    assume(any(c.isdigit() for c in random_part))
    # the run is four long: the random characters around it are no mask characters themselves
    assume(
        random_part[at - 1 : at + 1].isalnum()
        and random_part[at - 1 : at + 1].strip("xX") == random_part[at - 1 : at + 1]
    )
    signature = random_part[:at] + run + random_part[at:]
    header = _b64url(b'{ "alg": "HS256", "typ": "JWT" }')
    payload = _b64url(b'{ "sub": "23143591", "scope": "read write" }')
    token = f"{header}.{payload}.{signature}"
    text = f"key: {token}"
    assert covered(secret_spans(clf, text), 5, 5 + len(token)), text
    masked = f"key: {header}.{payload}.xxxxxxxx-xxxx"
    assert not secret_spans(clf, masked), masked


def _token(rnd: random.Random, hexadecimal: bool) -> str:
    alphabet = "0123456789abcdef" if hexadecimal else _URL
    size = rnd.choice([32, 40]) if hexadecimal else rnd.randint(20, 64)
    return "".join(rnd.choice(alphabet) for _ in range(size))


@_SETTINGS
@given(
    _rnd,
    st.booleans(),
    st.sampled_from(["https", "http", "git+https"]),
    st.sampled_from(["github.com/acme/app.git", "gitlab.example.org:8443/group/repo", "o4506985151856640.ingest.us.sentry.io/4508449198899200",
                     "sentry.acme-corp.com/42", "api.vendor.io/v1/events?x=1"]),
    st.sampled_from(CARRIERS),
)  # fmt: skip
def test_a_token_as_a_web_url_s_user_is_a_secret_with_its_url(
    clf: Classifier, rnd: random.Random, hexadecimal: bool, scheme: str, rest: str, carrier: tuple[str, str]
) -> None:
    """``https://<token>@github.com/…`` (a Git host's access token), a Sentry DSN's key: the URL
    is a credential. It was typed as an e-mail address, or missed where the DSN's organisation
    number had more than ten digits."""
    token = _token(rnd, hexadecimal)
    assume(looks_random(token, min_len=20) and not is_placeholder(token))
    url = f"{scheme}://{token}@{rest}"
    text = carrier[1].format(t=url)
    s = text.index(url)
    assert covered(secret_spans(clf, text), s, s + len(url)), text
    d = clf.classify(content(text))
    assert not [f for f in d.findings if f.entity_type == "EMAIL_ADDRESS"], text


@_SETTINGS
@given(
    _rnd,
    st.sampled_from(["ssh://{u}@ssh.hf.jobs", "ssh://{u}@build-7.acme-corp.com:2222/srv/app", "sftp://{u}@files.acme-corp.com/in"]),
    st.sampled_from(CARRIERS),
)  # fmt: skip
def test_an_id_as_an_ssh_url_s_user_is_neither_a_mailbox_nor_a_secret(
    clf: Classifier, rnd: random.Random, shape: str, carrier: tuple[str, str]
) -> None:
    """SSH's user part is a login: a job's or a machine's id there is no secret, and no mailbox
    either ("ssh://687fb701029421ae5549d998@ssh.hf.jobs" was an e-mail address)."""
    user = "".join(rnd.choice("0123456789abcdef") for _ in range(24))
    assume(looks_random(user, min_len=16))
    text = carrier[1].format(t=shape.format(u=user))
    if carrier[0] != "bearer":  # (a bearer token is anything after it)
        assert not secret_spans(clf, text), text
    d = clf.classify(content(text))
    assert not [f for f in d.findings if f.entity_type == "EMAIL_ADDRESS"], text


@pytest.mark.parametrize(
    ("text", "mailbox"),
    [
        ("https://jsmith@bitbucket.org/acme/app.git", "jsmith@bitbucket.org"),
        ("ssh://anna.berg@build.acme-corp.com/srv", "anna.berg@build.acme-corp.com"),
        ("Write to 687fb701029421ae5549d998@acme-corp.com", "687fb701029421ae5549d998@acme-corp.com"),
        ("https://my-long-service-account@host.acme-corp.com/x", "my-long-service-account@host.acme-corp.com"),
    ],
)
def test_a_person_s_login_in_a_url_stays_a_mailbox(clf: Classifier, text: str, mailbox: str) -> None:
    """A login name in a URL (no token: letters and digits not mixed at random) and a machine's
    id outside a URL are still addresses."""
    d = clf.classify(content(text))
    assert mailbox in [text[f.start : f.end] for f in d.findings if f.entity_type == "EMAIL_ADDRESS"], text
    assert not [f for f in d.findings if f.entity_type == "SECRET"], text


@_SETTINGS
@given(
    user=st.text(alphabet="0123456789abcdef", min_size=8, max_size=64)
    | st.text(alphabet=_URL, min_size=8, max_size=64)
    | st.from_regex(r"[a-z]{3,10}\.[a-z]{3,10}[0-9]{0,4}", fullmatch=True),
    scheme=st.sampled_from(["https", "http", "git+https", "ssh"]),
)
def test_a_user_part_of_a_url_is_never_dropped_by_both_readings(clf: Classifier, user: str, scheme: str) -> None:
    """The mailbox's reading leaves a machine-made user part to the secret's, so the two must
    agree: a user part of a web URL that is no placeholder is reported by one of them, whatever
    its shape (a token too short or too regular for a secret stays a mailbox)."""
    assume(user.strip("-_") and not is_placeholder(user))
    text = f"git clone {scheme}://{user}@git.acme-corp.com/team/app.git"
    s = text.index(user)
    d = clf.classify(content(text))
    spans = sorted((f.start, f.end) for f in d.findings if f.entity_type in ("SECRET", "EMAIL_ADDRESS"))
    if scheme == "ssh" and not d.findings:
        return  # a login's machine-made id at SSH: neither (the test beside this one)
    assert covered(spans, s, s + len(user)), (text, d.findings)
