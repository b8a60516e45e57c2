"""The assessment as a printable document: headings, key-value lines and tables, in report order.

One content model for the two printable renderers (``audit.html_report``, ``audit.pdf_report``),
so the HTML and the PDF say the same things in the same order as the Markdown report: the
verdict, the playbook's clock and timeline, the vendor's answers, then the counts.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from audit.assessment import Assessment
from audit.playbook import Timeline, format_span
from audit.report import _VERDICT_TEXT, _in_utc, vendor_notes
from audit.timeline_report import DRILL_BANNER, clock_line, playbook_roles, step_summary
from audit.vendors import VendorReview

__all__ = ["ReportDoc", "Section", "build_report"]


@dataclass(frozen=True, slots=True)
class Section:
    heading: str
    lines: tuple[str, ...] = ()
    headers: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()
    alarm: bool = False  # printed so that it cannot be missed (Tier 3, policy breach, overdue)


@dataclass(frozen=True, slots=True)
class ReportDoc:
    title: str
    drill: bool
    meta: tuple[tuple[str, str], ...]
    verdict: str
    verdict_text: str
    sensitive: bool
    notes: tuple[str, ...]
    sections: tuple[Section, ...] = field(default=())
    generated: str = ""

    @property
    def banner(self) -> str:
        return DRILL_BANNER if self.drill else ""


def _timeline(t: Timeline) -> list[Section]:
    lines = []
    if t.started is not None and t.deadline is not None:
        lines = [f"Clock started {t.started.isoformat()}; deadline {t.deadline.isoformat()}.",
                 f"Clock: {clock_line(t)}."]  # fmt: skip
    overdue = not t.done and (left := t.time_left()) is not None and left.total_seconds() < 0
    rows = tuple((str(i), r["step"] + (" (drill)" if r["drill"] else ""), r["at"].isoformat(timespec="seconds"),
                  r["actor"], r["owner"] or "-", format_span(r["took_s"]), step_summary(r))
                 for i, r in enumerate(t.rows(), 1))  # fmt: skip
    return [
        Section(
            "Playbook and clock", tuple(lines), ("role", "who"), tuple(playbook_roles(t.playbook)), alarm=overdue
        ),  # fmt: skip
        Section("Timeline", (), ("#", "step", "at (UTC)", "by", "owner per playbook", "took", "what"), rows),
    ]


def _vendors(vendors: Sequence[VendorReview]) -> list[Section]:
    out = []
    for v in vendors:
        head = f"What {v.provider} told us in writing" + (f" (serving {v.engine})" if v.engine else "")
        if not v.registered:
            out.append(Section(head, ("No answers on record for this provider in the vendor register.",), alarm=True))
            continue
        rows = []
        for r in v.answers:
            a = r.answer
            text = "-" if a is None else a.answer + (f" Example: {a.example}" if a.example else "") + \
                (f" (source: {a.source})" if a.source else "")  # fmt: skip
            status = {"missing": "MISSING", "current": "current"}.get(r.status, "DUE FOR REVIEW: " + "; ".join(r.due))
            rows.append((r.question.key.replace("_", " "), text, a.given.isoformat() if a else "-",
                         (a.engine or "-") if a else "-", status))  # fmt: skip
        out.append(Section(head, (), ("question", "the vendor's answer", "given", "for engine", "status"), tuple(rows)))
    return out


def build_report(a: Assessment, vendors: Sequence[VendorReview] = (), timeline: Timeline | None = None,
                 now: datetime | None = None) -> ReportDoc:  # fmt: skip
    d = a.disclosure
    drill = timeline is not None and timeline.drill
    sections: list[Section] = []
    if timeline is not None:
        sections += _timeline(timeline)
    sections += _vendors(vendors)
    span = f" from {a.earliest.isoformat()} to {a.latest.isoformat()}" if a.earliest and a.latest else ""
    sections += [
        Section("Matching requests", (f"{a.total} matching request(s){span}.",), ("tier", "requests"),
                tuple((str(t), str(n)) for t, n in a.by_tier.items())),
        Section("Tenants to contact", tuple(a.tenants_to_contact) or ("none",)),
        Section("By tenant and key", (), ("tenant", "key", "requests", "highest tier"),
                tuple((t.tenant or "", t.key_id or "", str(t.requests), str(t.max_tier)) for t in a.by_tenant_key)),
        Section("By day (UTC)", (), ("day", "requests"), tuple((day.isoformat(), str(n)) for day, n in a.by_day)),
        Section("Entity types present", (), ("entity type", "requests", "occurrences", "stripped", "sent unstripped"),
                tuple((e.entity_type, str(e.requests), str(e.occurrences), str(e.stripped_requests),
                       str(e.unstripped_requests)) for e in a.entities)),
    ]  # fmt: skip
    if a.tier3_total:
        sections.append(Section(f"Tier-3 requests ({a.tier3_total}; first {len(a.tier3)} listed)", (),
                                ("time", "request", "tenant", "upstream (kind)", "tokens"),
                                tuple((r.created_at.isoformat(timespec="seconds"), r.request_id, r.tenant or "",
                                       f"{r.upstream or ''} ({r.upstream_kind or ''})", str(r.prompt_tokens))
                                      for r in a.tier3), alarm=True))  # fmt: skip
    if a.longest:
        sections.append(Section("Longest prompts", (), ("tokens", "chars", "request", "tenant", "tier"),
                                tuple((str(r.prompt_tokens), str(r.prompt_chars), r.request_id, r.tenant or "",
                                       str(r.tier)) for r in a.longest)))  # fmt: skip
    meta = (
        ("Reference", d.reference),
        ("Window", f"{d.window.start.isoformat()} to {d.window.end.isoformat()}{_in_utc(d.window)}"),
        ("Vendor", f"providers {', '.join(d.providers) or '-'}; upstreams {', '.join(d.upstreams) or '-'}; "
                   f"models {', '.join(d.models) or 'any'}"),
        ("Conditions", json.dumps(d.conditions.model_dump(mode="json", exclude_none=True))),
        ("Disclosure id", str(a.disclosure_id) if a.disclosure_id is not None else "-"),
    )  # fmt: skip
    return ReportDoc(
        title=("DRILL: " if drill and not d.title.startswith("DRILL") else "") + d.title,
        drill=drill, meta=meta, verdict=a.verdict.value, verdict_text=_VERDICT_TEXT[a.verdict.value],
        sensitive=a.verdict.exit_code == 20, notes=(*a.notes, *vendor_notes(a, vendors)), sections=tuple(sections),
        generated=(now or datetime.now(UTC)).isoformat(timespec="seconds"),
    )  # fmt: skip
