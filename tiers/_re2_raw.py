"""RE2's raw matcher: every group's byte span in one call, checked once at import.

google-re2's Python wrapper builds a match object per match (≈ 15 µs, which dominates on
digit-heavy text); the scanner calls the binding underneath it instead:
``compiled._regexp.Match(re2._Anchor.UNANCHORED, data, pos, endpos)`` returns the (start, end) byte
span of the whole match and of each group, ``(-1, -1)`` where there is none. That is private API,
so :func:`spans_of` hands it out only when this module's check passed at import: the installed
release is of the minor version tested here (the pin in pyproject.toml keeps it so) and the
binding answers a probe as assumed. Otherwise it hands out the same contract built on the
public ``search`` (same spans, slower), and :data:`RAW_UNAVAILABLE` says why.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import re2

__all__ = ["NO_MATCH", "RAW_UNAVAILABLE", "TESTED_MINOR", "SpanMatcher", "spans_of"]

TESTED_MINOR = "1.1"  # google-re2 1.1.20251105
NO_MATCH = (-1, -1)

# (data, pos, endpos) -> [whole match, group 1, ...] as byte spans; [NO_MATCH, ...] when none.
SpanMatcher = Callable[[bytes, int, int], list[tuple[int, int]]]


def _probe(module: Any) -> str | None:
    """Why the raw matcher cannot be used with ``module``, or None when it can."""
    try:
        anchor = module._Anchor.UNANCHORED
        match = module.compile(b"(b)|(c)")._regexp.Match
        got = [tuple(s) for s in match(anchor, b"abc", 0, 3)]
        miss = [tuple(s) for s in match(anchor, b"xyz", 0, 3)]
    except Exception as exc:  # noqa: BLE001 -- whatever breaks, the public path still works
        return f"the binding's Match is not there as expected ({type(exc).__name__})"
    if got != [(1, 2), (1, 2), NO_MATCH] or miss[0] != NO_MATCH:
        return f"the binding's Match answered {got!r} / {miss!r}"
    return None


def _check() -> str | None:
    try:
        installed = version("google-re2")
    except PackageNotFoundError:
        return "google-re2's version is unknown"
    if installed.split(".")[:2] != TESTED_MINOR.split("."):
        return f"google-re2 {installed} is not the tested {TESTED_MINOR}.x"
    return _probe(re2)


RAW_UNAVAILABLE: str | None = _check()


def _public(rx: Any) -> SpanMatcher:
    groups = range(rx.groups + 1)

    def spans(data: bytes, pos: int, endpos: int) -> list[tuple[int, int]]:
        m = rx.search(data, pos, endpos)
        if m is None:
            return [NO_MATCH] * len(groups)
        return [m.span(g) for g in groups]

    return spans


def spans_of(rx: Any, *, raw: bool | None = None) -> SpanMatcher:
    """The span matcher of a compiled ``re2`` pattern (compiled from bytes or str: spans are in
    bytes of the UTF-8 subject either way). ``raw`` forces a path (tests compare the two)."""
    if raw is None:
        raw = RAW_UNAVAILABLE is None
    if not raw:
        return _public(rx)
    match = rx._regexp.Match
    anchor = re2._Anchor.UNANCHORED

    def spans(data: bytes, pos: int, endpos: int) -> list[tuple[int, int]]:
        return match(anchor, data, pos, endpos)  # type: ignore[no-any-return]  # the binding is untyped

    return spans
