"""Assigned values that are code or names, not credentials, in shapes the assignment rules of
``assignments`` do not already refuse; each seen in real packages' sources (bench/outside.py).

* text with white space around it (an NLP token's ``token_str=' happiness'``): a token or key
  has none, so this holds for every key but a password's;
* a name made of words that says what it names (``"X-Xet-Access-Token"``,
  ``"hf_oauth__refresh_token"``), again not for a password's key;
* the rest of a URL after its scheme (``credential.https://host.helper=store``), and a call,
  quoted or not (``token: `get_token()` may refresh``);
* unquoted code the other rules miss: shifts, powers and bit operations (``Password = 1 << 13``),
  type annotations and numpydoc types (``token_type: bool=False``, ``include_password: bool,
  default True``), class names that end in what they are (``private_key: Ed25519PrivateKey``).
"""

from __future__ import annotations

import re

__all__ = ["names_or_code"]

_PART = re.compile(r"[-_.]+")
_CREDENTIAL_WORDS = frozenset(
    {"token", "key", "secret", "password", "passwd", "auth", "credential", "credentials", "apikey", "bearer", "jwt"}
)
# a call, quoted or not (a comment's ``token: `get_token()` may refresh``)
_CALL = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*\([^()]*\)$")
_OPERATOR = re.compile(r"\s(?:<<|>>|\*\*|&|\^|//)\s")
_TYPE = re.compile(
    r"^(?:bool|int|str|float|bytes|bytearray|dict|list|tuple|set|frozenset|None|Optional|Union|Any|Callable"
    r"|Sequence|Mapping|Iterable|Literal)\b\s*(?:[=,|\[]|or\b|$)"
)
_CLASS_NAME = re.compile(r"^(?:[A-Z][a-z0-9]+|[A-Z]{2,}(?=[A-Z][a-z]))+(?:Key|Token|Secret|Password|Credentials?)$")


def names_or_code(value: str, strong: bool, quoted: bool) -> bool:
    """Whether ``value`` (assigned to a password's key when ``strong``; inside quotes when
    ``quoted``) is code or a name rather than a credential."""
    if value.startswith("//") or _CALL.match(value):
        return True
    if not strong:
        if value.strip() and value != value.strip():
            return True
        parts = [p for p in _PART.split(value) if p]
        if len(parts) >= 2 and all(p.isalpha() for p in parts) and any(p.lower() in _CREDENTIAL_WORDS for p in parts):
            return True
    if quoted:
        return False
    return bool(_OPERATOR.search(value) or _TYPE.match(value) or _CLASS_NAME.match(value))
