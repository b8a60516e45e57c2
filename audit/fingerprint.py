"""Keyed fingerprints of prompt text: answer "did we send this document?" without storing it.

The normal form: NFKC, invisible format/control characters dropped (ASCII tab, newline and
carriage return are whitespace, not controls), every run of whitespace (``str.isspace``) one
space, trimmed. The same document pasted with different line wrapping or a stray zero-width space
gives the same fingerprint, so the gateway and ``exposure match --document`` both use it.

It is computed on the UTF-8 bytes that are hashed, in a few linear passes of C code: megabyte
prompts are normalised on every request, and the Python-level ``" ".join(text.split())`` with a
per-character category test of the earlier version cost 14–20 ms/MB of plain text (and ten times
that on accented text). ``tests/audit/test_fingerprint_normal_form.py`` keeps that version as the
oracle this one must equal.
"""

from __future__ import annotations

import hmac
import unicodedata

import numpy as np
import re2

__all__ = ["fingerprint", "fingerprint_bytes", "normalize_for_fingerprint", "normalized_utf8"]


def _ranges(codepoints: list[int]) -> str:
    parts: list[str] = []
    i = 0
    while i < len(codepoints):
        j = i
        while j + 1 < len(codepoints) and codepoints[j + 1] == codepoints[j] + 1:
            j += 1
        lo, hi = codepoints[i], codepoints[j]
        parts.append(f"\\x{{{lo:x}}}" if lo == hi else f"\\x{{{lo:x}}}-\\x{{{hi:x}}}")
        i = j + 1
    return "[" + "".join(parts) + "]"


# Non-ASCII characters the normal form changes after NFKC: format and control characters (Cf, Cc)
# are dropped, whitespace other than U+0020 becomes a space. Every str.isspace character lies
# below U+3001 (a test checks it), so the table is built from the BMP's first part only — and
# Cf/Cc code points are listed by category over the planes where Unicode assigns them.
def _tables() -> tuple[tuple[str, ...], tuple[str, ...]]:
    drop = []
    for cp in [*range(0x80, 0x10000), *range(0x10000, 0x20000), *range(0xE0000, 0xE0080)]:
        if unicodedata.category(chr(cp)) in ("Cf", "Cc"):
            drop.append(chr(cp))
    space = tuple(chr(cp) for cp in range(0x80, 0x3001)
                  if chr(cp).isspace() and unicodedata.category(chr(cp)) not in ("Cf", "Cc"))  # fmt: skip
    return tuple(drop), space


_DROP, _SPACE = _tables()
_SPECIAL = re2.compile(_ranges(sorted(ord(c) for c in (*_DROP, *_SPACE))))  # a DFA: one scan, any size
_DROP_ALL = re2.compile(_ranges(sorted(ord(c) for c in _DROP)))
_ASCII_CONTROLS = bytes(c for c in [*range(0x20), 0x7F] if chr(c) not in "\t\n\r")
_ASCII_TO_SPACE = bytes.maketrans(b"\t\n\r", b"   ")
# Below this many bytes the C split/join is cheaper than setting up the array passes.
_ARRAY_FROM = 4096


def _special_characters(text: str) -> str:
    """``text`` (NFKC, not ASCII) with its non-ASCII format/control characters dropped and
    non-ASCII whitespace turned into spaces; the usual text has none and costs one scan."""
    if _SPECIAL.search(text) is None:
        return text
    present = [c for c in _DROP if c in text]
    if len(present) > 8:  # many kinds: one pass for all, not one per kind
        text = _DROP_ALL.sub("", text)
    else:
        for c in present:
            text = text.replace(c, "")
    for c in _SPACE:
        if c in text:
            text = text.replace(c, " ")
    return text


def _collapse_ascii(data: bytes) -> bytes:
    """ASCII controls dropped, tab/newline/CR/space runs one space, trimmed — on UTF-8 bytes, which
    never hold an ASCII byte inside a multi-byte character."""
    data = data.translate(_ASCII_TO_SPACE, _ASCII_CONTROLS)
    if len(data) < _ARRAY_FROM:
        return b" ".join(data.split())  # bytes whitespace: the four left, controls are gone
    arr = np.frombuffer(data, np.uint8)
    space = arr == 32
    repeated = space[1:] & space[:-1]  # a space right after a space goes
    if repeated.any():
        keep = np.empty(len(arr), np.bool_)
        keep[0] = True
        np.invert(repeated, out=keep[1:])
        data = arr[keep].tobytes()
    return data.strip(b" ")


def normalized_utf8(text: str) -> bytes:
    """The normal form of ``text``, as the UTF-8 bytes that are fingerprinted."""
    if not text.isascii():  # ASCII is its own NFKC and holds no non-ASCII specials
        text = _special_characters(unicodedata.normalize("NFKC", text))
    return _collapse_ascii(text.encode("utf-8"))


def normalize_for_fingerprint(text: str) -> str:
    """The normal form of ``text`` (see the module's docstring)."""
    return normalized_utf8(text).decode("utf-8")


def fingerprint_bytes(key: bytes, normalized: bytes) -> str:
    """HMAC-SHA256 of normal-form UTF-8 bytes under the server's fingerprint key, hex."""
    if not key:
        raise ValueError("fingerprint key must not be empty")
    return hmac.digest(key, normalized, "sha256").hex()  # one C call


def fingerprint(key: bytes, normalized_text: str) -> str:
    """HMAC-SHA256 of the (already normalised) text under the server's fingerprint key, hex."""
    return fingerprint_bytes(key, normalized_text.encode("utf-8"))
