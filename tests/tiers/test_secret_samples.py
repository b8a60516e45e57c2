"""Credential-shaped values that are the same for everyone or are code, from real packages'
sources (bench/outside.py: huggingface_hub, PyJWT, pypdf, lark, fsspec), and the credentials next
to them that must still be found: published constants and sample JWTs (``_samples``),
placeholders written as one run of template words (``newsecret``), names and code assigned to
credential keys (``_code_values``), and values that once took exponential time to judge."""

from __future__ import annotations

import base64
import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tiers import Classifier
from tiers.recognizers.secrets._samples import compound_of, is_sample_jwt
from tiers.recognizers.secrets.assignments import _CAMEL_NAME
from tiers.recognizers.secrets._values import is_placeholder, looks_random

from .conftest import content


def _segment(obj: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode()).decode().rstrip("=")


def _jwt(header: object, payload: object, signature: str) -> str:
    return f"{_segment(header)}.{_segment(payload)}.{signature}"


JWT_IO = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
SIGNATURE = "Vq3mX9pL2rT8sK4wZ7yB1nC6dF0gH5jQ"


def secrets(clf: Classifier, text: str) -> list[str]:
    d = clf.classify(content(text))
    assert not d.failed_closed, d.reasons
    return [text[f.start : f.end] for f in d.findings if f.entity_type == "SECRET"]


NEGATIVES = [
    # NLP tokens, header names and names of tokens assigned to token keys
    "FillMaskOutputElement(score=0.06, token=11098, token_str=' happiness', sequence='The goal of life is happiness.')",
    'HUGGINGFACE_HEADER_X_XET_ACCESS_TOKEN = "X-Xet-Access-Token"',
    '        "refresh_token": "hf_oauth__refresh_token",',
    # the rest of a URL, code and types after a credential key
    "#       Example: `credential.https://huggingface.co.helper=store`",
    "        Password = 1 << 13",
    "        private_key: Ed25519PrivateKey | Ed448PrivateKey",
    "                             token_type_match_fallback: bool=False,",
    "        include_password: bool, default True",
    "    # cached token: `get_token()` may refresh an OAuth token (network call + file writes), which",
    # placeholders: run-together template words, URL grammars, documentation's org/repo
    '        "hf webhooks update abc123 --secret newsecret",',
    "DB_PASSWORD=mysecretpassword and API_TOKEN=yourapitoken",
    '            "git://[path-to-repo[:]][ref@]path/to/file" (but the actual',
    "    - 'github://org:repo@sha/precip/catalog.yml', where the sha is also included",
    # code paths through modules named with numbers, type names, lambdas, a key's own name, a
    # regex, hexspeak (cryptography, polyfactory, urllib3, fastapi: bench/outside.py, fifth group)
    "        private_key: x25519.X25519PrivateKey,",
    "decode_dss_signature = asn1.decode_dss_signature",
    "MLKEM1024P384PrivateKey = rust_openssl.hpke.MLKEM1024P384PrivateKey",
    "        private_key: PKCS7PrivateKeyTypes,",
    "        key, (ed25519.Ed25519PrivateKey, ed25519.Ed25519PublicKey)",
    "            SecretBytes: lambda: create_random_bytes(cls.__random__),",
    '    AttributeOID.CHALLENGE_PASSWORD: "challengePassword",',
    '    ExtensionOID.PRIVATE_KEY_USAGE_PERIOD: "privateKeyUsagePeriod",',
    '    SignatureAlgorithmOID.ECDSA_WITH_SHA1: "ecdsa-with-SHA1",',
    '    SignatureAlgorithmOID.DSA_WITH_SHA1: "dsa-with-sha1",',
    '    SignatureAlgorithmOID.RSA_WITH_SHA1: "sha1WithRSAEncryption",',
    '_HEX_PAT = "[0-9A-Fa-f]{1,4}"',
    "    Authorization: Bearer deadbeef12346",
    # published constants and sample JWTs
    '    "Signature: 8a477f597d28d172789f06886806bc55\\n"',
    '        ...     verify_token="eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9...",',
    f"Authorization: Bearer {JWT_IO}",
    f"token = {_jwt({'alg': 'HS256', 'typ': 'JWT'}, {'sub': '42', 'name': 'Jane Doe'}, SIGNATURE)}",
    f"unsigned {_jwt({'alg': 'none'}, {'sub': '42', 'scope': 'read'}, '')}",
    # alphabets, and the two values that took exponential time to judge (a regression is a
    # test that does not finish within the suite's timeout)
    '_UNRESERVED_PAT = r"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._\\-~"',
    "token = " + "a" * 60 + "0.b",
    # a grammar's character set (h11's RFC 7230 tchar), repeated or counted
    'token = r"[-!#$%&\'*+.^_`|~0-9a-zA-Z]+"',
    'api_key = "[A-Za-z0-9_-]{32}"\nSECRET_KEY = "^[a-f0-9]+$"',
]

# (text, value that must be found whole)
POSITIVES = [
    ('password = "sunshine"', "sunshine"),  # a word, but no template word: a (weak) password
    ('password = "new-secret-9Xq2"', "new-secret-9Xq2"),
    ('DB_PASSWORD=" s3cr3t-Xq9 "\n', " s3cr3t-Xq9 "),
    ('api_key = "ABCDEFGHq8Zr3LmN0pXv"', "ABCDEFGHq8Zr3LmN0pXv"),
    ("DATABASE_URL=postgresql://app:S3cr3tPw@/appdb?host=/var/run/postgresql", None),
    (
        "jwt "
        + _jwt(
            {"alg": "HS256", "typ": "JWT"}, {"sub": "8f2c91d0", "scope": "orders:write", "exp": 1798761600}, SIGNATURE
        ),
        None,
    ),
    ("unsigned " + _jwt({"alg": "none"}, {"sub": "42", "email": "maria.kovac@corp.de"}, ""), None),
    # beside the code shapes above: random values after the same keys and module paths
    ("private_key: x25519.K8f3Lq9Zr2Vb7Nw4", "x25519.K8f3Lq9Zr2Vb7Nw4"),
    ('password = "challengePassword"', "challengePassword"),
    ('AttributeOID.CHALLENGE_PASSWORD: "challenge-Xq9z-2024"', "challenge-Xq9z-2024"),
    ('_HEX_PAT = "a3F9kQ2zL8xV1nB7"', "a3F9kQ2zL8xV1nB7"),
    ("Authorization: Bearer deadbeefa8f93c1e77d2", "deadbeefa8f93c1e77d2"),
    ("signature: sha1WithRSAEncryption9Xq2Lm", "sha1WithRSAEncryption9Xq2Lm"),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", None),
    # a token that holds brackets and ranges, not one character class
    ('API_TOKEN = "[a-z0-9]Xk9#mQ2vL7pRt"', "[a-z0-9]Xk9#mQ2vL7pRt"),
]


@pytest.mark.parametrize("text", NEGATIVES, ids=range(len(NEGATIVES)))
def test_no_secret(clf: Classifier, text: str) -> None:
    """Shapes of real code and documentation that hold no credential."""
    assert secrets(clf, text) == []


@pytest.mark.parametrize(("text", "value"), POSITIVES, ids=range(len(POSITIVES)))
def test_still_a_secret(clf: Classifier, text: str, value: str | None) -> None:
    """What the rules above must not cost: a real password, token or signed JWT next to them is
    found (whole, where ``value`` says what it is; the whole token or URL otherwise)."""
    found = secrets(clf, text)
    if value is None:
        value = text.split(" ", 1)[1] if text.startswith(("jwt ", "unsigned ")) else text.split("=", 1)[1]
    assert value in found, found


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("newsecret", True),
        ("yourapikey", True),
        ("testpassword", True),
        ("mytoken", True),
        ("secret", False),  # one word: _EXACT and the word list judge it, not the compound rule
        ("sunshine", False),
        ("xqkzvbtw", False),
        ("isatobe", False),  # short words do not spell an arbitrary string
    ],
)
def test_compound_of_template_words(word: str, expected: bool) -> None:
    words = {"new", "secret", "your", "api", "key", "test", "password", "my", "token", "is", "a", "to", "be"}
    assert compound_of(word, words) is expected


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    payload=st.dictionaries(
        st.sampled_from(["sub", "scope", "exp", "aud", "iss", "role"]),
        st.one_of(st.integers(0, 2**31), st.text("abcdefgh0123456789:-", min_size=1, max_size=12)),
        min_size=1,
    ),
    signature=st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-", min_size=16, max_size=86),
)
def test_signed_token_without_sample_claims_is_a_secret(payload: dict[str, object], signature: str) -> None:
    """A signed JWT is a sample only by jwt.io's signature or the samples' claims: any other
    payload with any other signature is a credential."""
    token = _jwt({"alg": "HS256", "typ": "JWT"}, payload, signature)
    assert not is_sample_jwt(token)
    assert not is_sample_jwt(_jwt({"alg": "none"}, {**payload, "email": "ana@corp.de"}, ""))
    assert is_sample_jwt(_jwt({"alg": "HS256"}, {**payload, "name": "John Doe"}, signature))


def test_header_alone_is_a_placeholder() -> None:
    """A JWT header with the rest elided is shown in documentation; a header with a payload
    segment after it is not "a header alone"."""
    header = _segment({"alg": "RS256", "typ": "JWT", "kid": "k1"})
    assert is_placeholder(header + "...")
    assert is_placeholder(header + "…")
    assert not is_placeholder(header + "." + _segment({"sub": "8f2c91d0"}) + "." + SIGNATURE)


_TOKEN_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def _tokens(chars: str) -> st.SearchStrategy[str]:
    """Tokens as a generator makes them: each character drawn at random. (Hypothesis's own text
    shrinks towards runs and words, "Aaa00000112BCDbc", which read as identifiers, not tokens.)"""
    return st.builds(
        lambda rnd, n: "".join(rnd.choice(chars) for _ in range(n)),
        st.integers(0, 2**32).map(random.Random),
        st.integers(16, 40),
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    token=_tokens(_TOKEN_CHARS).filter(
        lambda t: (
            any(c.isdigit() for c in t)
            and any(c.isupper() for c in t)
            and any(c.islower() for c in t)
            # a mask (``00000000000000Aa``: ten zeros) or a run of one character with two others
            # in it (``0000000A0000000b``: hypothesis shrinks towards them) is no machine-made value
            and not is_placeholder(t)
            and looks_random(t)
            # a value shaped as a camel-case identifier reads as a name under a token's key
            # (``RYSUdjjbTG76Lktb``: about one random value of 16 to 24 characters in 500), by
            # design: telling them apart by whether their words can be said won back a third of
            # them and lost 70 of 12,348 installed packages' class names (``HttpsClient``)
            and not _CAMEL_NAME.match(t)
        )
    ),
    key=st.sampled_from(["private_key", "api_token", "CLIENT_SECRET", "AttributeOID.CHALLENGE_PASSWORD"]),
    carrier=st.sampled_from(['{k} = "{v}"', "{k}: {v}", "{k}={v}", "    {k}: x25519.{v},"]),
)
def test_random_values_stay_secrets_beside_code_rules(clf: Classifier, token: str, key: str, carrier: str) -> None:
    """The code-path, type-name, own-name and regex rules never take a machine-made value: any
    random token after a credential key is found, also behind a module named with a number."""
    text = carrier.format(k=key, v=token)
    found = secrets(clf, text)
    want = f"x25519.{token}" if "x25519." in carrier else token
    assert want in found, (text, found)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    token=_tokens(_TOKEN_CHARS + "[]-").filter(
        lambda t: (
            any(c.isdigit() for c in t)
            and any(c.isupper() for c in t)
            and any(c.islower() for c in t)
            and not is_placeholder(t)  # a mask (``00000000000000Aa``) is no machine-made value,
            and looks_random(t)  # nor a run with two other characters in it (``0000000A0000000b``)
            # one bracket expression from end to end is a character set by shape, whatever is in it
            and not (t.startswith("[") and t.endswith("]"))
            # a camel-case identifier's shape reads as a name (see the property above)
            and not _CAMEL_NAME.match(t)
        )
    ),
    key=st.sampled_from(["API_TOKEN", "client_secret", "password"]),
    grammar_first=st.booleans(),
)
def test_random_values_stay_secrets_beside_character_classes(
    clf: Classifier, token: str, key: str, grammar_first: bool
) -> None:
    """A grammar's character set after ``token =`` is no secret; any random value (brackets and
    ranges in it too) after a credential key in the same text is found whole."""
    grammar = 'token = r"[-!#$%&\'*+.^_`|~0-9a-zA-Z]+"'
    value = f'{key} = "{token}"'
    text = f"{grammar}\n{value}" if grammar_first else f"{value}\n{grammar}"
    assert secrets(clf, text) == [token], text
