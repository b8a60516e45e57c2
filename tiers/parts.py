"""One request's scan cut into parts that separate processes run at once (issue 12).

RE2, the normalisation tables and the recognizers' validators all hold the interpreter lock, so
one long prompt in one process uses one core. ``plan`` cuts the content into ``parts`` shares of
about equal length; ``part_findings`` finds what one share holds; ``merge`` puts the shares'
findings together. Merged, they are the findings of ``Classifier.findings`` on the whole content,
span for span and in the same order, because of where the cuts go and what each share reads:

- A segment longer than ``split_at`` is cut into pieces at line starts. A piece keeps the
  findings that *start* in it, and is scanned in a window that reaches ``overlap`` characters
  further on both sides, rounded out to whole lines: a line that starts in the piece is read
  whole however long it is, and a value, a context word, a ``.netrc`` entry or a key block that
  starts in the piece and ends within ``overlap`` of it is read as the whole scan reads it.
- Normalisation maps one character, or one ``%XX`` run, at a time and never across a line
  break, so a window's normal form is that of the whole text, line for line.
- A table's header row is the first line of its block (lines up to a blank one): the date of
  birth and company-column recognizers look that far back. A window therefore starts at its
  block when the block starts up to ``MAX_BACK`` before it, else it is read after a copy of the
  block's first line, as the whole scan would see it; hits inside that copy are dropped.
- Short segments (scanned joined, giving each other context) stay together in one share, and
  a long segment's first piece is read after the short segment before it, as the whole scan is.
- Ties (findings that start at the same place) are ordered by a total key (``sort_key``), in
  the classifier too, so the order never depends on how the text was read.

Where the text has no line break near a cut, the segment is not cut there; a classifier with an
NLP model is never split. ``tests/tiers/test_parts.py`` compares merged shares with the whole
scan on generated texts with identifiers planted across the cuts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .normalize import normalize_text
from .types import Content, Finding, Segment

if TYPE_CHECKING:
    from .classifier import Classifier

__all__ = ["MAX_BACK", "OVERLAP", "SPLIT_AT", "Piece", "merge", "part_findings", "plan", "sort_key"]

# A segment shorter than this is not cut: a share's fixed costs (parsing the body again, a worker
# hand-off) outweigh what a second core saves on less.
SPLIT_AT = 262_144
# Read beyond each side of a piece: well past the longest multi-line value a recognizer reports
# (an 8192-bit PEM key is ≈ 6.5 KB) and the context a recognizer looks at (64 characters).
OVERLAP = 16_384
# How far before a window its block's start may lie for the window to start there instead.
MAX_BACK = 65_536
# Short segments: all of them are one unit, whatever the part count (see the module docstring).
_BATCH_CHARS = 512


# A line that may normalise to nothing (zero-width characters, a combining mark, their %-escapes):
# none of the ASCII characters that always stay. The recognizers find a block's end in the
# normalised text, where such a line is blank.
_MAYBE_BLANK = re.compile(r"\n([^\n\x20-\x24\x26-\x2f\x3a-\x40\x47-\x60\x67-\x7e]*)(?=\n)")


def _block_start(text: str, lo: int, after_blank: bool) -> int:
    """The start of the block holding ``lo`` as the recognizers see it: after the last line before
    ``lo`` that is blank once normalised (a raw empty line is one, ``\\n\\u200b\\n`` too). Read
    ``after_blank`` (after a lead, which ends in a blank line), an empty first line is one too."""
    blank = text.rfind("\n\n", 0, lo)
    block = 0 if blank < 0 else blank + 2
    first = text.find("\n", 0, lo)
    if after_blank and block == 0 and first >= 0 and normalize_text(text[:first]) == "":
        block = first + 1
    for m in _MAYBE_BLANK.finditer(text, max(0, blank), lo):
        if m.end() + 1 > block and normalize_text(m.group(1)) == "":
            block = m.end() + 1
    return block


@dataclass(frozen=True, slots=True)
class Piece:
    """The findings of segment ``segment`` that start in ``[lo, hi)``, read in the window
    ``[win_lo, win_hi)`` after ``head`` (a copy of the block's first line and a line break, or
    empty). ``segment == -1`` is the unit of all short segments."""

    segment: int
    lo: int
    hi: int
    win_lo: int
    win_hi: int
    head: str = field(default="", repr=False)  # a line of the prompt: never in a repr

    @property
    def size(self) -> int:
        return self.win_hi - self.win_lo


def sort_key(f: Finding) -> tuple[int, int, int, str, str, float]:
    """The order of a request's findings: by segment and start, ties by a total key."""
    return (f.segment, f.start, -f.end, f.entity_type, f.recognizer, -f.score)


def _cut_near(text: str, target: int, lo: int, hi: int) -> int | None:
    """A line start in ``(lo, hi)`` near ``target``: the first after it, else the last before."""
    k = text.find("\n", target - 1, hi - 1)
    if k >= 0:
        return k + 1
    k = text.rfind("\n", lo, target - 1)
    return k + 1 if k >= 0 and k + 1 > lo else None


def _pieces(
    text: str, segment: int, count: int, split_at: int, overlap: int, max_back: int, lead: bool = False
) -> list[Piece]:
    n = len(text)
    count = min(count, max(1, n // max(1, split_at // 2)))
    if n <= split_at or count < 2:
        return [Piece(segment, 0, n, 0, n)]
    cuts = [0]
    step = n // count
    for k in range(1, count):
        c = _cut_near(text, k * step, cuts[-1] + step // 2, min(n, k * step + step // 2))
        if c is not None and cuts[-1] < c < n:
            cuts.append(c)
    cuts.append(n)
    out: list[Piece] = []
    for lo, hi in zip(cuts, cuts[1:]):
        win_lo = 0 if lo - overlap <= 0 else text.rfind("\n", 0, lo - overlap) + 1
        end = text.find("\n", hi + overlap) if hi < n else -1
        win_hi = n if end < 0 else end + 1
        head = ""
        if win_lo > 0:
            block = _block_start(text, lo, lead)
            if block < win_lo:
                if win_lo - block <= max_back:
                    win_lo = block
                else:
                    stop = text.find("\n", block)
                    head = text[block:stop] + "\n"
        out.append(Piece(segment, lo, hi, win_lo, win_hi, head))
    return out


def plan(
    content: Content, parts: int, *, split_at: int = SPLIT_AT, overlap: int = OVERLAP, max_back: int = MAX_BACK
) -> list[list[Piece]]:
    """The units of work of each of ``parts`` shares (some may be empty). A pure function of the
    content, so that every process that read the same body makes the same plan."""
    units: list[Piece] = []
    short = 0
    for i, seg in enumerate(content.segments):
        if len(seg.text) <= _BATCH_CHARS:
            short += len(seg.text)
        else:
            # read after a lead (the short segment before, as in Classifier._lead) ending in a blank line
            prev = content.segments[i - 1].text if i > 0 else ""
            lead = 0 < len(prev) <= _BATCH_CHARS and normalize_text(prev) != ""
            units.extend(_pieces(seg.text, i, parts, split_at, overlap, max_back, lead))
    if short or not units:
        units.append(Piece(-1, 0, 0, 0, short))
    shares: list[list[Piece]] = [[] for _ in range(max(1, parts))]
    load = [0] * len(shares)
    # Longest first, each to the least loaded share: deterministic (ties by position).
    for unit in sorted(units, key=lambda u: -u.size):
        k = min(range(len(shares)), key=lambda j: (load[j], j))
        shares[k].append(unit)
        load[k] += unit.size
    return shares


def _unit_findings(clf: Classifier, content: Content, unit: Piece, checkpoint: Callable[[], None]) -> Iterable[Finding]:
    segments = content.segments
    if unit.segment < 0:
        short = [i for i, seg in enumerate(segments) if len(seg.text) <= _BATCH_CHARS]
        sub = Content(tuple(segments[i] for i in short))
        for f in clf.findings(sub, checkpoint):
            yield Finding(f.entity_type, short[f.segment], f.start, f.end, f.recognizer, f.score)
        return
    i = unit.segment
    seg = segments[i]
    # The short segment before a long one is its context (its key): read it where the whole scan does.
    lead = unit.win_lo == 0 and i > 0 and len(segments[i - 1].text) <= _BATCH_CHARS
    shift = unit.win_lo - len(unit.head)
    n = len(seg.text)
    win_hi, grow = unit.win_hi, max(1, unit.win_hi - unit.hi)
    while True:
        piece = Segment(seg.path, unit.head + seg.text[unit.win_lo : win_hi], seg.prompt, seg.kind, seg.via)
        sub = Content((segments[i - 1], piece) if lead else (piece,))
        kept = [
            Finding(f.entity_type, i, f.start + shift, f.end + shift, f.recognizer, f.score)
            for f in clf.findings(sub, checkpoint)
            if f.segment == (1 if lead else 0) and f.start >= len(unit.head) and unit.lo <= f.start + shift < unit.hi
        ]
        # A value running to the window's end may go on beyond it (a key block's body has no
        # length limit): read further, each time twice as far, until every value ends inside.
        # "Ends inside" is text other than whitespace after it in the window, which holds for
        # every value when it holds for the one ending last (a slice per value was quadratic:
        # 6,000 values in a 1.5 MB window took 0.8 s).
        if win_hi >= n or not kept or seg.text[max(f.end for f in kept) : win_hi].strip():
            yield from kept
            return
        grow *= 2
        end = seg.text.find("\n", win_hi + grow)
        win_hi = n if end < 0 else end + 1


def part_findings(
    clf: Classifier,
    content: Content,
    part: int,
    parts: int,
    checkpoint: Callable[[], None] = lambda: None,
    *,
    split_at: int = SPLIT_AT,
    overlap: int = OVERLAP,
    max_back: int = MAX_BACK,
) -> list[Finding]:
    """The findings of share ``part`` of ``parts`` of ``content``; may raise, as
    ``Classifier.findings`` does."""
    units = plan(content, parts, split_at=split_at, overlap=overlap, max_back=max_back)[part]
    return [f for unit in units for f in _unit_findings(clf, content, unit, checkpoint)]


def merge(shares: Sequence[Iterable[Finding]]) -> list[Finding]:
    """The shares' findings as one request's, in the classifier's order."""
    return sorted((f for share in shares for f in share), key=sort_key)
