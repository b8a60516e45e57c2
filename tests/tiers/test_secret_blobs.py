"""Property tests for key blocks found by their structure rather than as valid PEM (the third
outside round): key blocks whose line breaks became escapes or markup; templates, prose and code
between the armour are none. (Google credential files found whole by their fields were taken out
again: their pattern was quadratic on one line of repeated fields, see tests/tiers/test_linear_time.py.)"""

from __future__ import annotations

import base64
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tiers import Classifier

from .test_secrets import covered, secret_spans, stripped_text

_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
_URL = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
_name = st.from_regex(r"[a-z][a-z0-9-]{4,20}", fullmatch=True)
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
