"""Google credential files, found by the fields such a file has, not as valid JSON.

A service-account key (``"private_key": "-----BEGIN PRIVATE KEY-----…"`` beside
``"private_key_id"``, ``client_email``, ``auth_provider_x509_cert_url`` …) and application default
credentials (``client_secret`` with a ``refresh_token``) leak in shapes no JSON parser reads:
escaped into a string (``GOOGLE_CREDENTIALS="{\\"type\\": \\"service_account\\", …}"``, escaped
again in a JSON of JSON), cut off, edited by hand, without their braces. So the run from the key
field to the nearest account field, or from the secret to the refresh token, with the fields
between, is one finding, whatever the quoting: the key's id and the account name the credential
the key block is useless without. The key block, the assigned secrets and the mailbox are also
found on their own (``keys``, ``assignments``, ``contact``).

Linear by construction: what lies between two fields holds no quote and no brace (a field's own
quotes bound it), and the fields between the secret and the refresh token are taken lazily, so no
search runs on to a distant brace. A first version searched from each field to the object's
closing brace: quadratic on one line of repeated fields (1 MB: 20 s of CPU, failing closed);
``tests/tiers/test_linear_time.py`` holds both shapes. A template (``"private_key":
"-----BEGIN PRIVATE KEY-----\\nPRIVATE_KEY\\n…"``, ``"client_secret": "<your-secret>"``) is none.
"""

from __future__ import annotations

import re

from presidio_analyzer import Pattern

from .._base import TiersPatternRecognizer
from ._code_values import names_its_key
from ._values import is_placeholder

__all__ = ["GoogleCredentialFileRecognizer"]

# a quote, escaped as a string inside a string inside a string at most
_Q = r'\\{0,3}"'
# blanks around a field's colon, or line breaks written as escapes (pretty-printed, then escaped)
_COLON = r"(?:\s|\\{1,3}[nrt])*:(?:\s|\\{1,3}[nrt])*"
# between two fields: commas, blanks, escapes, a draw's junk; never a quote or a brace
_GAP = r'[^"{}]*?'
# the word a run of fields starts or ends in (a fragment's cut, a carrier's letters)
_WORD = r'[^\s"{}]*'
_KEY_FIELD = _Q + "private_key" + _Q + _COLON + _Q + r'-----BEGIN[ A-Z0-9_-]{0,40}PRIVATE KEY-----[^"\n]*"?'
# the fields only a service-account key file has beside its key, with their values
_ACCOUNT_FIELD = (
    r'(?:\\{0,3}")?(?:(?:auth_provider_x509_cert_url|client_x509_cert_url|client_email|private_key_id)(?:'
    + _Q
    + _COLON
    + r'\\{0,3}"[^"\n]*")?|service_account(?:\\{0,3}")?)'
)
_SECRET_FIELD = _Q + "client_secret" + _Q + _COLON + _Q + r'[^"\n]+"'
_REFRESH_FIELD = _Q + "refresh_token" + _Q + _COLON + _Q + r'[^"\n]+"'
# any other field of the object (``"quota_project_id": "…"``, ``"type": "authorized_user"``)
_FIELD = _Q + r"[A-Za-z_][A-Za-z0-9_]*" + _Q + _COLON + r'(?:\\{0,3}"[^"\n]*"|[A-Za-z0-9_.-]+)'
_BETWEEN = "(?:" + _GAP + _FIELD + ")*?" + _GAP

_SERVICE_ACCOUNT = f"{_WORD}(?:{_ACCOUNT_FIELD}{_BETWEEN}{_KEY_FIELD}|{_KEY_FIELD}{_BETWEEN}{_ACCOUNT_FIELD}){_WORD}"
_AUTHORIZED_USER = (
    f"{_WORD}(?:{_SECRET_FIELD}{_BETWEEN}{_REFRESH_FIELD}|{_REFRESH_FIELD}{_BETWEEN}{_SECRET_FIELD}){_WORD}"
)

# what a private key's value holds after its header, up to the END line or the value's quote
_KEY_BODY = re.compile(r"PRIVATE KEY-----((?:[^-\"]|-(?!----))*)")
_SECRET_VALUES = re.compile(r'(client_secret|refresh_token)\\{0,3}"' + _COLON + r'\\{0,3}"([^"\n]+)"')
_ESCAPES = re.compile(r"\\+[nrt]|\\+(?=[/\"\\])|\\+$|\s")


class GoogleCredentialFileRecognizer(TiersPatternRecognizer):
    """A Google service-account key's fields, or application default credentials' secret and
    refresh token, as one finding."""

    ENTITY = "SECRET"
    PATTERNS = [
        Pattern("gcp_service_account", _SERVICE_ACCOUNT, 1.0),
        Pattern("gcp_authorized_user", _AUTHORIZED_USER, 1.0),
    ]

    def invalidate_result(self, pattern_text: str) -> bool:
        if "private_key" in pattern_text and (body := _KEY_BODY.search(pattern_text)) is not None:
            return is_placeholder(_ESCAPES.sub("", body.group(1)), min_len=1)
        # the two fields together say what the file is: only templates are none, a value that
        # names its own key among them (``"refresh_token": "REFRESH_TOKEN"``)
        values = [(k, _ESCAPES.sub("", v)) for k, v in _SECRET_VALUES.findall(pattern_text)]
        return all(is_placeholder(v, min_len=3) or names_its_key(v, k) for k, v in values)
