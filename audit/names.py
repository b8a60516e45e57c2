"""Names as a disclosure gives them: exact names, or ``*`` patterns (``@cf/zai-org/*``, ``glm-5*``).

A name without ``*`` must equal the column's value (an ``IN`` on an indexed column). In a pattern,
``*`` stands for any run of characters, nothing else is special (``%``, ``_`` and ``\\`` are
escaped for SQL ``LIKE``) and ASCII case is ignored: a pattern is a search, and for an exposure
assessment a match too many costs less than one missed. The same on SQLite and PostgreSQL.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from sqlalchemy import false, or_
from sqlalchemy.sql.elements import ColumnElement

__all__ = ["ESCAPE", "is_pattern", "like_pattern", "matches", "name_matches"]

ESCAPE = "\\"
_LIKE_SPECIAL = frozenset("%_" + ESCAPE)


def is_pattern(name: str) -> bool:
    return "*" in name


def like_pattern(pattern: str) -> str:
    """``*`` -> ``%``; every character ``LIKE`` would read as special is escaped with ``ESCAPE``."""
    out = []
    for ch in pattern:
        if ch == "*":
            out.append("%")
        elif ch in _LIKE_SPECIAL:
            out.append(ESCAPE + ch)
        else:
            out.append(ch)
    return "".join(out)


def name_matches(column: ColumnElement[str | None], names: Iterable[str]) -> ColumnElement[bool]:
    """True where ``column`` equals one of the exact names or matches one of the patterns."""
    names = tuple(names)
    exact = [n for n in names if not is_pattern(n)]
    alts: list[ColumnElement[bool]] = [column.in_(exact)] if exact else []
    # ilike: ILIKE on PostgreSQL, lower() LIKE lower() on SQLite (whose LIKE ignores ASCII case
    # anyway): the same answer on both for ASCII names.
    alts += [column.ilike(like_pattern(n), escape=ESCAPE) for n in names if is_pattern(n)]
    return or_(*alts) if alts else false()


def matches(value: str, names: Iterable[str]) -> bool:
    """The same test in Python, for names that are not in the database (the vendor register)."""
    for name in names:
        if not is_pattern(name):
            if value == name:
                return True
            continue
        regex = ".*".join(re.escape(part) for part in name.split("*"))
        if re.fullmatch(regex, value, re.IGNORECASE | re.DOTALL | re.ASCII):
            return True
    return False
