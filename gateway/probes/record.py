"""What a probe's result does: Prometheus series, audit events, the alarm and the safe length.

Metrics first (they cannot fail), then the audit events; an audit failure propagates. A failed
ladder rung is an alarm: a ``ladder_rung_failed`` event and ``tiergate_ladder_rung_failures_total``
naming the rung (its length in tokens), and a warning log line with counts only. With
``probes.ladder.lower_safe_length`` the upstream's effective safe length drops to the last good
rung below the failure (``audit.length_caps``), on every replica, until an admin restores it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Gauge

if TYPE_CHECKING:
    from gateway.probes.ladder import LadderReport
    from gateway.probes.prefix_cache import PrefixCacheReport

__all__ = ["ALARM_KIND", "LadderMetrics", "PrefixCacheMetrics", "record_ladder", "record_prefix_cache"]

log = logging.getLogger("tiergate.probe")

ALARM_KIND = "ladder_rung_failed"
RecordEvent = Callable[[str, dict[str, Any]], Awaitable[Any]]


class LadderMetrics:
    """Ladder results on the app's (or a command's) registry; the rung label is its length in tokens."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.runs = Counter("tiergate_ladder_runs", "Ladder probe runs by result", ["upstream", "result"],
                            registry=registry)  # fmt: skip
        self.rung_passed = Gauge("tiergate_ladder_rung_passed", "1 when the rung passed in the last ladder",
                                 ["upstream", "rung"], registry=registry)  # fmt: skip
        self.rung_failures = Counter("tiergate_ladder_rung_failures", "Failed ladder rungs by reason",
                                     ["upstream", "rung", "reason"], registry=registry)  # fmt: skip
        self.last_good = Gauge("tiergate_ladder_last_good_tokens",
                               "Longest passing rung below the first failure in the last ladder",
                               ["upstream"], registry=registry)  # fmt: skip
        self.first_failed = Gauge("tiergate_ladder_first_failed_tokens",
                                  "Shortest failed rung in the last ladder (0: none failed)",
                                  ["upstream"], registry=registry)  # fmt: skip
        self.last_run = Gauge("tiergate_ladder_last_run_timestamp_seconds", "When the last ladder finished",
                              ["upstream"], registry=registry)  # fmt: skip

    def observe(self, report: LadderReport) -> None:
        up = report.upstream
        self.runs.labels(up, "pass" if report.passed else "fail").inc()
        for rung in report.rungs:
            label = str(rung.rung.tokens)
            self.rung_passed.labels(up, label).set(1 if rung.passed else 0)
            for reason in rung.reasons:
                self.rung_failures.labels(up, label, reason).inc()
        first = report.first_failed
        self.last_good.labels(up).set(report.last_good_tokens)
        self.first_failed.labels(up).set(first.rung.tokens if first is not None else 0)
        self.last_run.labels(up).set(time.time())


class PrefixCacheMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.runs = Counter("tiergate_prefix_cache_probe_runs", "Prefix-cache probe runs by result",
                            ["upstream", "result"], registry=registry)  # fmt: skip
        self.last_passed = Gauge("tiergate_prefix_cache_probe_last_passed",
                                 "1 when the upstream's last prefix-cache probe passed", ["upstream"],
                                 registry=registry)  # fmt: skip
        self.cross_cached = Gauge("tiergate_prefix_cache_cross_tenant_cached_tokens",
                                  "Cached tokens another tenant's request saw in the last probe (must be 0)",
                                  ["upstream"], registry=registry)  # fmt: skip

    def observe(self, report: PrefixCacheReport) -> None:
        self.runs.labels(report.upstream, "pass" if report.passed else "fail").inc()
        self.last_passed.labels(report.upstream).set(1 if report.passed else 0)
        self.cross_cached.labels(report.upstream).set(report.cross_cached_tokens)


async def record_ladder(report: LadderReport, *, record_event: RecordEvent | None, metrics: LadderMetrics | None,
                        store: Any = None, lower_safe_length: bool = False, safe_tokens: int | None = None,
                        actor: str = "ladder-probe") -> Any:  # fmt: skip
    """Record the report; returns the lowering written (``audit.length_caps.LengthCap``) or None.

    ``store`` is needed only to lower the safe length (it owns the shared state); ``safe_tokens``
    is the upstream's safe length now: a rung failing above it is an alarm, but production prompts
    do not reach it, so the length stays."""
    from gateway.probes.ladder import EVENT_KIND

    if metrics is not None:
        metrics.observe(report)
    failed = [r for r in report.rungs if not r.passed]
    if failed:
        log.warning("ladder probe failed upstream=%s rungs=%s first=%d last_good=%d reasons=%s", report.upstream,
                    ",".join(str(r.rung.tokens) for r in failed), failed[0].rung.tokens, report.last_good_tokens,
                    ",".join(report.reasons))  # fmt: skip
    if record_event is not None:
        await record_event(EVENT_KIND, report.detail())
        for rung in failed:
            await record_event(ALARM_KIND, {"upstream": report.upstream, "model": report.model,
                                            "rung_tokens": rung.rung.tokens, "label": rung.rung.label,
                                            "reasons": list(rung.reasons),
                                            "last_good_tokens": report.last_good_tokens,
                                            "started_at": report.started_at.isoformat()})  # fmt: skip
    first = report.first_failed
    if not (lower_safe_length and first is not None and store is not None):
        return None
    if safe_tokens is not None and first.rung.tokens > safe_tokens:
        return None
    from audit.length_caps import lower_safe_length as lower

    return await lower(store, upstream=report.upstream, max_prompt_tokens=report.last_good_tokens,
                       failed_rung_tokens=first.rung.tokens, actor=actor,
                       reason=f"ladder rung {first.rung.tokens} failed: {', '.join(first.reasons)}")  # fmt: skip


async def record_prefix_cache(report: PrefixCacheReport, *, record_event: RecordEvent | None,
                              metrics: PrefixCacheMetrics | None) -> None:  # fmt: skip
    from gateway.probes.prefix_cache import EVENT_KIND

    if metrics is not None:
        metrics.observe(report)
    if not report.passed:
        log.warning("prefix-cache probe failed upstream=%s reasons=%s cross_cached=%d", report.upstream,
                    ",".join(report.reasons), report.cross_cached_tokens)  # fmt: skip
    if record_event is not None:
        await record_event(EVENT_KIND, report.detail())
