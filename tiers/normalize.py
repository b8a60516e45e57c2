"""Canonical text normalisation, with a map from normalised offsets back to the original text.

Detection runs on normalised text so that identifiers hidden with invisible characters, fullwidth
forms, look-alike letters, foreign digits or percent-encoding are still seen; stripping edits the
*original* text, so every span found is mapped back through :class:`OffsetMap`.

1. percent-encoded characters are decoded: ``jane%40example.com`` -> ``jane@example.com``,
   UTF-8 sequences (``%D0%B0``) as one character, and ``%25XX`` (encoded twice) as ``XX`` would
   be (as ``%XX`` where that is no text). Only printable ASCII and valid UTF-8 decode; anything
   else stays as written. The decoded character then goes through the steps below, and maps
   back to its whole escape;
   Backslash escapes of non-ASCII letters (``\\u00e9``, ``\\xe9``, ``\\U0001d400``, and UTF-8
   bytes ``\\xc3\\xa9``) decode too, as JSON written with ``ensure_ascii`` and Python's
   ``repr`` spell names: ``"Jos\\u00e9 Garc\\u00eda"`` reads as the name it is. Only letters
   (and their combining marks) decode, so escapes in code (``"\\x00"``, ``"\\u2028"``, ``\\n``)
   stay as written, and an escaped backslash (``\\\\u00e9``) escapes nothing;
2. format characters (category Cf: zero-width, soft hyphen, bidi controls, tags …) and a few
   invisible fillers are dropped;
3. NFKC (fullwidth, ligatures, compatibility digits and letters);
4. combining marks (Mn/Me, incl. variation selectors) are dropped, so ``é`` -> ``e``;
5. look-alikes are folded to ASCII by a table generated from Unicode's confusables data
   (UTS #39; provenance, licence and the rules in :mod:`tiers._confusables`), every decimal
   digit of any script to ASCII, and the few Latin letters that are neither (Azerbaijani "ə",
   Icelandic "ð", "þ") to their usual transliteration.

Steps 2–5 are defined per code point, so a document gives the same value whether it is
normalised whole or as one message among others (unless a cut falls inside a ``%XX`` escape),
and offsets stay cheap to track. Percent-decoding is one level: the result is not decoded again.

ASCII text without ``%`` and ``\\`` never changes, which keeps the common case a no-op.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass

from ._codepoints import load_table

__all__ = ["OffsetMap", "normalize_text", "normalize_with_map"]

# One escape, or one escape of an escaped "%" ("%2540" is "@" encoded twice).
_ESCAPE = re.compile(r"%(?:25)?([0-9A-Fa-f]{2})")


class _Tables:
    """The per-code-point table (:mod:`tiers._codepoints`: shipped precomputed, else computed),
    loaded once on first use and shared by all threads."""

    def __init__(self) -> None:
        table = load_table()
        self.table = table
        # Only characters whose replacement is not exactly one character shift offsets; 1:1
        # replacements (é -> e, Cyrillic а -> a) keep every offset where it was.
        resizing = sorted(cp for cp, rep in table.items() if len(rep) != 1)
        self.astral_resizing = frozenset(cp for cp in resizing if cp > 0xFFFF)
        # One class of the BMP code points that resize plus *every* astral one (matches of those
        # are checked against the set): Python's re tests a BMP class in O(1) per character but
        # astral ranges one by one, which made this search 30x slower on non-ASCII text.
        candidates = "[" + _ranges([cp for cp in resizing if cp <= 0xFFFF]) + "\U00010000-\U0010ffff]"
        self.resizing = re.compile(candidates)


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


def _decode_escapes(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, character)`` for each character that ``%XX`` escapes in ``text`` decode to;
    escapes that are not printable ASCII or part of valid UTF-8 are left out (kept as written)."""
    escapes = [(m.start(), m.end(), int(m.group(1), 16)) for m in _ESCAPE.finditer(text)]
    out: list[tuple[int, int, str]] = []
    i, n = 0, len(escapes)
    while i < n:
        s, e, byte = escapes[i]
        i += 1
        if 0x20 <= byte < 0x7F:
            out.append((s, e, chr(byte)))
            continue
        size = 2 if 0xC2 <= byte <= 0xDF else 3 if 0xE0 <= byte <= 0xEF else 4 if 0xF0 <= byte <= 0xF4 else 0
        group = escapes[i - 1 : i - 1 + size]
        # a UTF-8 character is consecutive escapes, nothing between them
        if size and len(group) == size and all(group[k][1] == group[k + 1][0] for k in range(size - 1)):
            try:
                ch = bytes(b for _, _, b in group).decode("utf-8")
            except UnicodeDecodeError:
                pass
            else:
                out.append((s, group[-1][1], ch))
                i += size - 1
                continue
        if e - s == 5:
            # "%25DB" whose "%DB" is no text: one level of decoding still makes it "%DB" (as
            # "%25" before anything else is "%"), so that "%25VAR%25" reads "%VAR%"
            out.append((s, s + 3, "%"))
    return out


# what may decode to letters, all opening with the backslash (the engine then skips to each one at C
# speed): a run of \uHHHH, one \UHHHHHHHH, a run of \xHH that starts with a byte from 0xC0 (a UTF-8
# lead or a Latin-1 letter)
_BACKSLASH_RUN = re.compile(
    r"\\(?:u[0-9A-Fa-f]{4}(?:\\u[0-9A-Fa-f]{4})*|U[0-9A-Fa-f]{8}|x[C-Fc-f][0-9A-Fa-f](?:\\x[0-9A-Fa-f]{2})*)"
)
_ASCII_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


def _letter(ch: str) -> bool:
    return ch >= "\x80" and unicodedata.category(ch)[0] in ("L", "M")


def _decode_backslashes(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, characters)`` for the backslash escapes of non-ASCII letters and marks in
    ``text``, after an even run of backslashes (``\\\\u00e9`` is an escaped backslash and the
    letters "u00e9"). A run of ``\\uHHHH`` is decoded at once, and each of its letters maps back to
    its own escape (six characters each; neighbouring letters as one piece). ``\\xHH`` are bytes
    literals' UTF-8 ("jos\\xc3\\xa9") or, alone, ``str`` literals' Latin-1 letter ("Journ\\xe9e"),
    and count only beside an ASCII letter (a lone one after two of them): a binary string's repr
    is runs of such escapes, whose bytes decode to letters by chance."""
    out: list[tuple[int, int, str]] = []
    u_runs: list[tuple[int, int]] = []
    for m in _BACKSLASH_RUN.finditer(text):
        s, e = m.span()
        if s and text[s - 1] == "\\":
            run = s - 1
            while run > 0 and text[run - 1] == "\\":
                run -= 1
            if (s - run) % 2:
                continue  # the first backslash is itself escaped
        kind = text[s + 1]
        if kind == "u":
            u_runs.append((s, e))
        elif kind == "U":
            cp = int(text[s + 2 : e], 16)
            if cp <= 0x10FFFF and _letter(chr(cp)):
                out.append((s, e, chr(cp)))
        elif text[s - 1 : s] in _ASCII_LETTERS or text[e : e + 1] in _ASCII_LETTERS:
            _byte_letters(text, s, e, out)  # (a binary repr's runs are seldom beside a letter)
    if u_runs:
        # every \uHHHH run decoded by the codec at once (JSON written with ensure_ascii escapes
        # every letter of a text beyond ASCII), then cut back into the runs: one character each
        joined = "".join([text[s:e] for s, e in u_runs]).encode("ascii").decode("unicode_escape")
        k = 0
        for s, e in u_runs:
            n = (e - s) // 6
            decoded = joined[k : k + n]
            k += n
            if decoded.isalpha() and min(decoded) >= "\x80":
                out.append((s, e, decoded))  # letters only: one piece
            else:
                _letter_pieces(decoded, s, 6, out)
        out.sort()
    return out


def _letter_pieces(decoded: str, start: int, width: int, out: list[tuple[int, int, str]]) -> None:
    """Append each run of letters in ``decoded`` (one character per ``width`` characters of the
    text from ``start``) as one piece."""
    k = 0
    n = len(decoded)
    while k < n:
        if not _letter(decoded[k]):
            k += 1
            continue
        j = k + 1
        while j < n and _letter(decoded[j]):
            j += 1
        out.append((start + width * k, start + width * j, decoded[k:j]))
        k = j


def _byte_letters(text: str, s: int, e: int, out: list[tuple[int, int, str]]) -> None:
    """The letters of a run of ``\\xHH`` escapes ``text[s:e]``, beside an ASCII letter (see
    :func:`_decode_backslashes`): UTF-8 of letters ("jos\\xc3\\xa9"), or up to three Latin-1
    letters inside a word or after two ASCII letters ("M\\xfcller", "Ib\\xe1\\xf1ez",
    "Andr\\xe9")."""
    if e - s > 4 and text[s + 6] in "89ABab" and text[s + 2 : s + 4] not in ("C0", "C1", "c0", "c1"):
        raw = bytes.fromhex(text[s:e].replace("\\x", ""))
        try:
            decoded = raw.decode("utf-8")
        except UnicodeDecodeError:
            decoded = ""
        if decoded and all(_letter(c) for c in decoded):
            out.append((s, e, decoded))
            return
    if e - s > 12 or text[s - 1 : s] not in _ASCII_LETTERS:
        return
    if text[s - 2 : s - 1] not in _ASCII_LETTERS and text[e : e + 1] not in _ASCII_LETTERS:
        return
    codes = [int(text[k + 2 : k + 4], 16) for k in range(s, e, 4)]
    if all(c >= 0xC0 and c not in (0xD7, 0xF7) for c in codes):
        out.append((s, e, "".join(map(chr, codes))))


def _edits(text: str, runs: list[tuple[int, int]], tables: _Tables, percent: bool) -> list[tuple[int, int, str]]:
    """Spans of ``text`` whose normal form differs in length from them, with that normal form:
    decoded escapes (if ``percent``: percent-escapes and backslash escapes of letters) and
    characters that the table resizes (found in ``runs``, the text's non-ASCII runs). Everything
    else maps 1:1."""
    table = tables.table
    out: list[tuple[int, int, str]] = []
    if percent and "%" in text:
        out = [(s, e, table.get(ord(ch), ch)) for s, e, ch in _decode_escapes(text)]
    if percent and "\\" in text:
        letters = [(s, e, ch.translate(table)) for s, e, ch in _decode_backslashes(text)]
        if letters:
            out = sorted(out + letters) if out else letters
    if not runs:
        return out
    astral = tables.astral_resizing
    # every resizing code point is non-ASCII, so only the runs are searched
    resized = [
        (i, i + 1, table[cp])
        for s, e in runs
        for m in tables.resizing.finditer(text, s, e)
        if (cp := ord(text[(i := m.start())])) <= 0xFFFF or cp in astral
    ]
    if out and resized:
        return sorted(out + resized)
    return out or resized


# Runs of non-ASCII characters. The table maps code points from U+0080 only, and str.translate
# looks every character up in it (≈ 60 ns each): 3 MB of code with a handful of non-ASCII
# characters spent ≈ 0.2 s per reading there. Even a regex over the whole text for the runs
# costs ≈ 12 ms/MB, and a reading searched it several times; str.isascii checks a word at a time
# (≈ 0.3 ms/MB in chunks), so the regex only reads the chunks that hold a non-ASCII character.
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_CHUNK = 4096


def _non_ascii_runs(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each maximal run of non-ASCII characters, in order."""
    runs: list[tuple[int, int]] = []
    n, chunk = len(text), _CHUNK
    for i in range(0, n, chunk):
        end = min(i + chunk, n)
        if text[i:end].isascii():
            continue
        for m in _NON_ASCII.finditer(text, i, end):
            s, e = m.span()
            if runs and runs[-1][1] == s:  # a run cut by the chunk's end goes on
                runs[-1] = (runs[-1][0], e)
            else:
                runs.append((s, e))
    return runs


def _translate_between(text: str, start: int, end: int, runs: list[tuple[int, int]], table: dict[int, str]) -> str:
    """``text[start:end].translate(table)``, looking up only the characters of ``runs`` (the
    text's non-ASCII runs)."""
    k = bisect_right(runs, (start, len(text) + 1)) - 1  # the last run starting at or before start
    if k < 0 or runs[k][1] <= start:
        k += 1
    parts: list[str] = []
    last = start
    while k < len(runs) and runs[k][0] < end:
        s, e = max(runs[k][0], start), min(runs[k][1], end)
        parts += (text[last:s], text[s:e].translate(table))
        last = e
        k += 1
    if not parts:
        return text[start:end]
    parts.append(text[last:end])
    return "".join(parts)


def _translate(text: str, table: dict[int, str]) -> str:
    return _translate_between(text, 0, len(text), _non_ascii_runs(text), table)


def normalize_text(text: str) -> str:
    """The canonical normal form of ``text`` (see the module docstring). ASCII without ``%`` and
    ``\\`` is returned as is."""
    if "%" in text or "\\" in text:
        return normalize_with_map(text)[0]
    if text.isascii():
        return text
    return _translate(text, _get_tables().table)


@dataclass(frozen=True, slots=True)
class OffsetMap:
    """Maps spans of the normalised text back to the original text.

    The normalised text is a sequence of pieces: runs copied 1:1 (``linear``), and the output of
    one replaced original span (a resized character, a decoded escape: every offset in it maps to
    the whole span ``orig_starts[k] : orig_ends[k]``). Dropped characters leave no piece; they fall
    inside whatever span covers their neighbours.
    """

    norm_starts: tuple[int, ...] = ()
    orig_starts: tuple[int, ...] = ()
    linear: tuple[bool, ...] = ()
    orig_ends: tuple[int, ...] = ()

    def _piece(self, pos: int) -> int:
        return bisect_right(self.norm_starts, pos) - 1

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Original ``(start, end)`` of the normalised span ``[start, end)`` (end > start)."""
        if not self.norm_starts:
            return start, end
        k = self._piece(start)
        if k < 0:
            s = start
        elif self.linear[k]:
            s = self.orig_starts[k] + (start - self.norm_starts[k])
        else:
            s = self.orig_starts[k]
        last = end - 1
        k = self._piece(last)
        if k < 0:
            e = end
        elif self.linear[k]:
            e = self.orig_starts[k] + (last - self.norm_starts[k]) + 1
        else:
            e = self.orig_ends[k]
        return s, e


def normalize_with_map(text: str, *, percent: bool = True) -> tuple[str, OffsetMap]:
    """Normalise ``text`` and return the map from normalised offsets to original offsets.

    ``percent=False`` leaves percent-escapes and backslash escapes as written (steps 2-5 only):
    the literal reading that the secret recognizers also get, since a credential's value is its
    spelling in most syntaxes (a ``%22`` in a dotenv value is three characters of it, not a closing quote)."""
    ascii_text = text.isascii()
    if ascii_text and (not percent or ("%" not in text and "\\" not in text)):
        return text, OffsetMap()
    tables = _get_tables()
    table = tables.table
    runs = [] if ascii_text else _non_ascii_runs(text)
    edits = _edits(text, runs, tables, percent)
    if not edits:
        return _translate_between(text, 0, len(text), runs, table), OffsetMap()
    parts: list[str] = []
    norm_starts: list[int] = []
    orig_starts: list[int] = []
    orig_ends: list[int] = []
    linear: list[bool] = []
    npos = 0
    last = 0
    for s, e, rep in edits:
        if s > last:
            parts.append(_translate_between(text, last, s, runs, table))
            norm_starts.append(npos)
            orig_starts.append(last)
            orig_ends.append(s)
            linear.append(True)
            npos += s - last
        if rep:
            parts.append(rep)
            norm_starts.append(npos)
            orig_starts.append(s)
            orig_ends.append(e)
            linear.append(False)
            npos += len(rep)
        last = e
    if last < len(text):
        parts.append(_translate_between(text, last, len(text), runs, table))
        norm_starts.append(npos)
        orig_starts.append(last)
        orig_ends.append(len(text))
        linear.append(True)
    offsets = OffsetMap(tuple(norm_starts), tuple(orig_starts), tuple(linear), tuple(orig_ends))
    return "".join(parts), offsets
