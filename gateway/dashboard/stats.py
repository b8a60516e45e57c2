"""The overview's numbers: grouped SQL over the audit tables, never a row per request in Python.

Time buckets are integer divisions of ``created_us`` (the same integer time the audit log indexes),
so the grouping is identical on SQLite and PostgreSQL. Every query takes the admin's tenant scope.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import and_, func, select
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.sql.elements import ColumnElement

from audit.models import AuditEvent, AuditOutcome, AuditRequest
from audit.timeutil import from_us, to_us
from gateway.probe import EVENT_KIND as PROBE_EVENT

__all__ = ["RANGES", "Overview", "TimeRange", "overview", "pick_range"]

R = AuditRequest.__table__
O = AuditOutcome.__table__  # noqa: E741 -- O is the outcomes table, as in the SQL
E = AuditEvent.__table__

_MIN = 60_000_000
# Named ranges of the picker -> (length, bucket width).
RANGES: dict[str, tuple[timedelta, int]] = {
    "1h": (timedelta(hours=1), 5 * _MIN),
    "24h": (timedelta(hours=24), 60 * _MIN),
    "7d": (timedelta(days=7), 6 * 60 * _MIN),
    "30d": (timedelta(days=30), 24 * 60 * _MIN),
}
_WIDTHS = (_MIN, 5 * _MIN, 15 * _MIN, 60 * _MIN, 6 * 60 * _MIN, 24 * 60 * _MIN, 7 * 24 * 60 * _MIN)
_MAX_BUCKETS = 96
PROBE_KINDS = (PROBE_EVENT,)


@dataclass(frozen=True, slots=True)
class TimeRange:
    start: datetime
    end: datetime
    bucket_us: int
    name: str  # "24h" … or "custom"

    def labels(self) -> list[int]:
        first = to_us(self.start) // self.bucket_us
        last = to_us(self.end) // self.bucket_us
        return list(range(first, last + 1))


def pick_range(name: str | None, start: datetime | None, end: datetime | None,
               now: datetime) -> TimeRange:  # fmt: skip
    """A named range ending now, or a custom one with a bucket width giving at most ~96 bars."""
    if start is not None or end is not None:
        end = end or now
        start = start or end - timedelta(hours=24)
        if end <= start:
            raise ValueError("the range must end after it starts")
        span = to_us(end) - to_us(start)
        width = next((w for w in _WIDTHS if span // w <= _MAX_BUCKETS), _WIDTHS[-1])
        return TimeRange(start, end, width, "custom")
    key = name if name in RANGES else "24h"
    length, width = RANGES[key]
    return TimeRange(now - length, now, width, key)


@dataclass(frozen=True, slots=True)
class Overview:
    range: TimeRange
    bucket_labels: list[str]
    tier_series: dict[int, list[int]]  # tier -> count per bucket
    totals_by_tier: dict[int, int]
    by_upstream_model: list[tuple[str, int]]
    refusals: list[tuple[str, int]]
    stripped: list[tuple[str, int]]  # entity type -> identifiers replaced
    integrity_series: list[int]
    integrity_total: int
    probe_alarms: list[dict[str, Any]] = field(default_factory=list)
    probe_runs: int = 0

    @property
    def total(self) -> int:
        return sum(self.totals_by_tier.values())

    @property
    def refused_total(self) -> int:
        return sum(n for _r, n in self.refusals)

    def chart_data(self) -> dict[str, Any]:
        return {
            "labels": self.bucket_labels,
            "tiers": {str(t): s for t, s in sorted(self.tier_series.items())},
            "upstreams": {"labels": [k for k, _ in self.by_upstream_model],
                          "values": [v for _, v in self.by_upstream_model]},
            "refusals": {"labels": [k for k, _ in self.refusals],
                         "values": [v for _, v in self.refusals]},
            "stripped": {"labels": [k for k, _ in self.stripped],
                         "values": [v for _, v in self.stripped]},
            "integrity": self.integrity_series,
        }  # fmt: skip


def _window(rng: TimeRange, tenants: tuple[str, ...]) -> list[ColumnElement[bool]]:
    w = [R.c.created_us >= to_us(rng.start), R.c.created_us <= to_us(rng.end)]
    if tenants:
        w.append(R.c.tenant.in_(tenants))
    return w


def _label(bucket: int, width: int) -> str:
    moment = from_us(bucket * width)
    return moment.strftime("%m-%d") if width >= 24 * 60 * _MIN else moment.strftime("%m-%d %H:%M")


def _probe_failed(detail: dict[str, Any]) -> bool:
    # gateway.probe writes "passed"; a report without it, or with crossed markers, is an alarm.
    return detail.get("passed") is not True or bool(detail.get("crossed"))


async def overview(engine: AsyncEngine, rng: TimeRange, tenants: tuple[str, ...]) -> Overview:
    where = _window(rng, tenants)
    bucket = (R.c.created_us // rng.bucket_us).label("bucket")
    joined = R.join(O, O.c.request_id == R.c.request_id)
    async with engine.connect() as conn:
        tier_rows = (await conn.execute(
            select(bucket, R.c.tier, func.count().label("n")).where(and_(*where))
            .group_by(bucket, R.c.tier))).all()  # fmt: skip
        up_rows = (await conn.execute(
            select(R.c.upstream, R.c.provider_model, func.count().label("n"))
            .where(and_(*where), R.c.forwarded.is_(True))
            .group_by(R.c.upstream, R.c.provider_model)
            .order_by(func.count().desc()).limit(15))).all()  # fmt: skip
        refusal_rows = (await conn.execute(
            select(O.c.error_class, func.count().label("n")).select_from(joined)
            .where(and_(*where), O.c.status == "refused")
            .group_by(O.c.error_class).order_by(func.count().desc()))).all()  # fmt: skip
        strip_rows = (await conn.execute(
            select(R.c.findings, func.count().label("n"))
            .where(and_(*where), R.c.stripped.is_(True)).group_by(R.c.findings))).all()  # fmt: skip
        integrity_rows = (await conn.execute(
            select(bucket, func.count().label("n")).select_from(joined)
            .where(and_(*where), O.c.integrity_flag.is_(True)).group_by(bucket))).all()  # fmt: skip
        event_rows = (await conn.execute(
            select(E.c.created_us, E.c.kind, E.c.detail)
            .where(E.c.kind.in_(PROBE_KINDS), E.c.created_us >= to_us(rng.start),
                   E.c.created_us <= to_us(rng.end))
            .order_by(E.c.created_us.desc()).limit(500))).all()  # fmt: skip

    labels = rng.labels()
    index = {b: i for i, b in enumerate(labels)}
    series: dict[int, list[int]] = {t: [0] * len(labels) for t in (1, 2, 3)}
    totals: dict[int, int] = {1: 0, 2: 0, 3: 0}
    for r in tier_rows:
        tier, n = int(r.tier), int(r.n)
        totals[tier] = totals.get(tier, 0) + n
        i = index.get(int(r.bucket))
        if i is not None:
            series.setdefault(tier, [0] * len(labels))[i] += n
    integrity = [0] * len(labels)
    for r in integrity_rows:
        i = index.get(int(r.bucket))
        if i is not None:
            integrity[i] += int(r.n)
    stripped: dict[str, int] = {}
    for r in strip_rows:
        for entity, count in (json.loads(r.findings) if r.findings else {}).items():
            stripped[entity] = stripped.get(entity, 0) + int(count) * int(r.n)
    alarms = []
    for r in event_rows:
        detail = json.loads(r.detail) if r.detail else {}
        if isinstance(detail, dict) and _probe_failed(detail):
            alarms.append({"at": from_us(r.created_us), "kind": r.kind,
                           "upstream": detail.get("upstream")})  # fmt: skip
    return Overview(
        range=rng,
        bucket_labels=[_label(b, rng.bucket_us) for b in labels],
        tier_series=series,
        totals_by_tier=totals,
        by_upstream_model=[
            (f"{r.upstream or '-'} · {r.provider_model or '-'}", int(r.n)) for r in up_rows
        ],  # fmt: skip
        refusals=[(r.error_class or "unspecified", int(r.n)) for r in refusal_rows],
        stripped=sorted(stripped.items(), key=lambda kv: -kv[1]),
        integrity_series=integrity,
        integrity_total=sum(integrity),
        probe_alarms=alarms[:20],
        probe_runs=len(event_rows),
    )


def utcnow() -> datetime:
    return datetime.now(UTC)
