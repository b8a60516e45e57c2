"""The scanner's first pass on Vectorscan (PyPI ``hyperscan``) beside its RE2 sets.

Why: the first pass only says which patterns can match anywhere in a text. RE2's sets answer that
with a DFA built lazily, state by state, as the text needs them; a big prompt of new code needs
new states, so each one pays for building them again (3 MB of installed packages' sources: 500 –
560 ms of set passes new, 95 ms the same text again). Vectorscan compiles its automata ahead of
time: ≈ 90 ms on every such text, new or not. On text whose states RE2 has built already it is the
dearer one (templated prose: 30 against 15 ms per MB), so a long text takes whichever has cost
less lately (``FirstPassChoice``) and a short one the sets (bench/RESULTS.md, "The first pass
compiled ahead").

What it must keep: never leave out a pattern that matches. Every pattern is compiled in
Vectorscan's prefilter mode, which may report a pattern that does not match but never misses one,
and widened further here before that (``widen``: counted repeats lose their upper bound, which
cut the compile from about 30 s to 6); the pattern itself then runs in RE2 as before and decides.
Without ``HS_FLAG_UCP``, ``\\b``, ``\\w`` and ``\\d`` are ASCII, as in RE2; ``\\S`` is spelt as RE2
reads it, and a Unicode property (older tables in Vectorscan) is left to RE2. A pattern left out
so, or that Vectorscan refuses, is run on every text. ``tests/tiers/test_prefilter.py`` holds scans with
this pass to scans that run every pattern.

Compiling takes seconds (the binding releases the interpreter lock while it does), so a
``Classifier`` is never built with it: the gateway compiles it once in the background, keeps the
serialised database in its cache, and attaches it (``gateway/prefilter.py``); ``tiers`` itself
reads and writes nothing.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .errors import TiersError

_hs: Any
try:  # an optional dependency: wheels for x86-64 Linux (pyproject.toml); elsewhere RE2 sets only
    import hyperscan as _hs
except ImportError:  # pragma: no cover - the wheel is installed where the tests run
    _hs = None

__all__ = [
    "FirstPass",
    "FirstPassChoice",
    "Prefilter",
    "PrefilterError",
    "available",
    "compile_members",
    "key_of",
    "platform",
    "widen",
]

_FLAGS = 0 if _hs is None else _hs.HS_FLAG_PREFILTER | _hs.HS_FLAG_UTF8 | _hs.HS_FLAG_SINGLEMATCH
# A counted repeat with a larger upper bound loses it (``{0,60}`` -> ``{0,}``): Vectorscan unrolls
# bounded repeats into automaton states, and its compile time grows with the bound.
_KEEP_BOUND = 8


class PrefilterError(TiersError):
    """The prefilter cannot be compiled or attached (no Vectorscan, a database of other patterns,
    or one built for another CPU); the scanner keeps its RE2 sets."""


def available() -> bool:
    """Whether Vectorscan can be imported here."""
    return _hs is not None


@functools.lru_cache(maxsize=1)
def platform() -> str:
    """The instruction-set features a database compiled here is built for ("generic", "avx2",
    "avx2-avx512" …, as Vectorscan names them). A database of other features does not load here:
    a cache that machines of several kinds share keeps one file per kind. "none" without Vectorscan."""
    if _hs is None:
        return "none"
    probe = _hs.Database(mode=_hs.HS_MODE_BLOCK)
    probe.compile(expressions=[b"a"], ids=[0], flags=[0])  # a third of a millisecond
    return _features(bytes(probe.info()).decode("ascii", "replace"))


def _features(info: str) -> str:
    """``Database.info()``'s features as a file-name part: ``"Version: 5.4.12 Features: AVX2
    Mode: BLOCK"`` -> ``"avx2"``; none named -> ``"generic"``."""
    features = re.search(r"Features:([^:]*?)(?:Mode:|$)", info)
    words = re.findall(r"[A-Za-z0-9_]+", features.group(1) if features else "")
    return "-".join(w.lower() for w in words) or "generic"


def widen(pattern: str, *, anchors: bool = True) -> str | None:
    """``pattern`` made to match at least where it matches in RE2, for Vectorscan: every counted
    repeat above ``_KEEP_BOUND`` unbounded, ``\\S`` with the vertical tab RE2 counts in it (RE2's
    ``\\s`` is ``[\\t\\n\\f\\r ]``, Vectorscan's adds ``\\v``), and with ``anchors=False`` every ``^``
    dropped. None where that cannot be done here: a Unicode property (``\\p{L}``; Vectorscan's
    tables are years older than RE2's, so tens of thousands of letters are none to it).

    Braces and carets inside a character class, after a backslash or in ``\\Q…\\E`` are text."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            pair = pattern[i : i + 2]
            if pair in ("\\p", "\\P"):
                return None
            if pair == "\\Q":
                close = pattern.find("\\E", i + 2)
                stop = n if close < 0 else close + 2
                out.append(pattern[i:stop])
                i = stop
                continue
            out.append("[^\\t\\n\\f\\r ]" if pair == "\\S" else pair)
            i += 2
        elif c == "[":
            end = _class_end(pattern, i)
            body = _class_body(pattern[i:end])
            if body is None:
                return None
            out.append(body)
            i = end
        elif c == "{":
            m = _COUNTED.match(pattern, i)
            if m is not None and int(m.group(2)) > _KEEP_BOUND:
                out.append(f"{{{m.group(1)},}}")
                i = m.end()
            else:
                out.append(c)
                i += 1
        elif c == "^" and not anchors:
            i += 1  # an anchor dropped: it only ever narrows where a pattern matches
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _class_end(pattern: str, start: int) -> int:
    """The index after the character class that opens at ``start``."""
    i = start + 1
    if i < len(pattern) and pattern[i] == "^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":  # a "]" first in a class is a character
        i += 1
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
        elif c == "[" and pattern.startswith("[:", i) and (close := pattern.find(":]", i + 2)) > 0:
            i = close + 2  # a POSIX class such as [:alpha:]
        elif c == "]":
            return i + 1
        else:
            i += 1
    return len(pattern)


_COUNTED = re.compile(r"\{([0-9]+),([0-9]+)\}")


def _class_body(cls: str) -> str | None:
    """A character class (``[…]``, as written) that holds at least what RE2's holds."""
    if "\\p" in cls or "\\P" in cls:
        return None
    negated = cls.startswith("[^")
    head = 2 if negated else 1
    out: list[str] = []
    vertical_tab = False
    i = head
    while i < len(cls):
        pair = cls[i : i + 2]
        if pair[:1] == "\\" and len(pair) == 2:
            if pair == "\\s" and negated:
                out.append("\\t\\n\\f\\r ")  # not Vectorscan's \\s, which takes \\v out too
            else:
                vertical_tab = vertical_tab or (pair == "\\S" and not negated)
                out.append(pair)
            i += 2
        elif i == head and cls[i] == "]":
            out.append("\\]")  # a "]" first is a character; it is not first once \\x0b leads
            i += 1
        else:
            out.append(cls[i])
            i += 1
    # RE2's \\S holds the vertical tab, Vectorscan's not: it leads the class, where it starts no range
    return cls[:head] + ("\\x0b" if vertical_tab else "") + "".join(out)


def key_of(patterns: Sequence[str]) -> str:
    """What a database must have been compiled from: this module's format, the library's version,
    the flags and the expressions Vectorscan is given (``widen``'s output: a fix there is a new
    key). Written into the database's head and checked when it is attached."""
    version = "none" if _hs is None else str(getattr(_hs, "__version__", "unknown"))
    widened = [[widen(p), widen(p, anchors=False)] for p in patterns]
    blob = json.dumps([_FORMAT, version, _FLAGS, widened]).encode()
    return hashlib.sha256(blob).hexdigest()


def _compiles(expression: str) -> bool:
    return _compiled([(0, expression)]) is not None


def _compiled(members: list[tuple[int, str]]) -> Any:
    """A database of ``members`` (id, expression), or None when Vectorscan refuses one of them."""
    assert _hs is not None
    db = _hs.Database()
    try:
        db.compile(
            expressions=[e.encode() for _, e in members],
            ids=[i for i, _ in members],
            elements=len(members),
            flags=[_FLAGS] * len(members),
        )
    except _hs.error:
        return None
    return db


def compile_members(patterns: Sequence[str]) -> bytes:
    """The serialised database of ``patterns`` (RE2 syntax), widened, under ``key_of(patterns)``.
    A member that cannot be widened here (``widen``: None) or that Vectorscan refuses (a ``^``
    inside a group, say; tried without its anchors first) is left out and runs on every text.
    Takes seconds; the interpreter lock is free meanwhile."""
    if _hs is None:
        raise PrefilterError("Vectorscan (the hyperscan package) is not installed")
    given = [(i, e) for i, p in enumerate(patterns) if (e := widen(p)) is not None]
    db = _compiled(given)
    if db is None:
        # One member spoils the whole compile, and the binding does not say which. A "^" inside a
        # group is what it refused so far: such members are tried alone first, and every member
        # alone only if that was not it (seconds more).
        retried = []
        for i, e in given:
            bare = widen(patterns[i], anchors=False)
            retried.append((i, bare) if bare is not None and bare != e and not _compiles(e) else (i, e))
        given = retried
        db = _compiled(given)
    if db is None:
        given = [(i, e) for i, e in given if _compiles(e)]
        db = _compiled(given)
        if db is None:
            raise PrefilterError("the prefilter does not compile")
    # The members left out travel with the database: they run on every text.
    left_out = sorted(set(range(len(patterns))) - {i for i, _ in given})
    head = _MAGIC + key_of(patterns).encode() + b"\n" + ",".join(map(str, left_out)).encode() + b"\n"
    return head + bytes(_hs.dumpb(db))


_FORMAT = 2  # of the head below and of ``widen``'s rules
_MAGIC = b"tiergate-prefilter\n"
# the head: the key (64 hex digits), then the members left out (decimal, comma-separated)
_HEAD = re.compile(rb"tiergate-prefilter\n([0-9a-f]{64})\n((?:[0-9]{1,6}(?:,[0-9]{1,6})*)?)\n")


class Prefilter:
    """A compiled database: ``matching(subject)`` is the members (indices into the patterns it was
    compiled from) that may match ``subject``. Thread-safe: each thread scans with its own
    scratch space, as Vectorscan requires."""

    def __init__(self, blob: bytes, size: int, key: str) -> None:
        if _hs is None:
            raise PrefilterError("Vectorscan (the hyperscan package) is not installed")
        head = _HEAD.match(blob)
        if head is None:
            raise PrefilterError("not a prefilter database this version wrote")
        if head.group(1).decode() != key:
            raise PrefilterError("the prefilter database was compiled from other patterns")
        left_out = [int(i) for i in head.group(2).split(b",") if i]
        if any(i >= size for i in left_out):
            raise PrefilterError("the prefilter database names members the patterns do not have")
        # members that run on every text (not in the database)
        self.always: tuple[int, ...] = tuple(left_out)
        try:
            self._db = _hs.loadb(blob[head.end() :], _hs.HS_MODE_BLOCK)
            self._first = _hs.Scratch(self._db)
        except _hs.error as exc:  # another library version, damaged, or a CPU without its instructions
            raise PrefilterError(f"the prefilter database does not load here: {exc}") from None
        self.size = size
        self._local = threading.local()

    def _scratch(self) -> Any:
        scratch = getattr(self._local, "scratch", None)
        if scratch is None:
            scratch = self._local.scratch = self._first.clone()
        return scratch

    def matching(self, subject: bytes) -> list[int]:
        """The members that may match ``subject`` (UTF-8); raises ``PrefilterError``."""
        found: list[int] = []
        add = found.append

        def on_match(member: int, _start: int, _end: int, _flags: int, _context: object) -> None:
            add(member)

        assert _hs is not None
        try:
            self._db.scan(subject, match_event_handler=on_match, scratch=self._scratch())
        except _hs.error as exc:
            raise PrefilterError(f"the prefilter's scan failed: {exc}") from None
        if found and max(found) >= self.size:  # a database of more members than the patterns
            raise PrefilterError("the prefilter reported a member the patterns do not have")
        return found


@dataclass(frozen=True, slots=True)
class FirstPass:
    """How one scan takes its first pass: ``prefilter`` (else the RE2 sets) over the whole text,
    and ``sample`` bytes of its middle timed with the other pass as well (0: none)."""

    prefilter: bool
    sample: int = 0


class FirstPassChoice:
    """Which first pass a scan takes once a prefilter is attached: RE2's sets for a short text,
    and for a long one whichever's recent CPU cost per byte is lower.

    Neither wins everywhere (bench/RESULTS.md, "The first pass compiled ahead"). On text new to
    it RE2 builds DFA states: 3 MB of new code, 240 – 590 ms of set passes against Vectorscan's
    95. On text whose states it has built already RE2 is cheaper: 1 MB of templated prose (the
    benchmark's big bodies), 15 against 30 ms; a 1 KB chat, 42 against 48 µs, so short texts
    keep the sets. Both give the same findings, so a scan may take either: each one's cost is
    kept as a moving average. The dearer one is timed now and then (every ``EXPLORE`` long
    scans, and while it has no measurement) on a sample of the text only, so that a change of
    traffic is noticed without one prompt paying the dearer pass over all of it: a whole 3 MB
    prompt of new code through the sets cost 780 ms, the cheaper pass 350. The sets' sample is
    read after the bytes before it (``Scanner._first_pass``): timed cold, a sixteenth carried the
    whole text's state building alone, and templated prose read 6 – 10 times its whole-text cost
    per byte. Updates race between threads harmlessly: they are estimates."""

    EXPLORE = 16
    LONG = 65_536  # bytes: a text this long may take the prefilter
    SAMPLE_MIN = 16_384  # bytes: a sample of a long text is a sixteenth of it, within these
    SAMPLE_MAX = 262_144
    _WEIGHT = 0.5  # of the newest measurement in the moving average

    def __init__(self) -> None:
        self._sets: float | None = None  # seconds per byte, recently; None: not measured yet
        self._prefilter: float | None = None
        self._since = 0  # long scans since the dearer pass was last timed

    def choose(self, size: int) -> FirstPass:
        """How a scan of ``size`` bytes takes its first pass."""
        if size < self.LONG:
            return FirstPass(prefilter=False)
        sample = min(max(size // 16, self.SAMPLE_MIN), self.SAMPLE_MAX)
        if self._prefilter is None:  # Vectorscan's cost hardly depends on the text: take it first
            return FirstPass(prefilter=True, sample=sample if self._sets is None else 0)
        if self._sets is None:
            return FirstPass(prefilter=True, sample=sample)
        cheaper = self._prefilter <= self._sets
        self._since += 1
        if self._since < self.EXPLORE:
            return FirstPass(prefilter=cheaper)
        self._since = 0
        return FirstPass(prefilter=cheaper, sample=sample)

    def record(self, size: int, prefilter: bool, seconds: float) -> None:
        """What a first pass over ``size`` bytes cost (a whole long text's or a sample's; shorter
        ones teach nothing: their cost is mostly the pass's fixed part)."""
        if size < self.SAMPLE_MIN:
            return
        per_byte = seconds / size
        old = self._prefilter if prefilter else self._sets
        new = per_byte if old is None else old + self._WEIGHT * (per_byte - old)
        if prefilter:
            self._prefilter = new
        else:
            self._sets = new
