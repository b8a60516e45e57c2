"""Values that look like credentials but are the same for everyone: published samples and
constants, sample JSON Web Tokens, and placeholders written as one run of template words.

Used by ``_values.is_placeholder`` (so by every secret recognizer) and by the JWT recognizer.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Collection
from functools import lru_cache

__all__ = ["compound_of", "is_published", "is_sample_jwt"]

# Printed in a specification for every reader to copy, so they authorise nothing and name nobody:
# the CACHEDIR.TAG signature (the MD5 of ".IsCacheDirectory", Bryan Ford's cache-directory spec)
# the signature of jwt.io's HS256 sample token (signed with "your-256-bit-secret"), and the PNG
# file signature as a string literal writes it (RFC 2083 3.1: ``pngSignature: bytes = b"…"``),
# without its last escaped newline, which the lookup drops as it does after a JWT.
_PUBLISHED = frozenset(
    {"8a477f597d28d172789f06886806bc55", "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c", "\\x89PNG\\r\\n\\x1a"}
)
# the claims of the samples in JWT documentation: jwt.io's token ("John Doe", issued at
# 1516239022) and the placeholder people of examples
_SAMPLE_CLAIMS = (("iat", 1516239022), ("name", "John Doe"), ("name", "Jane Doe"))
# header fields: a token of nothing but these has no payload that could authorise anything
_HEADER_FIELDS = frozenset({"alg", "typ", "kid", "cty", "x5t", "jku", "enc", "zip"})
# claims that carry a person: an unsigned token with one of them is still no value to pass on
_PERSONAL_CLAIMS = frozenset(
    """email name given_name family_name middle_name nickname preferred_username phone_number address
    birthdate upn unique_name""".split()
)
_ELLIPSIS = re.compile(r"(?:\.\.\.|…)$")
_B64URL = re.compile(r"^[A-Za-z0-9_-]+$")


def _segment_json(segment: str) -> object:
    """A base64url JWT segment decoded and read as JSON; None if it is neither."""
    if not segment or not _B64URL.match(segment):
        return None
    try:
        raw = base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))
        return json.loads(raw)
    except (binascii.Error, ValueError):
        return None


def _header_only(value: str) -> bool:
    """``eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9...``: a JWT's header alone (the shape shown in
    documentation, the rest elided), which is the same for countless tokens."""
    segment = _ELLIPSIS.sub("", value).rstrip(".")
    if "." in segment or not segment.startswith("eyJ"):
        return False
    header = _segment_json(segment)
    return isinstance(header, dict) and bool(header) and set(header) <= _HEADER_FIELDS


def is_published(value: str) -> bool:
    """A published constant, a JWT header on its own or a sample JWT (``\\n`` written after it,
    as in a string literal, aside), or an alphabet (``ABCDEFGHIJKLMNOPQRSTUVWXYZabc…``: the
    characters a code base allows, ten or more in order)."""
    v = value.strip().removesuffix("\\n")
    return v in _PUBLISHED or _header_only(v) or is_sample_jwt(v) or _alphabet(v)


def _alphabet(value: str) -> bool:
    run = 1
    for a, b in zip(value, value[1:], strict=False):
        run = run + 1 if ord(b) == ord(a) + 1 and a.isalnum() and b.isalnum() else 1
        if run >= 10:
            return True
    return False


def is_sample_jwt(token: str) -> bool:
    """A JWT from documentation, not one a server issued: jwt.io's sample or another with the
    samples' claims (``"name": "John Doe"``), or an unsigned one (``alg: none``, no signature:
    no server accepts it as proof of anything) that carries no personal claim."""
    parts = token.split(".")
    if len(parts) != 3 or not parts[0].startswith("eyJ"):
        return False
    if parts[2] in _PUBLISHED:
        return True
    header, payload = _segment_json(parts[0]), _segment_json(parts[1])
    if not isinstance(header, dict) or not isinstance(payload, dict):
        return False
    if any(payload.get(k) == v for k, v in _SAMPLE_CLAIMS):
        return True
    unsigned = str(header.get("alg", "")).lower() == "none" and not parts[2]
    return unsigned and _PERSONAL_CLAIMS.isdisjoint(payload)


def compound_of(word: str, words: Collection[str]) -> bool:
    """Whether a lower-case ``word`` is two or more of ``words`` written together
    (``newsecret``, ``yourapikey``, ``testpassword``): the template words of a placeholder run
    into one. Pieces have three letters or more, ``my`` aside, so that short words (``a``,
    ``is``, ``to``) cannot spell an arbitrary string."""
    return _compound(word, frozenset(words))


@lru_cache(maxsize=4096)
def _compound(word: str, words: frozenset[str]) -> bool:
    n = len(word)
    if n < 5 or n > 40:
        return False
    # ends[i]: word[:i] splits into pieces; counts pieces so that one whole word is not a compound
    ends: dict[int, int] = {0: 0}
    for i in range(n):
        if i not in ends:
            continue
        for j in range(i + 2, n + 1):
            piece = word[i:j]
            if piece in words and (len(piece) >= 3 or piece == "my"):
                ends[j] = max(ends.get(j, 0), ends[i] + 1)
    return ends.get(n, 0) >= 2
