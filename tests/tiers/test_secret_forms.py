"""Property tests for the token and URL shapes of the third outside round: URLs with a template
user or a three-character password, JWTs whose JSON was written with a blank or as a dict,
Slack session cookies with JSON's ``\\/``, app-level tokens told apart from hyphenated names, and
connection strings with blanks around their ``=`` and ``;``."""

from __future__ import annotations

import base64
import json
import random

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tiers import Classifier
from tiers.recognizers._vocabulary import is_common
from tiers.recognizers.secrets._values import is_placeholder, looks_random

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
)
def test_escaped_assignments_are_found_whole(
    clf: Classifier, rnd: random.Random, key: str, depth: int, carrier: str, neighbours: bool
) -> None:
    """JSON escaped into a string once to three times (a dotenv value, JSON of JSON, a log line):
    a credential assigned there is stripped whole, next to other fields or alone."""
    value = "".join(rnd.choice(_URL) for _ in range(rnd.randint(16, 40)))
    assume(looks_random(value) and not is_placeholder(value))
    fields = {"region": "eu-west-1", key: value, "retries": "3"} if neighbours else {key: value}
    text = carrier.format(t=_escape(json.dumps(fields), depth))
    s = text.index(value)
    assert covered(secret_spans(clf, text), s, s + len(value)), text
    assert value not in stripped_text(clf, text)
