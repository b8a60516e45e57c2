"""Replacing identifiers with consistent placeholders (``<EMAIL_1>``), on the original text.

Within one request the same value always gets the same placeholder, so the model can still tell
two people apart; across the turns of a conversation too, since numbering follows the order of
first appearance (see :func:`strip_content`). Restoring the model's answer never turns a literal
``<EMAIL_1>`` the user wrote into a value.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import replace
from functools import lru_cache

from .errors import StripError
from .types import Content, Decision, Finding, Segment, Stripped

__all__ = ["PLACEHOLDER_RE", "label_for", "strip_content"]

PLACEHOLDER_RE = re.compile(r"<[A-Z][A-Z0-9_]*_[0-9]+>")

_LABELS = {
    "EMAIL_ADDRESS": "EMAIL",
    "PHONE_NUMBER": "PHONE",
    "IP_ADDRESS": "IP",
    "MAC_ADDRESS": "MAC",
    "CREDIT_CARD": "CARD",
    "IBAN_CODE": "IBAN",
    "INTERNAL_HOST": "HOST",
    "CUSTOMER_NAME": "CUSTOMER",
    "SUPPLIER_NAME": "SUPPLIER",
    "EMPLOYEE_NAME": "EMPLOYEE",
}


@lru_cache(maxsize=1024)
def label_for(entity_type: str) -> str:
    """The placeholder label of an entity type (``EMAIL_ADDRESS`` -> ``EMAIL``): every finding
    asks, and a text has a few types (a user's recognizer may add more: the cache is bounded)."""
    label = _LABELS.get(entity_type, entity_type)
    return _NOT_LABEL.sub("_", label.upper()) or "ID"


_NOT_LABEL = re.compile(r"[^A-Z0-9_]")


class _Allocator:
    def __init__(self, taken: set[str]) -> None:
        self.taken = taken
        self.by_value: dict[tuple[str, str], str] = {}
        self.counters: dict[str, int] = defaultdict(int)
        self.mapping: dict[str, str] = {}

    def placeholder(self, label: str, value: str) -> str:
        key = (label, value)
        found = self.by_value.get(key)
        if found is not None:
            return found
        while True:
            self.counters[label] += 1
            ph = f"<{label}_{self.counters[label]}>"
            if ph not in self.taken:
                break
        self.by_value[key] = ph
        self.mapping[ph] = value
        return ph


def _clusters(findings: list[Finding]) -> list[tuple[int, int, Finding]]:
    """Overlapping spans merged; each cluster is labelled by its strongest, longest finding."""
    out: list[tuple[int, int, Finding]] = []
    for f in sorted(findings, key=lambda f: (f.start, -f.end)):
        if out and f.start < out[-1][1]:
            s, e, lead = out[-1]
            if (f.score, f.end - f.start) > (lead.score, lead.end - lead.start):
                lead = f
            out[-1] = (s, max(e, f.end), lead)
        else:
            out.append((f.start, f.end, f))
    return out


def strip_content(content: Content, decision: Decision) -> Stripped:
    """Replace every finding of ``decision`` in ``content``; raises :class:`StripError`.

    A pure function of the content *read in order*, so that a conversation that only grows keeps
    its placeholders: segment by segment, each value gets the next free number of its label the
    first time it appears, and what segment ``i`` becomes depends on segments ``0..i`` alone.
    Turn N+1's prefix is then byte-identical to what the upstream saw at turn N (vendor prompt
    caches and thinking-block checks depend on it).

    Placeholder-shaped text the client wrote is kept apart from ours: a literal seen before a
    number is handed out takes that number out of use; a literal that equals a placeholder handed
    out *earlier* (which would restore to that value) is itself replaced, by ``<LITERAL_n>``,
    which restores to the literal. Vendor state (``kind == "state"``: thinking blocks) is never
    rewritten and its placeholders are the vendor's copies of ours, so it takes no number."""
    if decision.failed_closed:
        raise StripError("cannot strip: classification failed closed, findings are incomplete")
    by_segment: dict[int, list[Finding]] = defaultdict(list)
    for f in decision.findings:
        if not 0 <= f.segment < len(content.segments):
            raise StripError(f"finding refers to segment {f.segment}, which does not exist")
        text = content.segments[f.segment].text
        if not 0 <= f.start < f.end <= len(text):
            raise StripError(f"finding span {f.start}:{f.end} is outside segment {f.segment}")
        by_segment[f.segment].append(f)
    alloc = _Allocator(set())
    segments: list[Segment] = []
    for i, seg in enumerate(content.segments):
        found = list(by_segment.get(i, ()))
        text = seg.text
        if "<" in text and seg.kind != "state":
            for m in PLACEHOLDER_RE.finditer(text):
                if m.group(0) in alloc.mapping:  # ours already: this literal must not restore to it
                    found.append(Finding(_LITERAL, i, m.start(), m.end(), "literal", -1.0))
                else:
                    alloc.taken.add(m.group(0))
        if not found:
            segments.append(seg)
            continue
        parts: list[str] = []
        last = 0
        for s, e, lead in _clusters(found):
            parts.append(text[last:s])
            parts.append(alloc.placeholder(label_for(lead.entity_type), text[s:e]))
            last = e
        parts.append(text[last:])
        segments.append(replace(seg, text="".join(parts)))
    return Stripped(Content(tuple(segments), content.opaque), alloc.mapping)


_LITERAL = "LITERAL"
