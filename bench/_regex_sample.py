"""Random strings that a regular expression matches, with the span of one capture group.

Outside scanners publish their rules as regexes, not as samples; drawing strings from those
regexes gives material whose shapes nobody here wrote. Characters are drawn uniformly from
printable ASCII within each class as written (a case-insensitive rule's ``[a-f0-9]`` stays lower
case, as the provider writes it; so values have the entropy of a real token), optional and
unbounded repeats stay short (a context such as ``[\\w.-]{0,50}?`` becomes a few characters),
look-arounds and anchors are skipped (a drawn string may then miss its frame; callers re-check
with the compiled pattern).

Go's RE2 syntax is first rewritten into Python's: flags in mid-pattern, ``\\z``, POSIX classes.
"""

from __future__ import annotations

import random
import re
import string
from dataclasses import dataclass
from re import _constants as c  # type: ignore[attr-defined]  # the parser's opcodes; no public API
from re import _parser  # type: ignore[attr-defined]  # Python's own regex parser; no public API
from typing import Any

__all__ = ["Drawn", "draw", "python_regex"]

_PRINTABLE = [chr(i) for i in range(33, 127)]
_FRAME = " \t\n'\"`;,<>(){}[]|"
_POSIX = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "digit": "0-9",
    "xdigit": "0-9a-fA-F",
    "upper": "A-Z",
    "lower": "a-z",
    "space": r"\s",
    "punct": r"!-/:-@\[-`{-~",
    "word": r"\w",
}


def python_regex(go: str) -> str:
    """The Go/RE2 pattern as Python reads it (for drawing and re-checking, not for speed)."""
    p = re.sub(r"\(\?[imsU]+\)", "", go)  # flags in mid-pattern; Python allows them only first
    p = re.sub(r"\[:(\w+):\]", lambda m: _POSIX.get(m.group(1), m.group(0)), p)
    p = p.replace(r"\z", r"\Z").replace("(?<", "(?P<").replace("(?P<=", "(?<=").replace("(?P<!", "(?<!")
    return re.sub(r"\\[pP]\{?L\}?", "a-zA-Z", p)


@dataclass(frozen=True, slots=True)
class Drawn:
    text: str
    group: tuple[int, int]  # span of the wanted group in ``text`` (the whole text if it has none)


def _category(cat: Any) -> str:
    name = str(cat).lower()
    chars = {
        "digit": string.digits,
        "word": string.ascii_letters + string.digits + "_",
        "space": " ",
    }
    for key, pool in chars.items():
        if key in name:
            if "not" in name:
                return "".join(ch for ch in _PRINTABLE if ch not in pool)
            return pool
    return "".join(_PRINTABLE)


def _class(items: list[tuple[Any, Any]]) -> list[str]:
    allowed: set[str] = set()
    negate = False
    for op, av in items:
        if op is c.NEGATE:
            negate = True
        elif op is c.LITERAL:
            allowed.add(chr(av))
        elif op is c.RANGE:
            allowed.update(chr(i) for i in range(av[0], av[1] + 1))
        elif op is c.CATEGORY:
            allowed.update(_category(av))
    if negate:
        return [ch for ch in _PRINTABLE + [" "] if ch not in allowed] or ["x"]
    return sorted(ch for ch in allowed if ch.isprintable() and ord(ch) < 127) or sorted(allowed)


class _Drawer:
    def __init__(self, rnd: random.Random) -> None:
        self.rnd = rnd
        self.out: list[str] = []

    def seq(self, items: Any) -> None:
        for op, av in items:
            self.one(op, av)

    def one(self, op: Any, av: Any) -> None:
        rnd = self.rnd
        if op is c.LITERAL:
            self.out.append(chr(av))
        elif op is c.NOT_LITERAL:
            self.out.append(rnd.choice([ch for ch in string.ascii_letters if ord(ch) != av]))
        elif op is c.ANY:
            # in rule sets a bare ``.`` is mostly an unescaped dot (``hooks.slack.com``)
            self.out.append(".")
        elif op is c.IN:
            self.out.append(rnd.choice(_class(av)))
        elif op is c.BRANCH:
            self.seq(rnd.choice(av[1]))
        elif op is c.SUBPATTERN:
            self.seq(av[3])
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", None)):
            lo, hi, sub = av
            extra = 2 if lo == 0 else 8
            n = lo + rnd.randint(0, max(0, min(hi - lo, extra)))
            for _ in range(n):
                self.seq(sub)
        elif op is getattr(c, "ATOMIC_GROUP", None):
            self.seq(av)
        elif op is c.CATEGORY:
            self.out.append(rnd.choice(_category(av)))
        # AT (anchors), ASSERT / ASSERT_NOT (look-arounds), GROUPREF: nothing drawn


def draw(pattern: str, rnd: random.Random, group: int = 1) -> Drawn | None:
    """One string ``pattern`` matches, with the span of ``group`` (None when no draw matches)."""
    try:
        compiled = re.compile(pattern)
        parsed = _parser.parse(pattern)
    except (re.error, OverflowError, RecursionError):
        return None
    for _ in range(20):
        d = _Drawer(rnd)
        d.seq(parsed.data)
        text = "".join(d.out)
        m = compiled.search(text)
        if m is None:
            continue
        # as gitleaks-style scanners read a rule: the wanted group, else the first one that took
        # part, else the whole match
        spans = [m.span(group)] if 0 < group <= compiled.groups else []
        spans += [m.span(g) for g in range(1, compiled.groups + 1)] + [m.span(0)]
        start, end = next(s for s in spans if s[1] > s[0] >= 0)
        if (start, end) == m.span(0):
            # a rule without a group consumes the character that frames its token (RE2 has no
            # look-arounds): that character is no part of the secret
            while end > start and text[end - 1] in _FRAME:
                end -= 1
            while start < end and text[start] in _FRAME:
                start += 1
        return Drawn(text, (start, end))
    return None
