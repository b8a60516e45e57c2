"""Rendering for the CLI and the dashboard: streamed rows as table / JSON / CSV / Markdown, and
the assessment as Markdown or JSON. Writers take any text stream and never hold all rows.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, TextIO

from audit.assessment import Assessment
from audit.csv_cells import SafeCsvWriter
from audit.queries import ROW_FIELDS, ExposureRow
from audit.vendors import VendorReview, scope_doubt

if TYPE_CHECKING:
    from audit.playbook import Timeline

__all__ = ["FORMATS", "render_assessment_json", "render_assessment_markdown", "vendor_notes", "write_rows"]

FORMATS = ("table", "json", "csv", "markdown")

_TABLE_COLUMNS = (
    ("created_at", 26), ("request_id", 24), ("tenant", 12), ("key_id", 16), ("upstream", 16),
    ("provider_model", 18), ("prompt_tokens", 9), ("tier", 4), ("status", 10),
)  # fmt: skip


def _clean(text: str) -> str:
    # Model names and tenants come from clients: keep control characters out of the terminal.
    return "".join(ch if ch.isprintable() else "?" for ch in text)


def _md(text: str) -> str:
    return _clean(text).replace("|", "\\|")


def _plain(value: Any) -> str:
    if value is None:
        return ""
    return str(value)


def _time(value: datetime) -> str:
    return value.isoformat()


def _yes_no(value: Any) -> str:
    return "yes" if value else "no"


def _findings_cell(value: Any) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(value.items())) if value else ""


# One converter per column, chosen once: the per-row cost is what bounds a large export.
_CELL = {name: _plain for name in ROW_FIELDS} | {
    "created_at": _time, "stripped": _yes_no, "stream": _yes_no, "forwarded": _yes_no,
    "findings": _findings_cell,
}  # fmt: skip


async def write_rows(
    rows: AsyncIterator[ExposureRow],
    fmt: str,
    out: TextIO,
    progress: Callable[[int], None] | None = None,
    every: int = 10_000,
    extra: Callable[[ExposureRow], dict[str, Any]] | None = None,
) -> int:
    """Write rows as they arrive; returns how many were written."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}")
    n = 0
    fields = list(ROW_FIELDS)
    getters = [(name, _CELL[name]) for name in ROW_FIELDS]
    writer: Any = SafeCsvWriter(out) if fmt == "csv" else None
    encode = json.JSONEncoder(ensure_ascii=False).encode
    table_cols = [(name, width, _CELL[name]) for name, width in _TABLE_COLUMNS]
    async for row in rows:
        more = extra(row) if extra is not None else None
        if n == 0:
            if more:
                fields += [k for k in more if k not in fields]
            if fmt == "csv":
                writer.writerow(fields)
            elif fmt == "markdown":
                out.write("| " + " | ".join(fields) + " |\n")
                out.write("|" + "---|" * len(fields) + "\n")
            elif fmt == "table":
                out.write("  ".join(name.ljust(w)[:w] for name, w in _TABLE_COLUMNS) + "\n")
            elif fmt == "json":
                out.write("[\n")
        if fmt == "csv":
            cells = [conv(getattr(row, name)) for name, conv in getters]
            if more:
                cells += [_plain(more.get(k)) for k in fields[len(getters) :]]
            writer.writerow(cells)
        elif fmt == "markdown":
            cells = [conv(getattr(row, name)) for name, conv in getters]
            if more:
                cells += [_plain(more.get(k)) for k in fields[len(getters) :]]
            out.write("| " + " | ".join(_md(c) for c in cells) + " |\n")
        elif fmt == "table":
            out.write("  ".join(_clean(conv(getattr(row, name))).ljust(w)[:w]
                                for name, w, conv in table_cols) + "\n")  # fmt: skip
        else:
            record = row.as_dict()
            if more:
                record.update(more)
            out.write(("" if n == 0 else ",\n") + encode(record))
        n += 1
        if progress is not None and n % every == 0:
            progress(n)
    if fmt == "json":
        out.write("[]\n" if n == 0 else "\n]\n")
    elif n == 0 and fmt == "csv":
        writer.writerow(fields)
    elif n == 0 and fmt == "markdown":
        out.write("| " + " | ".join(fields) + " |\n|" + "---|" * len(fields) + "\n")
    if progress is not None:
        progress(n)
    return n


def render_assessment_json(a: Assessment, vendors: Sequence[VendorReview] = (),
                           timeline: Timeline | None = None) -> str:  # fmt: skip
    """``vendors``: the vendor register's answers to quote (``audit.vendors.review_vendors``);
    ``timeline``: the playbook's steps and clock (``audit.playbook.read_timeline``)."""
    doc = a.as_dict()
    if vendors:
        doc["vendor_register"] = [v.as_dict() for v in vendors]
        doc["vendor_notes"] = list(vendor_notes(a, vendors))
    if timeline is not None:
        doc["drill"] = timeline.drill
        doc["timeline"] = timeline.as_dict()
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


_VERDICT_TEXT = {
    "nothing_matched": "Nothing we sent matches this disclosure.",
    "tier1_only": "Requests matched, but all were Tier 1 (general): nothing we classify as sensitive was sent.",
    "sensitive_data_may_be_exposed": "SENSITIVE DATA MAY BE EXPOSED: Tier 2 or Tier 3 requests "
    "matched this disclosure.",
}


def vendor_notes(a: Assessment, vendors: Sequence[VendorReview]) -> tuple[str, ...]:
    """What the vendor's own answers change about the verdict: a vendor that cannot reconstruct
    which of our requests an incident affected only guessed the disclosure's scope, so "nothing
    matched" means nothing matched its guess, and a match is no bound on what was affected."""
    notes = []
    for v in vendors:
        doubt = scope_doubt(v)
        if doubt is None:
            continue
        if a.total == 0:
            notes.append(f"SCOPE UNCERTAIN: {v.provider} {doubt}. \u201cNothing matched\u201d says only that none of "
                         "our requests fits the vendor's description of the incident, not that none was "
                         "affected: assess a wider window and fewer conditions, and ask the vendor how it "
                         "scoped the incident")  # fmt: skip
        else:
            notes.append(f"SCOPE UNCERTAIN: {v.provider} {doubt}. The matching requests are those that fit "
                         "the vendor's description of the incident; requests outside it may have been "
                         "affected too")  # fmt: skip
    return tuple(notes)


def _in_utc(window: Any) -> str:
    # Vendors write local times; the log and the "by day" table are in UTC.
    if window.start.utcoffset() == window.end.utcoffset() == timedelta(0):
        return ""
    start, end = window.start.astimezone(UTC), window.end.astimezone(UTC)
    return f" (UTC: {start.isoformat()} to {end.isoformat()})"


def _one_line(text: str | None) -> str:
    return _md(" ".join((text or "").split()))


def _vendor_lines(vendors: Sequence[VendorReview]) -> list[str]:
    """The vendor's own answers, quoted beside the verdict, each marked current / due / missing."""
    lines = ["## What the vendor told us in writing", ""]
    for v in vendors:
        head = f"### {_md(v.provider)}" + (f" (serving {_md(v.engine)})" if v.engine else "")
        if not v.registered:
            lines += [head, "", "> **No answers on record for this provider in the vendor register.**", ""]
            continue
        due = f"{v.due} of {len(v.answers)} answer(s) missing or due for review" if v.due else "all answers current"
        lines += [
            head,
            "",
            f"{due}.",
            "",
            "| question | the vendor's answer | given | for engine | status |",
            "|---|---|---|---|---|",
        ]
        for r in v.answers:
            label = r.question.key.replace("_", " ")
            if r.answer is None:
                lines.append(f"| {label} | - | - | - | **MISSING** |")
                continue
            text = f"\u201c{_one_line(r.answer.answer)}\u201d"
            if r.answer.example:
                text += f" Example: {_one_line(r.answer.example)}"
            if r.answer.source:
                text += f" (source: {_one_line(r.answer.source)})"
            status = "current" if not r.due else "**DUE FOR REVIEW**: " + _one_line("; ".join(r.due))
            lines.append(
                f"| {label} | {text} | {r.answer.given.isoformat()} | {_one_line(r.answer.engine) or '-'} | {status} |"
            )
        lines.append("")
    return lines


def render_assessment_markdown(a: Assessment, vendors: Sequence[VendorReview] = (),
                               timeline: Timeline | None = None) -> str:  # fmt: skip
    """``vendors``: the vendor register's answers to quote next to the verdict; ``timeline``: the
    playbook's clock and steps, right after the verdict (a drill says so in the title too)."""
    from audit.timeline_report import DRILL_BANNER, timeline_markdown

    d = a.disclosure
    drill = timeline is not None and timeline.drill
    lines = [
        f"# {'DRILL: ' if drill else ''}Exposure assessment: {_md(d.title)}",
        "",
        *([f"> **{DRILL_BANNER}.**", ""] if drill else []),
        f"- Reference: {_md(d.reference)}",
        f"- Window: {d.window.start.isoformat()} to {d.window.end.isoformat()}{_in_utc(d.window)}",
        f"- Vendor: providers {_md(', '.join(d.providers) or '-')}; upstreams "
        f"{_md(', '.join(d.upstreams) or '-')}; models {_md(', '.join(d.models) or 'any')}",
        f"- Conditions: {_md(json.dumps(d.conditions.model_dump(mode='json', exclude_none=True)))}",
        "",
        f"## Verdict: `{a.verdict.value}` (exit code {a.verdict.exit_code})",
        "",
        _VERDICT_TEXT[a.verdict.value],
        "",
    ]
    for note in (*a.notes, *vendor_notes(a, vendors)):
        lines += [f"> **{_md(note)}**", ""]
    if timeline is not None:
        lines += timeline_markdown(timeline)
    if vendors:
        lines += _vendor_lines(vendors)
    lines += [
        f"Matching requests: **{a.total}**"
        + (f" from {a.earliest.isoformat()} to {a.latest.isoformat()}" if a.earliest and a.latest else ""),
        "",
        "## By tier",
        "",
        "| tier | requests |",
        "|---|---|",
        *[f"| {t} | {n} |" for t, n in a.by_tier.items()],
        "",
        "## Tenants to contact",
        "",
        *([f"- {_md(t)}" for t in a.tenants_to_contact] or ["- none"]),
        "",
        "## By tenant and key",
        "",
        "| tenant | key | requests | highest tier |",
        "|---|---|---|---|",
        *[f"| {_md(t.tenant or '')} | {_md(t.key_id or '')} | {t.requests} | {t.max_tier} |"
          for t in a.by_tenant_key],
        "",
        "## By day (UTC)",
        "",
        "| day | requests |",
        "|---|---|",
        *[f"| {day.isoformat()} | {n} |" for day, n in a.by_day],
        "",
        "## Entity types present",
        "",
        "| entity type | requests | occurrences | stripped | sent unstripped |",
        "|---|---|---|---|---|",
        *[f"| {_md(e.entity_type)} | {e.requests} | {e.occurrences} | {e.stripped_requests} | "
          f"{e.unstripped_requests} |" for e in a.entities],
        "",
    ]  # fmt: skip
    if a.tier3_total:
        lines += [
            f"## Tier-3 requests ({a.tier3_total}; first {len(a.tier3)} listed)",
            "",
            "| time | request | tenant | upstream (kind) | tokens |",
            "|---|---|---|---|---|",
        ]
        lines += [
            f"| {r.created_at.isoformat()} | {_md(r.request_id)} | {_md(r.tenant or '')} | "
            f"{_md(r.upstream or '')} ({_md(r.upstream_kind or '')}) | {r.prompt_tokens} |"
            for r in a.tier3
        ]
        lines.append("")
    if a.longest:
        lines += ["## Longest prompts", "", "| tokens | chars | request | tenant | tier |", "|---|---|---|---|---|"]
        lines += [
            f"| {r.prompt_tokens} | {r.prompt_chars} | {_md(r.request_id)} | {_md(r.tenant or '')} | {r.tier} |"
            for r in a.longest
        ]
        lines.append("")
    return "\n".join(lines)
