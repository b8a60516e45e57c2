"""Alert rules: which audit records and which counters raise an alert, and what it says.

Two sources. Records of the audit log (followed like the SIEM stream, ``audit.tail``): integrity
failures, failed probes, failed ladder rungs, quarantines. And counters for what the audit log
cannot hold: the audit log being unavailable (a refusal it could not record), and the rate-limit
backend failing open. An alert carries metadata only: names from the configuration, counts,
codes; never a free-text field of a record.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from audit.tail import TailRecord

__all__ = ["COUNTER_RULES", "RULES", "Alert", "CounterRule", "alert_for"]

Severity = Literal["critical", "error", "warning", "info"]

RULES = ("integrity_failure", "probe_alarm", "ladder_rung_failed", "quarantine", "audit_unavailable",
         "ratelimit_fail_open")  # fmt: skip


@dataclass(frozen=True)
class Alert:
    rule: str
    key: str  # what dedup groups by with the rule: the upstream, mostly
    severity: Severity
    summary: str
    details: dict[str, Any] = field(default_factory=dict)
    at: datetime = field(default_factory=lambda: datetime.now(UTC))
    test: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "key": self.key, "severity": self.severity, "summary": self.summary,
                "details": self.details, "at": self.at.isoformat().replace("+00:00", "Z"), "test": self.test}  # fmt: skip


def _pick(detail: Any, *names: str) -> dict[str, Any]:
    if not isinstance(detail, dict):
        return {}
    return {n: detail[n] for n in names if detail.get(n) is not None}


def _integrity(r: TailRecord) -> Alert | None:
    f = r.fields
    if not f.get("integrity_flag"):
        return None
    upstream = str(f.get("upstream") or "unknown")
    return Alert("integrity_failure", upstream, "error",
                 f"upstream {upstream}: answer withheld by the integrity check ({f.get('error_class')})",
                 {"upstream": upstream, "reason": f.get("error_class"), "request_id": f.get("request_id"),
                  "tenant": r.tenant, "seq": r.seq})  # fmt: skip


def _probe(r: TailRecord) -> Alert | None:
    d = r.fields
    if not isinstance(d, dict) or d.get("passed", True):
        return None
    upstream = str(d.get("upstream") or "unknown")
    return Alert("probe_alarm", upstream, "critical", f"upstream {upstream}: {r.kind} failed",
                 {"probe": r.kind, **_pick(d, "upstream", "model", "reasons", "crossed", "missing", "foreign"),
                  "seq": r.seq})  # fmt: skip


def _rung(r: TailRecord) -> Alert | None:
    d = r.fields
    upstream = str(d.get("upstream") or "unknown") if isinstance(d, dict) else "unknown"
    return Alert("ladder_rung_failed", upstream, "critical",
                 f"upstream {upstream}: ladder rung of {_pick(d, 'rung_tokens').get('rung_tokens')} tokens failed",
                 {**_pick(d, "upstream", "model", "rung_tokens", "label", "reasons", "last_good_tokens"),
                  "seq": r.seq})  # fmt: skip


def _quarantine(r: TailRecord) -> Alert | None:
    d = r.fields
    target = "/".join(str(d[k]) for k in ("upstream", "provider", "model") if isinstance(d, dict) and d.get(k))
    return Alert("quarantine", target or "unknown", "warning", f"quarantined: {target or 'unknown'}",
                 {**_pick(d, "id", "upstream", "provider", "model", "actor"), "seq": r.seq})  # fmt: skip


_EVENT_RULES: dict[str, tuple[str, Callable[[TailRecord], Alert | None]]] = {
    "isolation_probe": ("probe_alarm", _probe),
    "prefix_cache_probe": ("probe_alarm", _probe),
    "ladder_rung_failed": ("ladder_rung_failed", _rung),
    "upstream_quarantined": ("quarantine", _quarantine),
}


def alert_for(record: TailRecord, enabled: frozenset[str]) -> Alert | None:
    if record.type == "outcome":
        return _integrity(record) if "integrity_failure" in enabled else None
    if record.type == "event" and record.kind in _EVENT_RULES:
        rule, make = _EVENT_RULES[record.kind]
        return make(record) if rule in enabled else None
    return None


@dataclass(frozen=True)
class CounterRule:
    """An alert whenever a Prometheus sample of the gateway's registry has grown since last look."""

    rule: str
    metric: str
    labels: dict[str, str]
    severity: Severity
    summary: str
    key: str


COUNTER_RULES = (
    CounterRule(
        "audit_unavailable",
        "tiergate_refusals_total",
        {"reason": "audit_unavailable"},
        "critical",
        "the audit log is unavailable: requests are refused (503), nothing forwarded",
        "refusals",
    ),
    CounterRule(
        "ratelimit_fail_open",
        "tiergate_ratelimit_backend_errors_total",
        {},
        "warning",
        "the rate-limit backend failed: requests pass unlimited (fail open)",
        "limiter",
    ),
)
