"""Google credential files pasted whole, found by the fields such a file has, not by valid JSON.

A service-account key (``"type": "service_account"``, ``"private_key": "-----BEGIN PRIVATE
KEY-----…"``, ``client_email``, ``auth_provider_x509_cert_url`` …) and application default
credentials (``client_secret`` with a ``refresh_token``) are each one credential: the key or the
secret is useless without the account they name, and the account names the customer's project,
so the whole object is reported, as a connection string is (``connection_strings``). Such files
leak in shapes no JSON parser reads: escaped into a string (``GOOGLE_CREDENTIALS="{\\"type\\":
\\"service_account\\", …}"``, ``\\n`` inside the key, escaped again in a JSON of JSON), cut off,
or edited by hand, or without their braces (a fragment of one); so an object is read as the
text that holds the fields, the fields' quotes escaped to any depth, from its ``{`` to its ``}``
where it has them and otherwise the run of ``"name": value`` fields around them. The key block and the assigned secrets inside are also found on their own
(``keys.PrivateKeyRecognizer``, ``assignments``), so a cut-off file loses them all the same.

A template (``"private_key": "-----BEGIN PRIVATE KEY-----\\nPRIVATE_KEY\\n…"``,
``"client_secret": "<your-secret>"``) is none.
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
# the text of one object between its fields: no brace and no blank line, so that a search from
# one field ends at the object's brace (and never runs on through a document)
_BETWEEN = r"(?:\n?[^{}\n])*?\n?"
# the key's field, its value to the closing quote
_KEY_FIELD = _Q + "private_key" + _Q + _COLON + _Q + r'-----BEGIN[ A-Z0-9_-]{0,40}PRIVATE KEY-----[^"\n]*"?'
# the other fields only a service-account key file has, with their values
_ACCOUNT_FIELD = (
    r'(?:\\{0,3}")?(?:(?:auth_provider_x509_cert_url|client_x509_cert_url|client_email|private_key_id)(?:'
    + _Q
    + _COLON
    + r'\\{0,3}"[^"\n]*")?|service_account(?:\\{0,3}")?)'
)
_SECRET_FIELD = _Q + "client_secret" + _Q + _COLON + _Q + r'[^"\n]+"'
_REFRESH_FIELD = _Q + "refresh_token" + _Q + _COLON + _Q + r'[^"\n]+"'
# any other field of the object, and what separates fields
_FIELD = _Q + r"[A-Za-z_][A-Za-z0-9_]*" + _Q + _COLON + r'(?:\\{0,3}"[^"\n]*"|[A-Za-z0-9_.-]+)'
_COMMA = r"(?:\s|\\{1,3}[nrt])*,(?:\s|\\{1,3}[nrt])*"
# the whole object: from its ``{`` to its ``}``; or, where the braces were lost (a fragment, a
# cut), from the field run's first field to its last, and the words these start and end in
_OPEN = r"(?:\{" + _BETWEEN + r"|[^\s{}]*(?:" + _FIELD + _COMMA + r")*)"
_CLOSE = r"(?:" + _BETWEEN + r"\}|(?:" + _COMMA + _FIELD + r")*[^\s{}]*)"


def _object(first: str, second: str) -> str:
    return _OPEN + f"(?:{first}{_BETWEEN}{second}|{second}{_BETWEEN}{first})" + _CLOSE


_SERVICE_ACCOUNT = _object(_KEY_FIELD, _ACCOUNT_FIELD)
_AUTHORIZED_USER = _object(_SECRET_FIELD, _REFRESH_FIELD)

# what a private key's value holds after its header, up to the END line or the value's quote
_KEY_BODY = re.compile(r"PRIVATE KEY-----((?:[^-\"]|-(?!----))*)")
_SECRET_VALUES = re.compile(r'(client_secret|refresh_token)\\{0,3}"' + _COLON + r'\\{0,3}"([^"\n]+)"')
_ESCAPES = re.compile(r"\\+[nrt]|\\+(?=[/\"\\])|\\+$|\s")


class GoogleCredentialFileRecognizer(TiersPatternRecognizer):
    """A Google service-account key or application default credentials, the whole object."""

    ENTITY = "SECRET"
    PATTERNS = [
        Pattern("gcp_service_account", _SERVICE_ACCOUNT, 1.0),
        Pattern("gcp_authorized_user", _AUTHORIZED_USER, 1.0),
    ]

    def invalidate_result(self, pattern_text: str) -> bool:
        if "private_key" in pattern_text and (body := _KEY_BODY.search(pattern_text)) is not None:
            key = _ESCAPES.sub("", body.group(1))
            return is_placeholder(key, min_len=1)
        # the two fields together say what the file is: only templates are none, a value that
        # names its own key among them (``"refresh_token": "REFRESH_TOKEN"``)
        values = [(k, _ESCAPES.sub("", v)) for k, v in _SECRET_VALUES.findall(pattern_text)]
        return all(is_placeholder(v, min_len=3) or names_its_key(v, k) for k, v in values)
