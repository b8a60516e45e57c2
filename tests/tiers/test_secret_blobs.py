"""Property tests for key blocks and credential files found by their structure rather than as
valid PEM or JSON: key blocks whose line breaks became escapes or markup (templates, prose and code
between the armour are none); Google service-account keys and application default credentials in
every carrier, as fragments without braces, and as templates. (A first credential-file pattern
was quadratic on one line of repeated fields and taken out; its shapes are in
tests/tiers/test_linear_time.py, beside the linear pattern's.)"""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tiers import Classifier
from tiers.recognizers.secrets._values import is_placeholder, looks_random

from .test_secrets import covered, secret_spans, stripped_text

_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
_URL = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
_name = st.from_regex(r"[a-z][a-z0-9-]{4,20}", fullmatch=True)
_id = st.from_regex(r"[a-z][a-z0-9-]{4,20}[a-z0-9]", fullmatch=True)
# random bytes as a key generator makes them (hypothesis's own randoms shrink to zeros: a mask)
_rnd = st.integers(0, 2**32).map(random.Random)


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


# Google credential files as tools write them. Their secrets are found by the recognizers of their
# parts (the key block, the assigned secret and token, the account's mailbox): the properties hold
# what must never reach a vendor, in every carrier a file is pasted in.
def _pem(rnd: random.Random, size: int) -> tuple[str, str]:
    """(a PEM private-key block with real line breaks, its base64 body)."""
    body = base64.b64encode(rnd.randbytes(size)).decode()
    lines = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
    return f"-----BEGIN PRIVATE KEY-----\n{lines}\n-----END PRIVATE KEY-----\n", body


@st.composite
def service_accounts(draw: st.DrawFn) -> tuple[dict[str, str], str]:
    """(a service-account key file's fields, in gcloud's order or shuffled, and its key's base64)."""
    rnd = draw(_rnd)
    # (a project or account id ends in a letter or digit, as a mailbox's domain label does)
    project, account = draw(_id), draw(_id)
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
        rnd.shuffle(keys)
    return {k: fields[k] for k in keys}, body


@st.composite
def authorized_users(draw: st.DrawFn) -> tuple[str, str, str]:
    """(application default credentials as JSON, the client secret, the refresh token)."""
    rnd = draw(_rnd)
    secret = draw(st.sampled_from(["GOCSPX-", ""])) + "".join(rnd.choice(_URL) for _ in range(28))
    refresh = "1//0" + "".join(rnd.choice(_URL) for _ in range(rnd.randint(60, 100)))
    assume(not is_placeholder(secret) and looks_random(secret))
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


def _escaped(text: str) -> str:
    return json.dumps(text)[1:-1]


# where a credential file's text is pasted: as it is, escaped into a string once or twice, in code
_FILE_CARRIERS = [
    lambda t: f"here is the key file:\n{t}\nthanks",
    lambda t: f'GOOGLE_CREDENTIALS="{_escaped(t)}"\n',
    lambda t: json.dumps({"env": {"GCP_KEY": t}}),
    lambda t: f'"config": "{_escaped(_escaped(t))}"',
    lambda t: f"creds = json.loads('{_escaped(t)}')\n",
]


@_SETTINGS
@given(service_accounts(), st.sampled_from(["compact", "spaced", "pretty"]), st.sampled_from(_FILE_CARRIERS))
def test_service_account_key_never_reaches_a_vendor(
    clf: Classifier, case: tuple[dict[str, str], str], style: str, carrier: Callable[[str], str]
) -> None:
    """Neither the key's material nor the account's mailbox is left in what a vendor receives."""
    fields, body = case
    if style == "pretty":
        obj = json.dumps(fields, indent=2)
    else:
        obj = json.dumps(fields, separators=(",", ":") if style == "compact" else (", ", ": "))
    out = stripped_text(clf, carrier(obj))
    assert all(body[i : i + 16] not in out for i in range(0, len(body) - 16, 16)), out
    assert fields["client_email"] not in out and fields["client_email"].replace("@", "%40") not in out, out


@_SETTINGS
@given(authorized_users(), st.sampled_from(_FILE_CARRIERS))
def test_application_default_credentials_never_reach_a_vendor(
    clf: Classifier, case: tuple[str, str, str], carrier: Callable[[str], str]
) -> None:
    """Neither the client secret nor any part of the refresh token is left for a vendor."""
    adc, secret, refresh = case
    out = stripped_text(clf, carrier(adc))
    assert secret not in out and secret[-12:] not in out, out
    assert all(refresh[i : i + 12] not in out for i in range(4, len(refresh) - 12, 12)), out


def _key_value_span(text: str) -> tuple[int, int]:
    """The private key's value in ``text``: from its armour to the END line's last dash."""
    s = text.index("-----BEGIN PRIVATE KEY-----")
    return s, text.index("PRIVATE KEY-----", text.index("END", s)) + len("PRIVATE KEY-----")


@_SETTINGS
@given(service_accounts(), st.sampled_from(["compact", "spaced", "pretty"]), st.sampled_from(_FILE_CARRIERS))
def test_service_account_key_field_is_found_with_its_account(
    clf: Classifier, case: tuple[dict[str, str], str], style: str, carrier: Callable[[str], str]
) -> None:
    """The key's value is covered, and a finding reaches from it over the fields between to one
    of the account's fields (its type, id, mailbox or certificate URLs), in any order."""
    fields, _ = case
    if style == "pretty":
        obj = json.dumps(fields, indent=2)
    else:
        obj = json.dumps(fields, separators=(",", ":") if style == "compact" else (", ", ": "))
    text = carrier(obj)
    spans = secret_spans(clf, text)
    s, e = _key_value_span(text)
    assert covered(spans, s, e), text
    accounts = (
        "service_account",
        "private_key_id",
        "client_email",
        "auth_provider_x509_cert_url",
        "client_x509_cert_url",
    )
    key_at = text.index("private_key\\" if "private_key\\" in text else 'private_key"')
    # the finding pairs the key with an account field before or after it (whichever the search
    # meets first), over the fields between
    assert any(
        covered(spans, min(at, key_at), max(at + len(a), key_at)) for a in accounts if (at := text.find(a)) >= 0
    ), text


_JUNK = st.from_regex(r"[A-Za-z0-9]{0,8}", fullmatch=True)


@_SETTINGS
@given(
    _JUNK,
    st.sampled_from(["auth_provider_x509_cert_url", "client_email", "private_key_id", "service_account"]),
    _JUNK,
    st.sampled_from(["", "RSA "]),
    _rnd,
    st.booleans(),
    st.sampled_from(["{t}", "x\n{t}\ny", '{{"value": "{t}"}}']),
)
def test_credential_file_fragments_are_found_whole(
    clf: Classifier,
    before: str,
    account: str,
    gap: str,
    kind: str,
    rnd: random.Random,
    key_first: bool,
    carrier: str,
) -> None:
    """Fragments of a key file, an account field's name and the key field with junk between and
    around them (as scanners' rules describe them, the braces lost), are one finding."""
    body = base64.b64encode(rnd.randbytes(rnd.randint(6, 40))).decode().rstrip("=")
    key = f'"private_key": "-----BEGIN {kind}PRIVATE KEY-----{body}'
    frag = f"{before}{key}{gap}{account}" if key_first else f"{before}{account}{gap}{key}"
    assume(not is_placeholder(body, min_len=1))
    text = carrier.format(t=frag)
    s = text.index(frag)
    assert covered(secret_spans(clf, text), s, s + len(frag)), text


@_SETTINGS
@given(_JUNK, _rnd, _rnd, _JUNK, st.booleans())
def test_authorized_user_fragments_are_found_whole(
    clf: Classifier, before: str, r1: random.Random, r2: random.Random, after: str, secret_first: bool
) -> None:
    secret = "".join(r1.choice(_URL) for _ in range(r1.randint(3, 30)))
    refresh = "1//0" + "".join(r2.choice(_URL) for _ in range(r2.randint(3, 60)))
    assume(not is_placeholder(secret, min_len=3))
    first, second = (f'"client_secret": "{secret}"', f'"refresh_token":"{refresh}"')
    frag = f"{before}{first}, {second}{after}" if secret_first else f"{before}{second}x{first}{after}"
    text = f"creds: {frag}\n"
    s = text.index(frag)
    assert covered(secret_spans(clf, text), s, s + len(frag)), text


_TEMPLATE_KEYS = ["PRIVATE_KEY", "...", "<your-private-key>", "YOUR_PRIVATE_KEY_HERE", "${PRIVATE_KEY}", "xxxxxxxx"]


@_SETTINGS
@given(service_accounts(), st.sampled_from(_TEMPLATE_KEYS), st.sampled_from(_FILE_CARRIERS))
def test_service_account_template_is_no_secret(
    clf: Classifier, case: tuple[dict[str, str], str], template: str, carrier: Callable[[str], str]
) -> None:
    """Documentation's key file, with a template where the key goes, holds no secret."""
    fields, _ = case
    fields = {**fields, "private_key": f"-----BEGIN PRIVATE KEY-----\n{template}\n-----END PRIVATE KEY-----\n"}
    fields.pop("private_key_id", None)  # a hex id alone is no secret either way; keep the check on the key
    text = carrier(json.dumps(fields))
    assert not secret_spans(clf, text), text


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


@_SETTINGS
@given(rnd=_rnd, zeros=st.floats(0.7, 0.95), size=st.integers(600, 3000))
def test_a_sparse_binary_file_in_base64_holds_no_token(
    clf: Classifier, rnd: random.Random, zeros: float, size: int
) -> None:
    """A file embedded as base64 lines (a font in Pillow's ``ImageFont.py``) is mostly zero bytes:
    runs of "A" long enough for Twitter's 21-"A" prefix, followed by more of the same. Only a
    token's random tail makes a token."""
    raw = bytes(0 if rnd.random() < zeros else rnd.randrange(256) for _ in range(size))
    encoded = base64.b64encode(raw).decode("ascii")
    text = "_data = b'''\n" + "\n".join(encoded[i : i + 76] for i in range(0, len(encoded), 76)) + "\n'''\n"
    assert not secret_spans(clf, text)
    token = "A" * 21 + "".join(rnd.choice(_URL[:62]) for _ in range(80))
    # four X of one case read as a mask, by design (one random tail in about 200,000); mixed
    # case ("RXXXx", a draw that failed here) is no mask
    token = token.replace("XXXX", "XXX7").replace("xxxx", "xxx7")
    line = f"TWITTER_BEARER={token}\n"
    assert covered(secret_spans(clf, line), line.index(token), line.index(token) + len(token)), line


@pytest.mark.parametrize(
    "line",
    [
        # lines of sparse files the property drew, whose zeros thin out after Square's "EAAA"
        "AADIMAAAvAA/EAAAAM4AGgAAAABd1AAAiQAAMgAAAAAOAI41AFi54g==",
        "QAAAAAAAAAAAAAEAAAAAAAACv0wBKAO0A89HNAADAEgAAAPycAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "AAAAAAAAAAAA/EAAAAHYAxwD9AD4aAK4AAH8AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
    ],
)
def test_a_sparse_line_whose_zeros_thin_out_holds_no_token(clf: Classifier, line: str) -> None:
    text = "_data = b'''\n" + line + "\n'''\n"
    assert not secret_spans(clf, text)


def test_a_twitter_bearer_token_with_its_second_run_of_zeros_is_found(clf: Classifier) -> None:
    """Twitter's app-only bearer tokens encode an app id with zero bytes after their 21 "A"s
    (``…AAAMLheAAAAAAA0%2B…``): a run of "A"s in the tail, far under a third of it."""
    token = "A" * 21 + "MLheAAAAAAA0%2BuSeid%2BULvsea4JtiGRiSDSJSI%3DEUifiRBkKG5E2XzMDjRfl76ZC9Ub0wnz4XsNiRVBChTYbJcE3F"
    line = f"TWITTER_BEARER={token}\n"
    assert covered(secret_spans(clf, line), line.index(token), line.index(token) + len(token)), line
