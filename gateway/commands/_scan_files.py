"""What ``tiergate scan`` looks at and what it reports per file, offline.

Files are walked in sorted order (``.git`` and other VCS folders pruned, symlinked folders not
followed), binary files (a NUL byte in the first 8 KB) and files over the size limit skipped,
text read as UTF-8 (Latin-1 if it is not). Each file is classified as one segment, as an agent
sending it whole would; the report holds the tier, per entity type the count and line numbers,
and what a shared vendor would receive under the policy. Never a value.
"""

from __future__ import annotations

import os
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tiers import Classifier, Content, Segment, Tier
from tiers.types import UpstreamKind

__all__ = ["FileReport", "Skipped", "iter_files", "read_text", "scan_text"]

_VCS = frozenset({".git", ".hg", ".svn", ".bzr", "_darcs", ".jj"})
_SNIFF = 8192


@dataclass(frozen=True, slots=True)
class Skipped:
    path: str
    why: str


@dataclass(frozen=True, slots=True)
class EntityLines:
    entity: str
    count: int
    lines: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class FileReport:
    """One file's outcome. ``shared`` is what a shared vendor would get: ``"as is"``,
    ``"stripped"`` or ``"refused"`` (the tier may not go to a shared endpoint)."""

    path: str
    tier: Tier
    entities: tuple[EntityLines, ...]
    shared: str
    failed_closed: bool = False
    reasons: tuple[str, ...] = ()
    stripped: str | None = field(default=None, repr=False)


def iter_files(paths: list[str], max_bytes: int) -> Iterator[tuple[str, Path] | Skipped]:
    """Every file under ``paths`` (files as given, folders walked), or why one is skipped."""
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if d not in _VCS and not os.path.islink(os.path.join(root, d)))
                for name in sorted(files):
                    fp = Path(root, name)
                    yield _check(str(fp), fp, max_bytes)
        elif p.is_file():
            yield _check(raw, p, max_bytes)
        else:
            yield Skipped(raw, "not found")


def _check(display: str, p: Path, max_bytes: int) -> tuple[str, Path] | Skipped:
    try:
        size = p.stat().st_size
    except OSError as exc:
        return Skipped(display, f"unreadable ({type(exc).__name__})")
    if size > max_bytes:
        return Skipped(display, f"larger than {max_bytes} bytes")
    return display, p


def read_text(data: bytes) -> str | None:
    """The file's text, or None for a binary file."""
    if b"\x00" in data[:_SNIFF]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def scan_text(clf: Classifier, path: str, text: str, *, tenant: str | None, keep_stripped: bool) -> FileReport:
    """Classify ``text`` as one segment and report it."""
    content = Content((Segment(("file",), text),))
    decision = clf.classify(content, tenant=tenant)
    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
    lines: dict[str, list[int]] = {}
    ends: dict[str, int] = {}
    # overlapping findings of one type (two recognizers, one value) count once, as stripped
    for f in sorted(decision.findings, key=lambda f: (f.entity_type, f.start, -f.end)):
        if f.start < ends.get(f.entity_type, -1):
            ends[f.entity_type] = max(ends[f.entity_type], f.end)
            continue
        ends[f.entity_type] = f.end
        lines.setdefault(f.entity_type, []).append(bisect_right(starts, f.start))
    entities = tuple(EntityLines(e, len(ls), tuple(sorted(set(ls)))) for e, ls in sorted(lines.items()))
    rule = clf.policy_for(tenant).rule(decision.tier)
    stripped: str | None = None
    if not rule.allows(UpstreamKind.SHARED):
        shared = "refused"
    elif rule.must_strip(UpstreamKind.SHARED) and decision.findings:
        shared = "stripped"
        if keep_stripped:
            stripped = clf.strip(content, decision).content.segments[0].text
    else:
        shared = "as is"
        stripped = text if keep_stripped else None
    return FileReport(path, decision.tier, entities, shared, decision.failed_closed, decision.reasons, stripped)
