"""Turn a Python regex that RE2 cannot run into a looser RE2 pattern used as a prefilter.

Look-arounds are removed and back-references replaced by a short wildcard, so the loose pattern
matches everywhere the original could (plus more). The original then runs, with a timeout, only
in small windows around the loose pattern's matches.
"""

from __future__ import annotations

__all__ = ["relax"]

_BACKREF = r"[\s\S]{0,16}?"


def _skip_class(p: str, i: int) -> int:
    """Index just past the character class starting at ``p[i] == '['``."""
    j = i + 1
    if j < len(p) and p[j] == "^":
        j += 1
    if j < len(p) and p[j] == "]":
        j += 1
    while j < len(p) and p[j] != "]":
        j += 2 if p[j] == "\\" else 1
    return j + 1


def _skip_group(p: str, i: int) -> int:
    """Index just past the group starting at ``p[i] == '('``."""
    depth = 0
    j = i
    while j < len(p):
        c = p[j]
        if c == "\\":
            j += 2
            continue
        if c == "[":
            j = _skip_class(p, j)
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return j


def relax(pattern: str) -> str:
    """A looser version of ``pattern`` without look-arounds or back-references."""
    out: list[str] = []
    i = 0
    p = pattern
    while i < len(p):
        c = p[i]
        if c == "\\" and i + 1 < len(p):
            nxt = p[i + 1]
            if nxt.isdigit() and nxt != "0":
                out.append(_BACKREF)
                i += 2
                while i < len(p) and p[i].isdigit():
                    i += 1
                continue
            if nxt == "Z":
                out.append(r"\z")
            else:
                out.append(p[i : i + 2])
            i += 2
            continue
        if c == "[":
            j = _skip_class(p, i)
            out.append(p[i:j])
            i = j
            continue
        if c == "(" and p.startswith(("(?=", "(?!", "(?<=", "(?<!"), i):
            i = _skip_group(p, i)
            # a quantifier on a removed look-around would now dangle
            while i < len(p) and p[i] in "?*+":
                i += 1
            continue
        if c == "(" and p.startswith("(?P=", i):
            j = p.index(")", i)
            out.append(_BACKREF)
            i = j + 1
            continue
        if c == "(" and p.startswith("(?>", i):
            out.append("(?:")
            i += 3
            continue
        out.append(c)
        i += 1
    return "".join(out)
