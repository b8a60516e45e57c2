"""Where context words occur: as whole words, and as parts of identifiers.

A context word counts where it stands as a word of its own ("SSN 536228451", "SSN536228451"),
joined to others by ``_`` or ``-`` ("customer_ssn", "social-security-number") and as a hump of a
camelCase identifier ("socialSecurityNumber", "customerSsn", "employeeSSN") — JSON keys carry
context as often as prose does. It does not count inside a longer word: "check" is no context in
"checksum", nor "us" in "USER".

One RE2 pass finds every phrase of every recognizer; each alternative below consumes the
character next to the phrase instead of looking at it (RE2 has no look-arounds), so the phrase
itself is a capture group and the next search starts where the phrase ends.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import re2

from ._re2_raw import spans_of

__all__ = ["ContextIndex", "keyed_as_quantity", "phrase_key", "power_of_two"]

_WORD = re.compile(r"[a-z0-9]+")
_SEP = r"[\s_-]*"


# The key written right before a value on its line: ``"rank": 124699``, ``rank: 124699``,
# ``rank=124699``, ``rank = "124699"``, ``<rank>124699`` is none (markup is read as text).
_OWN_KEY = re.compile(r"""(?:^|[^A-Za-z0-9_.-])([A-Za-z_][A-Za-z0-9_.-]{0,60})["']?[ \t]*[:=][ \t]*["']?\Z""")
_KEY_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")
# the last word of a key that names a quantity, a place in a sequence or a measure: what such a
# key holds is that number, whatever words stand around it. Not "number", "no", "id", "code":
# ``license_number``, ``{"type": "passport", "id": …}`` name identifiers.
_QUANTITY_WORDS = frozenset(
    """rank ranks index indices idx count counts size sizes length len offset offsets position pos
    port line lineno column col row width height depth year years timestamp ts time seconds secs
    ms millis nanos duration elapsed version revision rev seed score scores priority weight
    weights total sum step steps epoch epochs page pages pid bytes tokens max min limit capacity
    frequency freq rate ratio level order ordinal""".split()
)


def power_of_two(value: str) -> bool:
    """Whether ``value`` is the decimal digits of a power of two from 65,536 up (16777216,
    1048576): a size, a capacity or a bit mask, as code writes them (minified React's lanes sit
    beside a function named ``Dl``, a driver's licence's context word). An identifier's number
    is one by chance one time in millions."""
    if not value.isdigit() or value[0] == "0" or len(value) < 5:
        return False
    n = int(value)
    return n >= 65536 and n & (n - 1) == 0


def keyed_as_quantity(text: str, start: int) -> bool:
    """Whether the value at ``start`` is written as the value of a key that names a quantity
    (``"rank": 124699``, ``line_count = 88012345``): a number a key calls a rank, a count or a
    port is that, however near a context word stands (a tokenizer's vocabulary lists "Drivers"
    and "DL" among its tokens, next to every rank)."""
    # what the key's match must end with, looked at first: ":" or "=" right before the value,
    # a quote and blanks between (a CSV's cells, prose: one step, no search)
    j = start
    while j > 0 and text[j - 1] in " \t\"'":
        j -= 1
    if j == 0 or text[j - 1] not in ":=":
        return False
    m = _OWN_KEY.search(text, max(0, start - 72), start)
    if m is None:
        return False
    words = _KEY_WORDS.findall(m.group(1).rsplit(".", 1)[-1])
    return bool(words) and words[-1].lower() in _QUANTITY_WORDS


def phrase_key(text: str) -> str:
    """The key a phrase is known by: its letters and digits, lower-case ("Social-Security" ->
    "socialsecurity")."""
    return "".join(_WORD.findall(text.lower()))


def phrase_words(phrase: str) -> list[str]:
    return _WORD.findall(phrase.lower())


def _any_case(words: list[str]) -> str:
    return _SEP.join(re2.escape(w) for w in words)


def _alternatives(phrases: Iterable[list[str]]) -> str:
    ordered = sorted(phrases, key=lambda ws: len("".join(ws)), reverse=True)
    alone = "|".join(_any_case(ws) for ws in ordered)
    # first hump of a camelCase name: the phrase's last letter lower-case, then an upper-case one
    first_hump = "|".join(
        _SEP.join([*map(re2.escape, ws[:-1]), re2.escape(ws[-1][:-1])]) + f"(?-i:{ws[-1][-1]})"
        for ws in ordered
        if ws[-1][-1].isalpha() and len("".join(ws)) > 1
    )
    title = "|".join("".join(w[:1].upper() + w[1:] for w in ws) for ws in ordered if ws[0][0].isalpha())
    upper = "|".join(_SEP.join(re2.escape(w.upper()) for w in ws) for ws in ordered if ws[0][0].isalpha())
    out = [r"(?:^|[^A-Za-z])(?i:(" + alone + r"))(?:$|[^A-Za-z])"]
    if first_hump:
        out.append(r"(?:^|[^A-Za-z])(?i:(" + first_hump + r"))[A-Z]")
    if title:
        out.append(r"[a-z](" + title + r")(?:$|[^a-z])")
    if upper:
        out.append(r"[a-z](" + upper + r")(?:$|[^A-Za-z])")
    return "|".join(out)


def _with_inner(
    key: str, splits: list[list[str]], words: dict[str, list[list[str]]], owners: dict[str, list[int]]
) -> list[int]:
    out = list(owners[key])
    for other, other_splits in words.items():
        if other == key:
            continue
        for ows in other_splits:
            if any(
                len(ows) < len(ws) and any(ws[i : i + len(ows)] == ows for i in range(len(ws) - len(ows) + 1))
                for ws in splits
            ):
                out.extend(o for o in owners[other] if o not in out)
                break
    return out


class ContextIndex:
    """Finds every phrase of a set of recognizers' context words in one pass."""

    def __init__(self, owners: dict[str, list[int]], phrases: Iterable[str], options: object) -> None:
        """``owners``: phrase key -> ids of the recognizers it is context for; ``phrases``: the
        phrases as written (their words decide the pattern)."""
        self.owners = owners
        # a key may be written several ways ("steuer-id" and "steuerid"): every spelling is
        # searched, all of them standing for the same key
        words: dict[str, list[list[str]]] = {}
        for p in sorted(phrases):
            k, ws = phrase_key(p), phrase_words(p)
            if k in owners and ws and ws not in words.setdefault(k, []):
                words[k].append(ws)
        words = {k: v for k, v in words.items() if v}
        # One pass reports the longest phrase at a place: "social security number" hides
        # "social security" and "security". A phrase also counts for the owners of every
        # phrase whose words it contains in a row.
        self.owners = {k: _with_inner(k, ws, words, owners) for k, ws in words.items()} | {
            k: v for k, v in owners.items() if k not in words
        }
        self._rx = re2.compile(_alternatives([ws for v in words.values() for ws in v]), options) if words else None
        self._groups = self._rx.groups if self._rx is not None else 0

    def find(self, subject: bytes) -> dict[int, list[int]]:
        """Recognizer id -> byte offsets where one of its phrases starts, in order."""
        out: dict[int, list[int]] = {}
        if self._rx is None:
            return out
        match = spans_of(self._rx)
        groups = range(1, self._groups + 1)
        owners: dict[bytes, tuple[int, ...]] = {}  # the same few spellings recur
        pos, n = 0, len(subject)
        while pos <= n:
            spans = match(subject, pos, n)
            if spans[0] == (-1, -1):
                break
            s = e = -1
            for g in groups:
                s, e = spans[g]
                if s >= 0:
                    break
            raw = subject[s:e]
            keys = owners.get(raw)
            if keys is None:
                keys = owners[raw] = tuple(self.owners.get(phrase_key(raw.decode("utf-8", "replace")), ()))
            for key in keys:
                out.setdefault(key, []).append(s)
            pos = e if e > pos else pos + 1
        return out
