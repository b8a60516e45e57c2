"""The playbook's timeline in the exposure report: the clock, who owns each step, what was done.

Markdown (CLI, dashboard download) and a plain dict (JSON); the HTML report renders the same
rows (``audit/html_report.py``). A drill is announced at the top, so that a printed drill report
is never read as a real incident.
"""

from __future__ import annotations

from typing import Any

from audit.playbook import Playbook, PlaybookRole, Timeline, format_span

__all__ = ["DRILL_BANNER", "clock_line", "playbook_roles", "step_summary", "timeline_markdown"]

DRILL_BANNER = "DRILL: a rehearsal of the incident playbook, not a real incident"


def _md(text: Any) -> str:
    return "".join(ch if ch.isprintable() else "?" for ch in str(text)).replace("|", "\\|")


def clock_line(t: Timeline) -> str:
    """``20 h 14 min left``, ``OVERDUE by 1 h 02 min``, ``stopped 3 h 10 min before the deadline``."""
    left = t.time_left()
    if left is None:
        return "no clock started"
    secs = left.total_seconds()
    if t.done:
        when = "before" if secs >= 0 else "after"
        return f"stopped {format_span(secs)} {when} the deadline"
    return f"{format_span(secs)} left" if secs >= 0 else f"OVERDUE by {format_span(secs)}"


def playbook_roles(p: Playbook | None) -> list[tuple[str, str]]:
    """(what, who) for each role, for the report's playbook table."""
    if p is None:
        return [("playbook", "none configured for this tenant (playbooks: in the config)")]

    def who(role: PlaybookRole) -> str:
        text = role.owner + (f" (backup {role.backup})" if role.backup else "")
        return text + (f", {role.contact}" if role.contact else "")

    rows = [("checks the logs", who(p.check_logs)), ("decides reportability", who(p.decide)),
            ("contacts affected customers", who(p.notify_customers)),
            ("contacts the notified body", who(p.notify_body or p.decide))]  # fmt: skip
    if p.notified_body:
        rows.append(("notified body", p.notified_body))
    return rows


def step_summary(row: dict[str, Any]) -> str:
    d = row["detail"]
    if row["step"] == "decided":
        text = ("REPORTABLE" if d.get("reportable") else "not reportable") + f": {d.get('reason', '')}"
    elif row["step"] == "notified":
        text = f"{d.get('party')}: {d.get('to', '')}"
    elif row["step"] == "assessed":
        text = f"verdict {d.get('verdict')}, {d.get('total')} matching request(s)"
        if d.get("took_ms") is not None:
            text += f", assessment took {d['took_ms']:.0f} ms"
    elif row["step"] == "loaded":
        text = f"clock started ({d.get('deadline_hours', 24):g} h)"
    else:
        text = d.get("reason", "")
    if d.get("by_owner") is False:
        text += " (not the playbook's owner for this step)"
    if d.get("simulated"):
        text += " (simulated by the drill)"
    return str(text)


def timeline_markdown(t: Timeline) -> list[str]:
    lines = []
    if t.drill:
        lines += [f"> **{DRILL_BANNER}.**", ""]
    lines += ["## Playbook and clock", ""]
    if t.started is not None and t.deadline is not None:
        lines += [f"- Clock started: {t.started.isoformat()}", f"- Deadline: {t.deadline.isoformat()}",
                  f"- Clock: **{clock_line(t)}**", ""]  # fmt: skip
    else:
        lines += ["- No clock was started for this disclosure (an ad-hoc assessment).", ""]
    lines += ["| role | who |", "|---|---|", *[f"| {_md(a)} | {_md(b)} |" for a, b in playbook_roles(t.playbook)], ""]
    if t.steps:
        lines += ["| # | step | at (UTC) | by | owner per playbook | took | since start | what |",
                  "|---|---|---|---|---|---|---|---|"]  # fmt: skip
        for i, r in enumerate(t.rows(), 1):
            step = r["step"] + (" (drill)" if r["drill"] else "")
            lines.append(
                f"| {i} | {step} | {r['at'].isoformat()} | {_md(r['actor'])} | {_md(r['owner'] or '-')} "
                f"| {format_span(r['took_s'])} | {format_span(r['since_start_s'])} | {_md(step_summary(r))} |"
            )
        lines.append("")
    return lines
