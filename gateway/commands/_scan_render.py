"""The three report formats of ``tiergate scan``: text, JSON and Markdown. Values never appear;
only what a shared vendor would receive does, with ``--show-stripped``."""

from __future__ import annotations

import json
from collections import Counter

from gateway.commands._scan_files import FileReport, Skipped

__all__ = ["render"]


def _lines(ls: tuple[int, ...], limit: int = 12) -> str:
    shown = ", ".join(map(str, ls[:limit]))
    return shown + (f", … (+{len(ls) - limit})" if len(ls) > limit else "")


def _findings(r: FileReport) -> str:
    if not r.entities:
        return "no findings"
    return "; ".join(
        f"{e.entity} x{e.count} (line{'s' if len(e.lines) > 1 else ''} {_lines(e.lines)})" for e in r.entities
    )


def _summary(reports: list[FileReport], skipped: list[Skipped]) -> dict[str, int]:
    tiers = Counter(int(r.tier) for r in reports)
    return {"files": len(reports), "skipped": len(skipped), **{f"tier_{t}": tiers.get(t, 0) for t in (1, 2, 3)},
            "highest_tier": max((int(r.tier) for r in reports), default=0)}  # fmt: skip


def _text(reports: list[FileReport], skipped: list[Skipped], show: bool) -> str:
    out = []
    for r in reports:
        flag = " (failed closed)" if r.failed_closed else ""
        out.append(f"{r.path}: tier {int(r.tier)}{flag}, shared vendor: {r.shared}; {_findings(r)}")
        if show and r.stripped is not None:
            out.extend("    " + line for line in r.stripped.splitlines())
    out.extend(f"{s.path}: skipped ({s.why})" for s in skipped)
    s = _summary(reports, skipped)
    out.append(
        f"{s['files']} file(s) scanned, {s['skipped']} skipped: tier 3: {s['tier_3']}, tier 2: {s['tier_2']}, "
        f"tier 1: {s['tier_1']}"
    )
    return "\n".join(out) + "\n"


def _json(reports: list[FileReport], skipped: list[Skipped], show: bool) -> str:
    files = []
    for r in reports:
        item: dict[str, object] = {
            "path": r.path,
            "tier": int(r.tier),
            "failed_closed": r.failed_closed,
            "shared_vendor": r.shared,
            "findings": [{"entity": e.entity, "count": e.count, "lines": list(e.lines)} for e in r.entities],
        }
        if show:
            item["stripped"] = r.stripped
        files.append(item)
    doc = {"files": files, "skipped": [{"path": s.path, "why": s.why} for s in skipped],
           "summary": _summary(reports, skipped)}  # fmt: skip
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _markdown(reports: list[FileReport], skipped: list[Skipped], show: bool) -> str:
    s = _summary(reports, skipped)
    out = [
        "# tiergate scan",
        "",
        f"{s['files']} file(s) scanned, {s['skipped']} skipped; highest tier {s['highest_tier']}.",
        "",
        "| file | tier | shared vendor | findings |",
        "|---|---:|---|---|",
    ]
    out.extend(f"| {_md_cell(r.path)} | {int(r.tier)} | {r.shared} | {_md_cell(_findings(r))} |" for r in reports)
    if skipped:
        out += ["", "Skipped:", ""] + [f"- {_md_cell(k.path)}: {k.why}" for k in skipped]
    if show:
        for r in reports:
            if r.stripped is None:
                continue
            fence = "````" if "```" in r.stripped else "```"
            out += ["", f"## {r.path}", "", fence, r.stripped.rstrip("\n"), fence]
    return "\n".join(out) + "\n"


def render(fmt: str, reports: list[FileReport], skipped: list[Skipped], show: bool) -> str:
    return {"text": _text, "json": _json, "markdown": _markdown}[fmt](reports, skipped, show)
