"""Whether a key (variable, field, header, XML tag) names a credential, and how strongly.

Keys are split into words (``DB_PASSWORD``, ``dbPassword``, ``db.password``, ``db-password``)
and judged by those words, so that ``token`` counts in ``ACCESS_TOKEN`` but not in
``max_tokens``, ``tokenizer`` or ``token_type``, and ``pass`` not in ``bypass``.
"""

from __future__ import annotations

import re
from enum import IntEnum
from functools import lru_cache

__all__ = ["Strength", "blank_key_strength", "key_strength", "vocabulary_key"]


class Strength(IntEnum):
    """How much a key says about its value: ``STRONG`` (a password: any real value is one),
    ``MEDIUM`` (a token or key: a value of some length), ``WEAK`` (``auth``, ``sig``: only a
    random-looking value)."""

    NONE = 0
    WEAK = 1
    MEDIUM = 2
    STRONG = 3


_SPLIT = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_STRONG = frozenset(
    {
        "password",
        "passwd",
        "pwd",
        "passphrase",
        "passcode",
        "secret",
        "secrets",
        "credential",
        "credentials",
        "creds",
        "pswd",
        # redis.conf's glued directives: the server's and its primary's password
        "requirepass",
        "masterauth",
    }
)
# short words that name a password only as the key's last word (``DB_PASS``, not ``pass_context``;
# a Wi-Fi network's pre-shared key, ``WIFI_PSK``)
_STRONG_LAST = frozenset({"pass", "pw", "psw", "psk"})
_STRONG_ENDINGS = ("password", "passwd", "secret", "passphrase")
_KEY_QUALIFIERS = frozenset(
    {
        "api",
        "access",
        "secret",
        "private",
        "signing",
        "encryption",
        "master",
        "account",
        "shared",
        "client",
        "license",
        "app",
        "service",
        "auth",
        "subscription",
        "storage",
        "admin",
        "sas",
        "consumer",
        "webhook",
        "hmac",
        "ingest",
        "write",
        "deploy",
        "session",
        "root",
        "primary",
        "secondary",
    }
)
_MEDIUM = frozenset(
    {
        "token",
        "apikey",
        "accesskey",
        "secretkey",
        "privatekey",
        "authtoken",
        "accesstoken",
        "refreshtoken",
        "bearer",
        "jwt",
        "pat",
        "sessionkey",
        "appkey",
    }
)
# (a DSN or connection string without a password is an address: URLs with one are found as URLs)
_WEAK = frozenset({"auth", "sig", "signature", "sas"})
# The key names something about a credential, not the credential itself.
_ABOUT = frozenset(
    """type types url uri urls endpoint endpoints host name names file files filename path paths length
    len min max policy field fields label prompt placeholder expiry expires expiration exp ttl header
    headers env var vars ref source mode format count enabled enable disabled disable required regex
    pattern help message msg description desc hint dir location provider providers command cmd id ids
    limit limits size timeout version method strategy manager class module validator validation error
    errors input form widget visible show hidden generator fn func kind algorithm alg scheme scope
    scopes audience issuer store prefix suffix param params parameter index idx position pos start
    end offset usage budget rate cost price estimate counter rotation reset strength complexity rules
    requirements chars lifetime age created updated date time level list table column query text
    option options flag flags test tests spec schema model models entity request response client
    handler callback hook check checker verify verified valid is has get set use uses used
    needed should can will must allow allowed ok status state stats metric metrics log logs at algo
    """.split()
)


# a quantity about credentials (``MAX_TOKENS``, ``SECRETS_DIR_MAX_ENTRIES``, ``token_count``)
_QUANTITY = frozenset(
    {
        "max",
        "min",
        "num",
        "count",
        "limit",
        "size",
        "length",
        "len",
        "timeout",
        "ttl",
        "maximum",
        "minimum",
        "total",
        "number",
    }
)


_PARTS = re.compile(r"[^A-Za-z0-9]+")


@lru_cache(maxsize=4096)
def _words(key: str) -> tuple[str, ...]:
    # keys recur (a JSON file's every record has the same ones): split each once
    out: list[str] = []
    for part in _PARTS.split(key):
        out.extend(w.lower() for w in _SPLIT.findall(part))
    return tuple(out)


# a tokenizer's vocabulary entry: a word piece as text or as base64 (``"token_str": "#include"``,
# ``"token_bytes": "IOyasA=="``, 150,000 of them in one file). Such a key may still name a
# token's value in code (``token_str = "…"``): only a random-looking value counts under it
# (``WEAK``), as text only with a digit, as bytes only if it decodes to no piece of text
# (``assignments.accept_value``, ``_values.encodes_piece``).
_VOCABULARY_KEYS = (("token", "str"), ("token", "bytes"))


def vocabulary_key(key: str, form: str = "") -> bool:
    """Whether ``key`` is a tokenizer vocabulary's (``token_str``, ``tokenBytes``), of ``form``
    (``"str"``, ``"bytes"``) when one is given."""
    words = _words(key)
    return words in _VOCABULARY_KEYS and (not form or words[-1] == form)


@lru_cache(maxsize=4096)
def key_strength(key: str) -> Strength:
    """How strongly ``key`` says its value is a credential."""
    words = _words(key)
    if not words or words[-1] in _ABOUT or not _QUANTITY.isdisjoint(words):
        return Strength.NONE
    if words in _VOCABULARY_KEYS:
        return Strength.WEAK
    if words[0] in ("public", "publishable") and _STRONG.isdisjoint(words):
        return Strength.NONE  # public material by its name (``publicKeyToken``, ``public_key``)
    best = Strength.NONE
    for i, w in enumerate(words):
        if w in _STRONG or (w.endswith(_STRONG_ENDINGS) and w not in {"secretary"}):
            return Strength.STRONG
        if w in _STRONG_LAST and i == len(words) - 1:
            return Strength.STRONG
        if w in _MEDIUM or w.endswith(("token", "apikey")):
            best = max(best, Strength.MEDIUM)
        elif w == "key" and i > 0 and words[i - 1] in _KEY_QUALIFIERS:
            best = max(best, Strength.STRONG if words[i - 1] in {"secret", "private"} else Strength.MEDIUM)
        elif w in _WEAK:
            best = max(best, Strength.WEAK)
    return best


# a password's own words: written alone before a blank, still a password's name (SQL's
# ``PASSWORD 'x'``, redis.conf's ``requirepass x``)
_PASSWORD_NAMES = frozenset(
    {"password", "passwd", "pwd", "passphrase", "passcode", "pswd", "requirepass", "masterauth"}
)


def blank_key_strength(key: str) -> Strength:
    """How strongly ``key`` names a credential where only blanks, no "=" or ":", stand between it
    and its value: only a key whose last word is a credential's. One word alone there is prose
    more often than a key ("pass `x`", "the secret
    `HF_TOKEN`", "token 'a'"): "pass" is a verb, any other word but a password's own says no more
    than a weak key does (only a random-looking value counts)."""
    strength = key_strength(key)
    words = _words(key)
    if strength is Strength.NONE or not _names_a_credential_last(words):
        return Strength.NONE  # ``#define CREDENTIALS_TARGET "target"``, ``# password_encryption scram-…``
    if len(words) != 1 or words[0] in _PASSWORD_NAMES:
        return strength
    return Strength.NONE if words[0] in _STRONG_LAST else Strength.WEAK


def _names_a_credential_last(words: tuple[str, ...]) -> bool:
    """Whether the key's last word is a credential's (``API_KEY``, ``DB_PASSWORD``,
    ``adminToken``): without a separator, a key naming something about one says nothing."""
    last = words[-1]
    return (
        last in _STRONG
        or last in _STRONG_LAST
        or last in _MEDIUM
        or last in _WEAK
        or last in _PASSWORD_NAMES
        or last == "key"
        or last.endswith(_STRONG_ENDINGS + ("token", "apikey"))
    )
