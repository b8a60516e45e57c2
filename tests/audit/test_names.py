"""Disclosure names in SQL (``audit.names``): the database agrees with a plain reading of the
pattern, for any name, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import String, literal, select
from sqlalchemy.ext.asyncio import create_async_engine

from audit.names import like_pattern, matches, name_matches

# Letters in both cases, the characters LIKE treats as special, and those model ids carry.
ALPHABET = "aAbBzZ09%_\\*-./@:"
names = st.text(alphabet=ALPHABET.replace("*", ""), max_size=8)
patterns = st.text(alphabet=ALPHABET, max_size=8)


def reference(value: str, name: str) -> bool:
    """What the docs promise: exact unless there is a ``*``; a pattern ignores ASCII case."""
    if "*" not in name:
        return value == name
    regex = ".*".join(re.escape(part) for part in name.split("*"))
    return re.fullmatch(regex, value, re.IGNORECASE | re.DOTALL) is not None


def test_like_pattern_escapes() -> None:
    assert like_pattern("@cf/zai_org/*") == "@cf/zai\\_org/%"
    assert like_pattern("100%*") == "100\\%%" and like_pattern("a\\b*") == "a\\\\b%"


@st.composite
def near_misses(draw: st.DrawFn, name: str) -> str:
    """A value built from ``name``: each ``*`` filled, then maybe one character swapped or its case
    flipped, so that values close to matching (where an unescaped ``%`` or ``_`` would differ)
    are common."""
    value = "".join(draw(names) if ch == "*" else ch for ch in name)
    if value and draw(st.booleans()):
        i = draw(st.integers(0, len(value) - 1))
        swapped = value[i].swapcase() if draw(st.booleans()) else draw(st.sampled_from(ALPHABET.replace("*", "")))
        value = value[:i] + swapped + value[i + 1 :]
    return value


@st.composite
def cases(draw: st.DrawFn) -> tuple[list[str], list[str]]:
    given_names = draw(st.lists(patterns, min_size=1, max_size=3))
    values = draw(st.lists(st.sampled_from(given_names).flatmap(near_misses) | names, min_size=1, max_size=6))
    return values, given_names


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=cases())
def test_database_agrees_with_the_reference(db_url: str, case: tuple[list[str], list[str]]) -> None:
    """For every value, the SQL predicate is true exactly when one of the names matches it."""
    values, given_names = case

    async def check() -> list[bool]:
        engine = create_async_engine(db_url)
        try:
            async with engine.connect() as conn:
                return [bool((await conn.execute(select(name_matches(literal(v, String()), given_names)))).scalar())
                        for v in values]  # fmt: skip
        finally:
            await engine.dispose()

    got = asyncio.run(check())
    assert got == [any(reference(v, n) for n in given_names) for v in values]
    assert got == [matches(v, given_names) for v in values]  # the Python twin agrees
