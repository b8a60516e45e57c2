"""A small notation for token formats, so that one row of the provider table gives both the RE2
pattern and a deterministic sample (for the table's own tests).

``"ghp_{an:36}"`` is the literal ``ghp_`` then 36 letters or digits; ``{cls:m,n}`` is m to n,
``{cls:m,}`` m or more. ``(a|b)`` in literal text is an alternation (the sample takes the first),
``(a|b)?`` one that may be left out.
Classes are the character sets providers document (hex, base62, base64url …).
"""

from __future__ import annotations

import itertools
import random
import re
from dataclasses import dataclass

import re2

__all__ = ["CLASSES", "Shape", "parse_shape"]

CLASSES: dict[str, str] = {
    "d": "0123456789",
    "h": "0123456789abcdef",
    "H": "0123456789ABCDEF",
    "l": "abcdefghijklmnopqrstuvwxyz0123456789",
    "a": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "u": "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
    "an": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
    "w": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_",
    "url": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-",
    "b64": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/",
    "b64p": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/=",
    "b32": "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567",
    "bech": "qpzry9x8gf2tvdw0s3jn54khce6mua7l",
    "dot": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-",
    # classes of single providers' documented alphabets
    "hx": "0123456789abcdefABCDEF",
    "lo": "abcdefghijklmnopqrstuvwxyz",
    "b32l": "abcdefghijklmnopqrstuvwxyz234567",
    "bechu": "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
    "ue": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-=",
    "dote": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-=",
    "az": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.~-",
    "fly": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-=,/+",
    "cook": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-/+=%\\",
    "pct": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789%",
    "hy": "0123456789abcdef-",
    "ld": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-",
    "b64u": "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/_=-",
    "sp": " \t",
}

_PART = re.compile(r"\{([a-zA-Z0-9]+):(\d+)(?:(,)(\d*))?\}")


def _charclass(chars: str) -> str:
    return "[" + "".join("\\" + c if c in "\\]^-[" else c for c in chars) + "]"


@dataclass(frozen=True, slots=True)
class Shape:
    """A parsed format: its RE2 body, the characters its last part may hold, and a sampler."""

    body: str
    last_chars: str
    bounded_end: bool
    parts: tuple[tuple[str, str | tuple[str, int, int | None]], ...]

    @property
    def literals(self) -> tuple[str, ...]:
        """Strings one of which every value of this shape holds: the alternatives of its longest
        literal part (``(glpat|glrt)-`` gives ``glpat-`` and ``glrt-``); empty when it has none."""
        best: tuple[str, ...] = ()
        for kind, spec in self.parts:
            if kind == "lit" and isinstance(spec, str):
                alts = _spellings(spec)
                if alts and min(map(len, alts)) > min(map(len, best), default=0):
                    best = alts
        return best

    def sample(self, seed: int, short: bool = False) -> str:
        """A value of this shape (the minimum counts); ``short``: the last random part one
        character too short (a known negative)."""
        rnd = random.Random(seed)
        out: list[str] = []
        last = max(i for i, (kind, _) in enumerate(self.parts) if kind == "cls")
        for i, (kind, spec) in enumerate(self.parts):
            if kind == "lit":
                assert isinstance(spec, str)
                out.append(re.sub(r"\(([^|()]*)(?:\|[^()]*)?\)\??", r"\1", spec))
                continue
            assert isinstance(spec, tuple)
            cls, lo, _hi = spec
            n = lo - 1 if short and i == last else lo
            chars = CLASSES[cls]
            out.append("".join(rnd.choice(chars) for _ in range(max(n, 0))))
        return "".join(out)


def parse_shape(fmt: str) -> Shape:
    parts: list[tuple[str, str | tuple[str, int, int | None]]] = []
    body: list[str] = []
    pos = 0
    last_chars = ""
    bounded = True
    for m in _PART.finditer(fmt):
        if m.start() > pos:
            lit = fmt[pos : m.start()]
            parts.append(("lit", lit))
            body.append(_literal(lit))
        cls, lo = m.group(1), int(m.group(2))
        hi: int | None = lo if m.group(3) is None else (int(m.group(4)) if m.group(4) else None)
        parts.append(("cls", (cls, lo, hi)))
        count = f"{{{lo}}}" if hi == lo else f"{{{lo},{'' if hi is None else hi}}}"
        body.append(_charclass(CLASSES[cls]) + count)
        last_chars, bounded = CLASSES[cls], hi is not None
        pos = m.end()
    if pos < len(fmt):
        lit = fmt[pos:]
        parts.append(("lit", lit))
        body.append(_literal(lit))
        last_chars, bounded = "", True
    return Shape("".join(body), last_chars, bounded, tuple(parts))


def _spellings(lit: str) -> tuple[str, ...]:
    """Every spelling of a literal part, or, where a group may be left out (``(SB-)?Mid-``), its
    longest fixed piece alone (a value may hold no other whole)."""
    fixed: list[str] = []
    choices: list[list[str]] = []
    optional = False
    pos = 0
    for m in _GROUP.finditer(lit):
        fixed.append(lit[pos : m.start()])
        choices += [[lit[pos : m.start()]], m.group(1).split("|")]
        optional = optional or bool(m.group(2))
        pos = m.end()
    fixed.append(lit[pos:])
    choices.append([lit[pos:]])
    if optional:
        longest = max(fixed, key=len)
        return (longest,) if longest else ()
    return tuple("".join(c) for c in itertools.product(*choices))


_GROUP = re.compile(r"\(([^()]*)\)(\?)?")


def _literal(text: str) -> str:
    # ``(a|b)`` stays an alternation and ``(a|b)?`` an optional one (a ``?`` written after the
    # group was once escaped as a literal question mark, so ``(SB-)?Mid-server-…`` matched no
    # real key); everything else is escaped.
    out, pos = [], 0
    for m in re.finditer(r"\(([^()]*)\)(\?)?", text):
        out.append(re2.escape(text[pos : m.start()]))
        out.append("(?:" + "|".join(re2.escape(a) for a in m.group(1).split("|")) + ")" + (m.group(2) or ""))
        pos = m.end()
    out.append(re2.escape(text[pos:]))
    return "".join(out)
