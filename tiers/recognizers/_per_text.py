"""One value per text, kept for the last text read.

Every candidate of a scan asks its checks about the same text; a check that reads the whole text
(the eponyms it writes, the names it defines) reads it once. The value outlives the request until
the next text is read, so it holds nothing of the text itself: hashes of its strings, not the
strings.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import TypeVar

__all__ = ["per_text"]

T = TypeVar("T")


def per_text(read: Callable[[str], T]) -> Callable[[str], T]:
    """``read`` remembered for the last text it was given (by identity, length and hash)."""
    last: tuple[tuple[int, int, int], T] | None = None

    @wraps(read)
    def value(text: str) -> T:
        nonlocal last
        key = (id(text), len(text), hash(text))
        memo = last  # one read of the pair: another thread may replace it, never half of it
        if memo is not None and memo[0] == key:
            return memo[1]
        result = read(text)
        last = (key, result)
        return result

    return value
