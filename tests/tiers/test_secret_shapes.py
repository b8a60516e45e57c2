"""Property tests for the secret shapes of the second outside round: Azure-style connection
strings reported whole, signed JWTs whose payload is not JSON, optional groups in the token
notation, and short-prefix tokens (``tss_``, ``prf_``, ``s.``) told apart from names in code."""

from __future__ import annotations

import base64
import json
import random
import re
from collections.abc import Callable

import pytest
import re2
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tiers import Classifier
from tiers.recognizers.secrets import provider_formats
from tiers.recognizers.secrets.providers import ProviderFormat
from tiers.recognizers.secrets._shape import parse_shape
from tiers.recognizers.secrets._values import entropy, is_placeholder, joined_words, mixed_classes

from .secret_corpus import CARRIERS
from .test_secrets import covered, secret_spans, stripped_text

_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
_B64 = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/"
_URL = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
_NAME = st.from_regex(r"[a-z][a-z0-9-]{2,20}", fullmatch=True)
# a secret's random part: a digit and letters of both cases somewhere in it, as issued keys have,
# and no mask (hypothesis draws ``000…0Aa`` too)
_random = st.text(alphabet=_B64, min_size=32, max_size=88).filter(
    lambda k: (
        bool(re.search(r"[0-9]", k) and re.search(r"[a-z]", k) and re.search(r"[A-Z]", k)) and not is_placeholder(k)
    )
)

# quoted or plain carriers a connection string is written in (its value may hold ``=``, ``/``, ``+``)
_CONN_CARRIERS = [
    'conn = "{t}"\n',
    "AZURE_CONNECTION_STRING={t}\n",
    "servicebus:\n  connection: {t}\n",
    '{{"ConnectionStrings": {{"Bus": "{t}"}}}}',
    '<add name="bus" connectionString="{t}" />',
    "the string {t} was rotated",
]


@st.composite
def connection_strings(draw: st.DrawFn) -> tuple[str, str]:
    """(a connection string of one of Azure's documented layouts, its key)."""
    ns = draw(_NAME)
    key = draw(_random) + draw(st.sampled_from(["", "=", "=="]))
    layout = draw(st.sampled_from(["servicebus", "iothub", "storage", "cosmos", "signalr"]))
    if layout == "servicebus":
        pairs = [f"Endpoint=sb://{ns}.servicebus.windows.net/", "SharedAccessKeyName=RootManageSharedAccessKey"]
        pairs.append(f"SharedAccessKey={key}")
        if draw(st.booleans()):
            pairs.append(f"EntityPath={draw(_NAME)}")
    elif layout == "iothub":
        pairs = [f"HostName={ns}.azure-devices.net", "SharedAccessKeyName=iothubowner", f"SharedAccessKey={key}"]
    elif layout == "storage":
        pairs = ["DefaultEndpointsProtocol=https", f"AccountName={ns.replace('-', '')}", f"AccountKey={key}"]
        pairs.append("EndpointSuffix=core.windows.net")
    elif layout == "cosmos":
        pairs = [f"AccountEndpoint=https://{ns}.documents.azure.com:443/", f"AccountKey={key}"]
    else:
        pairs = [f"Endpoint=https://{ns}.service.signalr.net", f"AccessKey={key}", "Version=1.0"]
    return ";".join(pairs) + draw(st.sampled_from(["", ";"])), key


@_SETTINGS
@given(connection_strings(), st.sampled_from(_CONN_CARRIERS))
def test_generated_connection_string_is_stripped_whole(clf: Classifier, case: tuple[str, str], carrier: str) -> None:
    """The whole string is one credential (endpoint and key), in any carrier; nothing of it
    reaches the vendor."""
    conn, key = case
    text = carrier.format(t=conn)
    s = text.index(conn)
    assert covered(secret_spans(clf, text), s, s + len(conn)), text
    out = stripped_text(clf, text)
    assert key not in out and conn.split(";")[0] not in out, out


@_SETTINGS
@given(
    connection_strings(),
    st.sampled_from(["${SERVICEBUS_KEY}", "<your-key>", "{{ key }}", "xxxxxxxxxxxxxxxxxxxxxxxx", "changeme"]),
    st.sampled_from(_CONN_CARRIERS),
)
def test_connection_string_with_a_placeholder_key_is_no_secret(
    clf: Classifier, case: tuple[str, str], placeholder: str, carrier: str
) -> None:
    conn, key = case
    text = carrier.format(t=conn.replace(key, placeholder))
    assert not secret_spans(clf, text), text


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@_SETTINGS
@given(
    st.sampled_from(["HS256", "RS256", "EdDSA"]),
    st.binary(min_size=16, max_size=120).filter(lambda b: not b.startswith(b"{")),
    st.binary(min_size=32, max_size=64),
    st.sampled_from(CARRIERS),
)
def test_signed_jwt_with_a_payload_that_is_not_json_is_found_whole(
    clf: Classifier, alg: str, payload: bytes, signature: bytes, carrier: tuple[str, str]
) -> None:
    """RFC 7515 lets a JWS carry any bytes (API keys packed into one); the token is found whole."""
    token = ".".join([_b64url(json.dumps({"alg": alg}).encode()), _b64url(payload), _b64url(signature)])
    assume(len(_b64url(payload)) >= 16 and not any(is_placeholder(p) for p in token.split(".")[1:]))
    text = carrier[1].format(t=token)
    s = text.index(token)
    assert covered(secret_spans(clf, text), s, s + len(token)), text


@given(st.text(alphabet="abcdefghij-", min_size=1, max_size=6), st.booleans(), st.integers(0, 2**32))
def test_optional_group_matches_with_and_without(lit: str, present: bool, seed: int) -> None:
    """``(a|b)?`` in the token notation is an optional group, never a literal question mark."""
    assume(not lit.startswith("-") and "--" not in lit)
    shape = parse_shape(f"({lit})?zz_{{an:12}}")
    sample = shape.sample(seed)
    assert sample.startswith(f"{lit}zz_") and "?" not in sample
    token = sample if present else sample[len(lit) :]
    assert re2.fullmatch(shape.body, token), (shape.body, token)


_word = st.from_regex(r"[a-z]{3,9}", fullmatch=True) | st.sampled_from(["id", "of", "to", "by", "is"])
_code_names = st.builds(
    lambda words, style, count: (
        (words[0] + "".join(w.capitalize() for w in words[1:]) if style == "camel" else "_".join(words)) + count
    ),
    st.lists(_word, min_size=4, max_size=7),
    st.sampled_from(["camel", "snake"]),
    st.sampled_from(["", "", "2", "38"]),
)
_CODE_CARRIERS = ["x = {t}\n", "return {t}(self)\n", "value = '{t}'\n", "{t}.update(x)\n", "see {t} below"]


@_SETTINGS
@given(st.sampled_from(["tss_", "prf_", "prf_cli_", "s."]), _code_names, st.sampled_from(_CODE_CARRIERS))
def test_names_after_a_short_prefix_are_no_tokens(clf: Classifier, prefix: str, name: str, carrier: str) -> None:
    """``tss_handleRequestForUser``, ``s.getElementsByTagName``: code names, not tokens."""
    if prefix == "s.":
        name = name[:24]  # Vault's legacy length; a cut word is still a run of letters
    token = prefix + name
    assume(len(name) >= (24 if prefix == "s." else 20) and joined_words(token))
    text = carrier.format(t=token)
    s = text.index(token)
    assert not any(a < s + len(token) and b > s for a, b in secret_spans(clf, text)), text


@_SETTINGS
@given(
    st.sampled_from([("tss_", 20, _URL), ("prf_", 20, _URL), ("prf_cli_", 20, _URL), ("s.", 24, _B64[:62])]),
    st.data(),
    st.sampled_from(CARRIERS),
)
def test_short_prefix_tokens_are_found_whole(
    clf: Classifier, spec: tuple[str, int, str], data: st.DataObject, carrier: tuple[str, str]
) -> None:
    prefix, n, alphabet = spec
    size = n if prefix == "s." else data.draw(st.integers(n, 60))
    body = data.draw(st.text(alphabet=alphabet, min_size=size, max_size=size))
    token = prefix + body
    assume(not joined_words(token) and re.search(r"[0-9]", body) and re.search(r"[A-Za-z]", body))
    assume(len(set(body[-16:])) >= 4 and not re.search(r"(?i)xxxx|(.)\1{7}", body) and body[-1] not in "-_")
    assume(len(set(body)) >= 8)  # a drawn token, not "000001AAAAAA2AAAAAAA" (a shrunk run of one letter)
    text = carrier[1].format(t=token)
    s = text.index(token)
    assert covered(secret_spans(clf, text), s, s + len(token)), text


# tokens of formats whose prefix starts no name in code, drawn of letters only (a body without a
# digit is one draw in eight at twelve base62 characters): capitalised runs of letters parse as
# words joined as code joins them, yet only a prefix such as ``tss_`` or ``s.`` makes that a name
_DISTINCT_PREFIXES = [
    "FLWSECK_TEST",  # Flutterwave test keys, twelve characters after
    "rzp_test_",  # Razorpay, fourteen
    "sk_test_",  # Stripe
    "xoxr-",  # Slack refresh tokens
    "LTAI",  # Alibaba Cloud access key ids, twenty
    "dvc_server_",  # DevCycle
]
_letters_body = st.from_regex(r"(?:[A-Z][a-z]{2,4}){3,4}", fullmatch=True).filter(
    lambda b: len(b) >= 12 and len(set(b[-16:])) >= 4
)


@_SETTINGS
@given(st.sampled_from(_DISTINCT_PREFIXES), _letters_body, st.sampled_from(CARRIERS))
def test_letter_tokens_after_a_distinct_prefix_are_found(
    clf: Classifier, prefix: str, body: str, carrier: tuple[str, str]
) -> None:
    """Letters only are in each format's alphabet: a token without a digit is still a token."""
    if prefix == "LTAI":
        body = (body * 2)[:20]
    elif prefix == "rzp_test_":
        body = (body * 2)[:14]
    elif prefix == "FLWSECK_TEST":
        body = body[:12]
    token = prefix + body
    text = carrier[1].format(t=token)
    s = text.index(token)
    assert covered(secret_spans(clf, text), s, s + len(token)), text


@_SETTINGS
@given(
    st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", min_size=12, max_size=40).filter(
        lambda b: any(c.isupper() for c in b) and len(set(b[-16:])) >= 4 and not re.search(r"(?i)xxxx|(.)\1{3}", b)
    ),
    st.sampled_from(["", "3", "b3", "_v2"]),
    st.sampled_from(CARRIERS),
)
def test_lichess_tokens_with_capitals_are_found(
    clf: Classifier, letters: str, tail: str, carrier: tuple[str, str]
) -> None:
    """After ``lip_`` code writes snake-case names in lower case (``lip_sync_weight``): a body
    with a capital is a token, however its letters split (``lip_NsxyGhdnzoQTEDb3``)."""
    token = "lip_" + letters + tail
    assume(len(token) >= 20)
    text = carrier[1].format(t=token)
    s = text.index(token)
    assert covered(secret_spans(clf, text), s, s + len(token)), text


@_SETTINGS
@given(st.lists(st.from_regex(r"[a-z]{3,9}", fullmatch=True), min_size=3, max_size=6), st.sampled_from(_CODE_CARRIERS))
def test_snake_names_after_lip_are_no_tokens(clf: Classifier, words: list[str], carrier: str) -> None:
    token = "lip_" + "_".join(words)
    assume(len(token) >= 20)
    text = carrier.format(t=token)
    s = text.index(token)
    assert not any(a < s + len(token) and b > s for a, b in secret_spans(clf, text)), text


_PREFIXED = [
    f for f in provider_formats() if f.shape.parts[0][0] == "lit" and str(f.shape.parts[0][1]).lstrip("(")[:1].isalnum()
]


@_SETTINGS
@given(st.sampled_from(_PREFIXED), st.integers(0, 2**32), st.sampled_from("Qz7_"), st.sampled_from(CARRIERS))
def test_a_prefix_inside_a_word_starts_no_token(
    clf: Classifier, fmt: ProviderFormat, seed: int, before: str, carrier: tuple[str, str]
) -> None:
    """A format's prefix after a letter, digit or underscore is the tail of a longer name
    (``eyeBrowHvb.``, ``xghp_``): no token of that format starts there, with or without an
    alternation's parenthesis in the table's notation (``(hvs|hvb|hvr).``)."""
    token = fmt.shape.sample(seed=seed)
    text = carrier[1].format(t=before + token)
    s = text.index(before + token) + 1
    spans = secret_spans(clf, text)
    assert not any(a == s for a, _ in spans), (fmt.fmt, text, spans)


@_SETTINGS
@given(
    st.sampled_from(_PREFIXED),
    st.integers(0, 2**32),
    st.sampled_from(["\\n", "\\r\\n", "\\t", "\\u0022", "%0A", "%0D%0A", "%09", "%22"]),
    st.sampled_from(['"a{t}"', "body=line1{t}&x=1", "{t}", "'SLACK{t}'"]),
)
def test_a_token_after_an_escape_written_out_is_found(
    clf: Classifier, fmt: ProviderFormat, seed: int, escape: str, carrier: str
) -> None:
    """An escape written out (JSON's ``\\n``, ``\\u0022``, a form body's ``%0A``) ends the word
    before it, though its last character is a letter or a digit: a token right after it (the
    second line of a pasted AWS key file, a quoted value) is found whole."""
    token = fmt.shape.sample(seed=seed)
    assume(not re.search(r"(.)\1{3}|xxxx|0{10}", token, re.IGNORECASE) and len(set(token[-16:])) >= 4)
    assume(mixed_classes(token) >= 2 or (len(token) >= 30 and entropy(token) >= 4.0))
    text = carrier.format(t=escape + token)
    s = text.index(escape + token) + len(escape)
    assert covered(secret_spans(clf, text), s, s + len(token)), (fmt.fmt, text)


_PAIR_NAME = re.compile(r"(^|;)([A-Za-z]+)=")


@_SETTINGS
@given(connection_strings(), st.sampled_from([str.lower, str.upper]), st.sampled_from(_CONN_CARRIERS))
def test_connection_string_names_in_any_case_are_stripped_whole(
    clf: Classifier, case: tuple[str, str], spell: Callable[[str], str], carrier: str
) -> None:
    """The SDKs read the names without case (``endpoint=…;accesskey=…``): the whole string still."""
    conn, _key = case
    conn = _PAIR_NAME.sub(lambda m: m.group(1) + spell(m.group(2)) + "=", conn)
    text = carrier.format(t=conn)
    s = text.index(conn)
    assert covered(secret_spans(clf, text), s, s + len(conn)), text


@_SETTINGS
@given(connection_strings(), st.randoms(use_true_random=False), st.sampled_from(_CONN_CARRIERS))
def test_connection_string_pairs_in_any_order_are_stripped_whole(
    clf: Classifier, case: tuple[str, str], rnd: random.Random, carrier: str
) -> None:
    """The SDKs read the pairs in any order (``AccountName=…;AccountKey=…;DefaultEndpointsProtocol=…``,
    a key before its endpoint): the whole string, the account's name with it."""
    conn, key = case
    pairs = conn.rstrip(";").split(";")
    rnd.shuffle(pairs)
    conn = ";".join(pairs)
    text = carrier.format(t=conn)
    s = text.index(conn)
    assert covered(secret_spans(clf, text), s, s + len(conn)), text
    assert key not in stripped_text(clf, text)


# C names with a number after a word (``prf_hmac_sha256_expand_label``, ``tss_esys_context_v2``,
# ``prf_tls12_compute_master_secret``)
_numbered_word = st.builds(
    lambda w, n: w + n,
    _word | st.sampled_from(["v", "x", "sha", "tls", "md"]),
    st.sampled_from(["", "", "2", "12", "256", "509"]),
)


@_SETTINGS
@given(
    st.sampled_from(["tss_", "prf_", "prf_cli_"]),
    st.lists(_numbered_word, min_size=4, max_size=7),
    st.sampled_from(_CODE_CARRIERS),
)
def test_names_with_numbered_words_after_a_short_prefix_are_no_tokens(
    clf: Classifier, prefix: str, words: list[str], carrier: str
) -> None:
    token = prefix + "_".join(words)
    assume(len(token) - len(prefix) >= 20 and len(token) - len(prefix) <= 80 and any(c.isdigit() for c in token))
    text = carrier.format(t=token)
    s = text.index(token)
    assert not any(a < s + len(token) and b > s for a, b in secret_spans(clf, text)), text


# -- a mask is one character repeated, and a mask's share of a long value ---------------------------

_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


@settings(max_examples=200, deadline=None)
@given(
    body=st.text(alphabet=_B64, min_size=200, max_size=1200),
    run=st.sampled_from(["xxxx", "XXXX", "XXxx", "xXxXx", "xxxxx"]),
    at=st.floats(0, 1),
)
def test_a_chance_run_of_x_in_a_long_random_value_is_no_mask(body: str, run: str, at: float) -> None:
    """A random key body holds "xxxx" or "XXxx" by chance (base64 has both letters); it is still
    a value, not a mask (a service-account key drawn so was read as a template once)."""
    assume(mixed_classes(body) >= 3 and not is_placeholder(body))
    k = int(at * len(body))
    assert not is_placeholder(body[:k] + run + body[k:])


@pytest.mark.parametrize(
    "value",
    ["sk-proj-XXXXXXXXXXXXXXXXXXXX", "xxxx-xxxx-xxxx", "AKIA****************", "ghp_" + "x" * 36, "pass####word",
     "Zx9mQ2vLp" * 8 + "X" * 12],
)  # fmt: skip
def test_masks_stay_masks(value: str) -> None:
    assert is_placeholder(value)
