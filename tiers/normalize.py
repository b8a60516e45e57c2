"""Canonical text normalisation, with a map from normalised offsets back to the original text.

Detection runs on normalised text so that identifiers hidden with invisible characters, fullwidth
forms, look-alike letters or foreign digits are still seen; stripping edits the *original* text,
so every span found is mapped back through :class:`OffsetMap`.

The normalisation is defined per code point (so a document gives the same value whether it is
normalised whole or as one message among others, and offsets stay cheap to track):

1. format characters (category Cf: zero-width, soft hyphen, bidi controls, tags …) and a few
   invisible fillers are dropped;
2. NFKC (fullwidth, ligatures, compatibility digits and letters);
3. combining marks (Mn/Me, incl. variation selectors) are dropped, so ``é`` -> ``e``;
4. Cyrillic and Greek letters that look like Latin ones are folded to Latin, and every decimal
   digit of any script to ASCII.

ASCII text never changes, which keeps the common case a no-op.
"""

from __future__ import annotations

import re
import sys
import threading
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass

__all__ = ["OffsetMap", "normalize_text", "normalize_with_map"]

# Invisible characters whose category is not Cf (fillers, blank braille, Mongolian separator …).
_INVISIBLE = frozenset(
    "\u115f\u1160\u17b4\u17b5\u180e\u2800\u3164\uffa0\u034f\u200b\u2060\ufeff"
)

# Letters of other scripts that render like a Latin letter in common fonts (Unicode confusables,
# restricted to the single-letter cases that matter for identifiers).
_LOOKALIKES = {
    # Cyrillic lower / upper
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p",
    "с": "c", "т": "t", "у": "y", "х": "x", "і": "i", "ї": "i", "ј": "j", "ѕ": "s", "ԁ": "d",
    "ԛ": "q", "ԝ": "w", "һ": "h", "ӏ": "l", "ɡ": "g",
    "А": "A", "В": "B", "Е": "E", "Ё": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P",
    "С": "C", "Т": "T", "У": "Y", "Х": "X", "І": "I", "Ї": "I", "Ј": "J", "Ѕ": "S", "Ԁ": "D",
    "Ԛ": "Q", "Ԝ": "W", "Һ": "H", "Ӏ": "I",
    # Greek lower / upper
    "α": "a", "ο": "o", "ρ": "p", "ν": "v", "ι": "i", "κ": "k", "τ": "t", "υ": "u", "χ": "x",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N",
    "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
    # Latin-looking symbols NFKC leaves alone
    "ı": "i", "ȷ": "j", "ℓ": "l", "∕": "/", "⁄": "/", "‐": "-", "‑": "-", "‒": "-", "–": "-",
    "—": "-", "−": "-", "＠": "@", "﹫": "@",
}

_MARKS = frozenset({"Mn", "Me"})


def _map_char(ch: str) -> str:
    if ch in _INVISIBLE or unicodedata.category(ch) == "Cf":
        return ""
    out = unicodedata.normalize("NFKC", ch)
    decomposed = unicodedata.normalize("NFD", out)
    if any(unicodedata.category(c) in _MARKS for c in decomposed):
        out = "".join(c for c in decomposed if unicodedata.category(c) not in _MARKS)
    folded = []
    for c in out:
        if c in _LOOKALIKES:
            c = _LOOKALIKES[c]
        elif not c.isascii() and unicodedata.decimal(c, None) is not None:
            c = str(unicodedata.decimal(c))
        folded.append(c)
    return "".join(folded)


class _Tables:
    """The per-code-point table, built once (≈1 s) on first use and shared by all threads."""

    def __init__(self) -> None:
        table: dict[int, str] = {}
        for cp in range(0x80, sys.maxunicode + 1):
            if 0xD800 <= cp <= 0xDFFF:
                continue
            ch = chr(cp)
            cat = unicodedata.category(ch)
            if cat in ("Cn", "Co", "Cs"):
                continue
            mapped = _map_char(ch)
            if mapped != ch:
                table[cp] = mapped
        self.table = table
        # Only characters whose replacement is not exactly one character shift offsets; 1:1
        # replacements (é -> e, Cyrillic а -> a) keep every offset where it was.
        resizing = sorted(cp for cp, rep in table.items() if len(rep) != 1)
        self.resizing = re.compile("[" + _ranges(resizing) + "]")


def _ranges(codepoints: list[int]) -> str:
    parts: list[str] = []
    i = 0
    while i < len(codepoints):
        j = i
        while j + 1 < len(codepoints) and codepoints[j + 1] == codepoints[j] + 1:
            j += 1
        lo, hi = codepoints[i], codepoints[j]
        parts.append(re.escape(chr(lo)) if lo == hi else f"{re.escape(chr(lo))}-{re.escape(chr(hi))}")
        i = j + 1
    return "".join(parts)


_tables: _Tables | None = None
_tables_lock = threading.Lock()


def _get_tables() -> _Tables:
    global _tables
    if _tables is None:
        with _tables_lock:
            if _tables is None:
                _tables = _Tables()
    return _tables


def normalize_text(text: str) -> str:
    """The canonical normal form of ``text`` (see the module docstring). ASCII is returned as is."""
    if text.isascii():
        return text
    return text.translate(_get_tables().table)


@dataclass(frozen=True, slots=True)
class OffsetMap:
    """Maps spans of the normalised text back to the original text.

    The normalised text is a sequence of pieces: runs copied unchanged (``linear``) and the output
    of one replaced original character (not linear: every offset in it maps to that character).
    Dropped characters leave no piece; they fall inside whatever span covers their neighbours.
    """

    norm_starts: tuple[int, ...] = ()
    orig_starts: tuple[int, ...] = ()
    linear: tuple[bool, ...] = ()

    def _locate(self, pos: int) -> int:
        if not self.norm_starts:
            return pos
        k = bisect_right(self.norm_starts, pos) - 1
        if k < 0:
            return pos
        if self.linear[k]:
            return self.orig_starts[k] + (pos - self.norm_starts[k])
        return self.orig_starts[k]

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Original ``(start, end)`` of the normalised span ``[start, end)`` (end > start)."""
        return self._locate(start), self._locate(end - 1) + 1


def normalize_with_map(text: str) -> tuple[str, OffsetMap]:
    """Normalise ``text`` and return the map from normalised offsets to original offsets."""
    if text.isascii():
        return text, OffsetMap()
    tables = _get_tables()
    table = tables.table
    normalised = text.translate(table)
    if len(normalised) == len(text) and tables.resizing.search(text) is None:
        return normalised, OffsetMap()
    norm_starts: list[int] = []
    orig_starts: list[int] = []
    linear: list[bool] = []
    npos = 0
    last = 0
    for m in tables.resizing.finditer(text):
        i = m.start()
        if i > last:
            norm_starts.append(npos)
            orig_starts.append(last)
            linear.append(True)
            npos += i - last
        rep_len = len(table[ord(text[i])])
        if rep_len:
            norm_starts.append(npos)
            orig_starts.append(i)
            linear.append(False)
            npos += rep_len
        last = i + 1
    if last < len(text):
        norm_starts.append(npos)
        orig_starts.append(last)
        linear.append(True)
    return normalised, OffsetMap(tuple(norm_starts), tuple(orig_starts), tuple(linear))
