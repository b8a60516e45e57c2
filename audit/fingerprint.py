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

:class:`Fingerprints` takes a request's texts one after another and hashes each text and the
whole in the same pass, over pieces of 64 KiB: a 3 MB prompt's normal form is never built whole
(and copied again for the join), and each piece's arrays stay in the CPU's cache.
"""

from __future__ import annotations

import hashlib
import hmac
import unicodedata
from collections.abc import Iterator
from functools import lru_cache
from itertools import chain

import numpy as np
import re2

__all__ = [
    "Fingerprints",
    "fingerprint",
    "fingerprint_bytes",
    "normalize_for_fingerprint",
    "normalized_chunks",
    "normalized_utf8",
]


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


def _collapse_run(data: bytes, after_space: bool) -> bytes:
    """``data`` (ASCII controls gone, whitespace spaces) with each space after a space dropped,
    its first byte too when ``after_space`` and it is a space; nothing trimmed at its end."""
    arr = np.frombuffer(data, np.uint8)
    space = arr == 32
    keep = np.empty(len(arr), np.bool_)
    keep[0] = not (after_space and space[0])
    np.logical_and(space[1:], space[:-1], out=keep[1:])  # a space right after a space …
    np.logical_not(keep[1:], out=keep[1:])  # … goes
    return data if keep.all() else arr[keep].tobytes()


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


# How much text one step of :func:`normalized_chunks` reads: its arrays stay in a core's cache.
_CHUNK = 1 << 16
# From this length a text is hashed in pieces; below, whole in one call (measured: 100 KB in two
# pieces cost 5 % more, 1 MB in sixteen 40 % less)
_PIECES_FROM = 1 << 18


def normalized_chunks(text: str, size: int = _CHUNK) -> Iterator[bytes]:
    """The normal form of ``text`` in pieces, non-empty, whose concatenation is
    ``normalized_utf8(text)``. ASCII text is read ``size`` characters at a time; other text is
    normalised whole first (NFKC composes across any cut) and handed out in pieces."""
    if len(text) <= size or not text.isascii():
        data = normalized_utf8(text)
        for i in range(0, len(data), size):
            yield data[i : i + size]
        return
    after_space = True  # the text's start counts as a space: a leading run goes (trimmed)
    held = False  # a space withheld from the last piece: written only before more text
    for i in range(0, len(text), size):
        data = text[i : i + size].encode("ascii").translate(_ASCII_TO_SPACE, _ASCII_CONTROLS)
        if not data:
            continue
        out = _collapse_run(data, after_space)
        after_space = data[-1] == 32
        if not out:
            continue
        # a held space means this piece starts after a space, so ``out`` starts with none
        hold = out[-1] == 32
        if hold:
            out = out[:-1]
        if held and out:
            yield b" "
        if out:
            yield out
        held = hold or (held and not out)


class Fingerprints:
    """The fingerprints of a request's texts, fed one by one: each non-empty text's own, and the
    whole's, ``fingerprint_bytes(key, b" ".join(each non-empty normal form))``. A long text is
    hashed in pieces into its own fingerprint and the whole's at once; short ones are hashed in
    one call each (a hash object costs more than a 1 KB text's hashing)."""

    def __init__(self, key: bytes, *, pieces_from: int = _PIECES_FROM, piece: int = _CHUNK) -> None:
        self._keyed = _keyed(key)
        self._pieces_from = pieces_from
        self._piece = piece
        self._each: list[str] = []
        self._short: list[bytes] = []  # normal forms not yet in ``_whole`` (all, while it is None)
        self._whole: hmac.HMAC | None = None

    def add(self, text: str) -> None:
        if len(text) < self._pieces_from:
            form = normalized_utf8(text)
            if form:
                self._each.append(_hex(self._keyed, form))
                if self._whole is None:
                    self._short.append(form)
                else:
                    self._whole.update(b" " + form)
            return
        pieces = normalized_chunks(text, self._piece)
        first = next(pieces, None)
        if first is None:
            return  # nothing but whitespace and controls: no text, no fingerprint
        one = self._keyed.copy()
        whole = self._whole
        if whole is None:  # the texts before, in order, then this one's pieces
            whole = self._whole = self._keyed.copy()
            whole.update(b" ".join(self._short))
        if self._each:
            whole.update(b" ")
        for piece in chain((first,), pieces):
            one.update(piece)
            whole.update(piece)
        self._each.append(one.hexdigest())

    @property
    def each(self) -> tuple[str, ...]:
        """The non-empty texts' fingerprints, each once, in their first order."""
        return tuple(dict.fromkeys(self._each))

    @property
    def whole(self) -> str | None:
        """The fingerprint of all texts joined (the only text's own when there is one); None
        when every text was empty."""
        if len(self._each) <= 1:
            return self._each[0] if self._each else None
        if self._whole is None:
            return _hex(self._keyed, b" ".join(self._short))
        return self._whole.hexdigest()


@lru_cache(maxsize=8)
def _keyed(key: bytes) -> hmac.HMAC:
    """An HMAC-SHA256 under ``key`` that has read nothing, to be copied: a copy costs ≈ 1.2 µs
    against ≈ 1.9 for ``hmac.digest``, which looks the digest up by name and pads the key on
    every call, and a request takes one per message and one for the whole."""
    if not key:
        raise ValueError("fingerprint key must not be empty")
    return hmac.new(key, digestmod=hashlib.sha256)


def _hex(keyed: hmac.HMAC, data: bytes) -> str:
    one = keyed.copy()
    one.update(data)
    return one.hexdigest()


def normalize_for_fingerprint(text: str) -> str:
    """The normal form of ``text`` (see the module's docstring)."""
    return normalized_utf8(text).decode("utf-8")


def fingerprint_bytes(key: bytes, normalized: bytes) -> str:
    """HMAC-SHA256 of normal-form UTF-8 bytes under the server's fingerprint key, hex."""
    return _hex(_keyed(key), normalized)


def fingerprint(key: bytes, normalized_text: str) -> str:
    """HMAC-SHA256 of the (already normalised) text under the server's fingerprint key, hex."""
    return fingerprint_bytes(key, normalized_text.encode("utf-8"))
