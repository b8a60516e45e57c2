"""Property tests for credential files and key blocks found by their structure rather than as
valid JSON or PEM (the third outside round): Google service-account keys and application default
credentials escaped into strings, edited by hand or without their braces; key blocks whose line
breaks became escapes or markup; templates, prose and code between the armour are none."""

from __future__ import annotations

import base64
import json
import random
import re

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tiers import Classifier
from tiers.recognizers.secrets._values import is_placeholder

from .test_secrets import covered, secret_spans, stripped_text

_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
_URL = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
_name = st.from_regex(r"[a-z][a-z0-9-]{4,20}", fullmatch=True)
# random bytes as a key generator makes them (hypothesis's own randoms shrink to zeros: a mask)
_rnd = st.integers(0, 2**32).map(random.Random)


def _pem(rnd: random.Random, size: int) -> tuple[str, str]:
    """(a PEM private-key block with real line breaks, its base64 body)."""
    body = base64.b64encode(rnd.randbytes(size)).decode()
    lines = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    return f"-----BEGIN PRIVATE KEY-----\n{lines}\n-----END PRIVATE KEY-----\n", body


@st.composite
def service_accounts(draw: st.DrawFn) -> tuple[dict[str, str], str]:
    """(a service-account key file's fields, in one of the orders tools write them, and its
    key's base64)."""
    rnd = draw(_rnd)
    project, account = draw(_name), draw(_name)
    pem, body = _pem(rnd, draw(st.integers(600, 1200)))
    email = f"{account}@{project}.iam.gserviceaccount.com"
    fields = {
        "type": "service_account",
        "project_id": project,
        "private_key_id": rnd.randbytes(20).hex(),
        "private_key": pem,
        "client_email": email,
        "client_id": str(rnd.randrange(10**20, 10**21)),
        "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": "https://oauth2.googleapis.com/token",
        "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
        "client_x509_cert_url": f"https://www.googleapis.com/robot/v1/metadata/x509/{email.replace('@', '%40')}",
    }
    keys = list(fields)
    if draw(st.booleans()):
        rnd.shuffle(keys)  # a tool that wrote them in its own order (or sorted)
    # a hand-edited or partial file: some fields left out, never the key and one account field
    kept = [k for k in keys if k in ("private_key", "client_email") or draw(st.booleans())]
    return {k: fields[k] for k in kept}, body


def _json_text(fields: dict[str, str], style: str) -> str:
    """The object as written: JSON one line or pretty, or hand-edited (a trailing comma, single
    quotes around a name: no JSON parser reads it, a person or a YAML reader might)."""
    if style == "pretty":
        return json.dumps(fields, indent=2)
    if style == "trailing-comma":
        return json.dumps(fields)[:-1] + ",}"
    return json.dumps(fields, separators=(",", ":") if style == "compact" else (", ", ": "))


# where a credential file's text is pasted: as it is, or escaped into a string once or twice
def _escaped(text: str) -> str:
    return json.dumps(text)[1:-1]


_FILE_CARRIERS = [
    ("as is", lambda t: f"here is the key file:\n{t}\nthanks"),
    ("dotenv string", lambda t: f'GOOGLE_CREDENTIALS="{_escaped(t)}"\n'),
    ("json of json", lambda t: json.dumps({"env": {"GCP_KEY": t}})),
    ("escaped twice", lambda t: f'"config": "{_escaped(_escaped(t))}"'),
    ("python", lambda t: f"creds = json.loads('{_escaped(t)}')\n"),
]


def _object_span(text: str, marker: str) -> tuple[int, int]:
    """The span of the object around ``marker`` in ``text``: its nearest braces."""
    i = text.index(marker)
    return text.rindex("{", 0, i), text.index("}", i) + 1


@_SETTINGS
@given(
    service_accounts(),
    st.sampled_from(["compact", "spaced", "pretty", "trailing-comma"]),
    st.sampled_from(_FILE_CARRIERS),
)
def test_service_account_key_is_stripped_whole(
    clf: Classifier, case: tuple[dict[str, str], str], style: str, carrier: tuple[str, object]
) -> None:
    """The object holding the key and the account is one finding, in every carrier; neither the
    key nor the account's mailbox reaches the vendor."""
    fields, body = case
    wrap = carrier[1]
    assert callable(wrap)
    text = wrap(_json_text(fields, style))
    s, e = _object_span(text, "private_key")
    assert covered(secret_spans(clf, text), s, e), text
    out = stripped_text(clf, text)
    assert body[:64] not in out and body[-40:] not in out and fields["client_email"] not in out, out


_TEMPLATE_KEYS = ["PRIVATE_KEY", "...", "<your-private-key>", "YOUR_PRIVATE_KEY_HERE", "${PRIVATE_KEY}", "xxxxxxxx"]


@_SETTINGS
@given(service_accounts(), st.sampled_from(_TEMPLATE_KEYS), st.sampled_from(_FILE_CARRIERS))
def test_service_account_template_is_no_secret(
    clf: Classifier, case: tuple[dict[str, str], str], template: str, carrier: tuple[str, object]
) -> None:
    """Documentation's key file, with a template where the key goes, holds no secret."""
    fields, _ = case
    fields = {**fields, "private_key": f"-----BEGIN PRIVATE KEY-----\n{template}\n-----END PRIVATE KEY-----\n"}
    fields.pop("private_key_id", None)  # a hex id alone is no secret either way; keep the check on the key
    wrap = carrier[1]
    assert callable(wrap)
    text = wrap(json.dumps(fields))
    assert not secret_spans(clf, text), text


@st.composite
def authorized_users(draw: st.DrawFn) -> tuple[str, str, str]:
    """(application default credentials as JSON, the client secret, the refresh token)."""
    rnd = draw(_rnd)
    secret = draw(st.sampled_from(["GOCSPX-", ""])) + "".join(rnd.choice(_URL) for _ in range(28))
    refresh = "1//0" + "".join(rnd.choice(_URL) for _ in range(rnd.randint(60, 100)))
    assume(not is_placeholder(secret) and re.search(r"[0-9]", secret) and re.search(r"[A-Z]", secret))
    fields = {
        "account": "",
        "client_id": f"{rnd.randrange(10**11, 10**12)}-{draw(_name)}.apps.googleusercontent.com",
        "client_secret": secret,
        "quota_project_id": draw(_name),
        "refresh_token": refresh,
        "type": "authorized_user",
        "universe_domain": "googleapis.com",
    }
    keys = list(fields)
    rnd.shuffle(keys)
    return json.dumps({k: fields[k] for k in keys}, indent=draw(st.sampled_from([None, 2]))), secret, refresh


@_SETTINGS
@given(authorized_users(), st.sampled_from(_FILE_CARRIERS))
def test_application_default_credentials_are_stripped_whole(
    clf: Classifier, case: tuple[str, str, str], carrier: tuple[str, object]
) -> None:
    adc, secret, refresh = case
    wrap = carrier[1]
    assert callable(wrap)
    text = wrap(adc)
    s, e = _object_span(text, "client_secret")
    assert covered(secret_spans(clf, text), s, e), text
    out = stripped_text(clf, text)
    assert secret not in out and refresh[4:] not in out, out


@_SETTINGS
@given(
    authorized_users(),
    st.sampled_from(["<your-client-secret>", "YOUR_CLIENT_SECRET", "${CLIENT_SECRET}", "xxxxxxxx"]),
    st.sampled_from(["<your-refresh-token>", "REFRESH_TOKEN", "${REFRESH_TOKEN}", "..."]),
)
def test_application_default_credentials_template_is_no_secret(
    clf: Classifier, case: tuple[str, str, str], secret_template: str, refresh_template: str
) -> None:
    adc, secret, refresh = case
    text = adc.replace(secret, secret_template).replace(refresh, refresh_template)
    assert not secret_spans(clf, text), text


# how a key block's line breaks arrive: as they are, CRLF, JSON escapes once, twice, three
# times, escaped slashes too (PHP's json_encode), XML character references, HTML breaks
_BREAKS: list[tuple[str, str, str]] = [
    ("lf", "\n", "/"),
    ("crlf", "\r\n", "/"),
    ("json", "\\n", "/"),
    ("json twice", "\\\\n", "/"),
    ("json three times", "\\\\\\\\n", "/"),
    ("php json", "\\n", "\\/"),
    ("xml reference", "&#10;", "/"),
    ("xml hex reference", "&#xA;", "/"),
    ("html", "<br>", "/"),
]
_KEY_CARRIERS = ["{k}", 'key = "{k}"', "<value>{k}</value>", '{{"private_key": "{k}"}}', "x\n{k}\ny"]


@_SETTINGS
@given(
    _rnd,
    st.integers(200, 1200),
    st.sampled_from(["", "RSA ", "EC ", "OPENSSH ", "ENCRYPTED "]),
    st.sampled_from(_BREAKS),
    st.sampled_from(_KEY_CARRIERS),
)
def test_key_block_is_found_whole_whatever_its_line_breaks(
    clf: Classifier, rnd: random.Random, size: int, kind: str, breaks: tuple[str, str, str], carrier: str
) -> None:
    """The armour lines say what the block is: the text between them is stripped whole."""
    _, nl, slash = breaks
    body = base64.b64encode(rnd.randbytes(size)).decode()
    lines = nl.join(body[i : i + 64] for i in range(0, len(body), 64)).replace("/", slash)
    block = f"-----BEGIN {kind}PRIVATE KEY-----{nl}{lines}{nl}-----END {kind}PRIVATE KEY-----"
    text = carrier.format(k=block)
    s = text.index(block)
    assert covered(secret_spans(clf, text), s, s + len(block)), text
    out = stripped_text(clf, text)
    assert body[:32].replace("/", slash) not in out, out


_NOT_KEYS = [
    "...",
    "<your private key>",
    "YOUR_PRIVATE_KEY_CONTENT_GOES_HERE",
    "and the file ends with the line",
    '" + base64.b64encode(der).decode() + "',
    '" + encodedPrivateKeyMaterial + "',
    "{private_key_base64_body_here}",
    "${PRIVATE_KEY_PEM_BODY}",
    "",
]


@_SETTINGS
@given(st.sampled_from(_NOT_KEYS), st.sampled_from(["\n", "\\n", ""]), st.sampled_from(_KEY_CARRIERS))
def test_armour_around_no_key_is_no_secret(clf: Classifier, inner: str, nl: str, carrier: str) -> None:
    """Armour around a template, prose or code that builds a block is documentation or code."""
    text = carrier.format(k=f"-----BEGIN PRIVATE KEY-----{nl}{inner}{nl}-----END PRIVATE KEY-----")
    assert not secret_spans(clf, text), text


@_SETTINGS
@given(
    st.one_of(
        service_accounts().map(lambda c: json.dumps(c[0])),
        authorized_users().map(lambda c: c[0]),
    ),
    st.sampled_from(["fields: {t} (from the file)", 'creds = "{t}"', "x\n{t}\ny"]),
)
def test_credential_file_fields_without_their_braces_are_stripped_whole(
    clf: Classifier, obj: str, carrier: str
) -> None:
    """A fragment of the file (its fields, the braces lost in a copy) is the same credential."""
    fields = obj.strip()[1:-1].strip()
    text = carrier.format(t=fields.replace('"', '\\"') if carrier.startswith("creds") else fields)
    first, last = text.index('"'), text.rindex('"') + 1
    assert covered(secret_spans(clf, text), first, last), text
