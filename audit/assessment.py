"""The 24-hour exposure assessment: what did we send that a vendor's incident may have exposed?

Three SQL passes over the matching slice (one grouped aggregate, the Tier-3 list, the longest
prompts) and nothing per row in Python, so a multi-week window over millions of rows stays fast;
a disclosure naming providers adds one more: the requests it cannot attribute to any provider.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date, datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import and_, func, not_, select
from sqlalchemy.ext.asyncio import AsyncEngine

from audit.disclosures import DisclosureSpec
from audit.models import AuditRequest
from audit.names import name_matches
from audit.queries import ExposureFilter, ExposureRow, rows_from, rows_select, stream_select
from audit.timeutil import DAY_US, from_us

__all__ = ["Assessment", "EntityExposure", "TenantExposure", "Verdict", "assess"]

R = AuditRequest.__table__
TIER3_LISTED = 100
LONGEST_LISTED = 10


class Verdict(StrEnum):
    """A plain aid for the operator; each has its own exit code in ``tiergate exposure assess``."""

    NOTHING_MATCHED = "nothing_matched"
    TIER1_ONLY = "tier1_only"
    SENSITIVE = "sensitive_data_may_be_exposed"

    @property
    def exit_code(self) -> int:
        return {"nothing_matched": 0, "tier1_only": 10, "sensitive_data_may_be_exposed": 20}[self]


@dataclass(frozen=True, slots=True)
class TenantExposure:
    tenant: str | None
    key_id: str | None
    requests: int
    max_tier: int


@dataclass(frozen=True, slots=True)
class EntityExposure:
    entity_type: str
    requests: int  # matching requests that contained it
    occurrences: int  # total findings of this type
    stripped_requests: int  # of those requests, how many had identifiers stripped before sending
    unstripped_requests: int


@dataclass(frozen=True, slots=True)
class Assessment:
    disclosure: DisclosureSpec
    total: int
    by_tier: dict[int, int]
    by_tenant_key: tuple[TenantExposure, ...]
    by_day: tuple[tuple[date, int], ...]
    earliest: datetime | None
    latest: datetime | None
    entities: tuple[EntityExposure, ...]
    tier3_total: int
    tier3_shared: int
    tier3: tuple[ExposureRow, ...]
    longest: tuple[ExposureRow, ...]
    tenants_to_contact: tuple[str, ...]
    verdict: Verdict
    disclosure_id: int | None = None
    notes: tuple[str, ...] = field(default=())
    providers: tuple[str, ...] = field(default=())  # the providers of the matching requests
    # (upstream, requests): requests meeting every other criterion that a disclosure naming
    # providers cannot find, because their upstream declares no provider
    unattributed: tuple[tuple[str, int], ...] = field(default=())

    def as_dict(self) -> dict[str, Any]:
        return {
            "disclosure": self.disclosure.model_dump(mode="json"),
            "disclosure_id": self.disclosure_id,
            "verdict": self.verdict.value,
            "exit_code": self.verdict.exit_code,
            "total": self.total,
            "by_tier": {str(k): v for k, v in sorted(self.by_tier.items())},
            "by_tenant_key": [
                {"tenant": t.tenant, "key_id": t.key_id, "requests": t.requests, "max_tier": t.max_tier}
                for t in self.by_tenant_key
            ],  # fmt: skip
            "by_day": [{"day": d.isoformat(), "requests": n} for d, n in self.by_day],
            "earliest": self.earliest.isoformat() if self.earliest else None,
            "latest": self.latest.isoformat() if self.latest else None,
            "entities": [
                {
                    "entity_type": e.entity_type,
                    "requests": e.requests,
                    "occurrences": e.occurrences,
                    "stripped_requests": e.stripped_requests,
                    "unstripped_requests": e.unstripped_requests,
                }
                for e in self.entities
            ],  # fmt: skip
            "tier3_total": self.tier3_total,
            "tier3_shared": self.tier3_shared,
            "tier3": [r.as_dict() for r in self.tier3],
            "longest": [r.as_dict() for r in self.longest],
            "tenants_to_contact": list(self.tenants_to_contact),
            "notes": list(self.notes),
            "providers": list(self.providers),
            "unattributed": [{"upstream": u, "requests": n} for u, n in self.unattributed],
        }


def _verdict(by_tier: dict[int, int]) -> Verdict:
    if not by_tier:
        return Verdict.NOTHING_MATCHED
    if any(tier >= 2 and n for tier, n in by_tier.items()):
        return Verdict.SENSITIVE
    return Verdict.TIER1_ONLY


async def assess(engine: AsyncEngine, spec: DisclosureSpec, *, disclosure_id: int | None = None,
                 extra: ExposureFilter | None = None) -> Assessment:  # fmt: skip
    flt = ExposureFilter.from_disclosure(spec)
    where = flt.where() + (extra.where() if extra is not None else [])
    base_from = rows_from(flt, extra)
    day = (R.c.created_us // DAY_US).label("day")  # floor division on both backends
    grouped = (
        select(
            R.c.tier, R.c.tenant, R.c.key_id, day, R.c.findings, R.c.stripped, R.c.upstream_kind,
            R.c.provider, func.count().label("n"), func.min(R.c.created_us).label("first"),
            func.max(R.c.created_us).label("last"),
        )
        .select_from(base_from)
        .where(and_(True, *where))
        .group_by(R.c.tier, R.c.tenant, R.c.key_id, day, R.c.findings, R.c.stripped,
                  R.c.upstream_kind, R.c.provider)
    )  # fmt: skip
    by_tier: dict[int, int] = {}
    by_tk: dict[tuple[str | None, str | None], list[int]] = {}
    by_day: dict[int, int] = {}
    entities: dict[str, list[int]] = {}
    earliest = latest = None
    tier3_shared = 0
    providers: set[str] = set()
    findings_cache: dict[str, dict[str, int]] = {}  # few distinct values, many groups
    async with engine.connect() as conn:
        groups = (await conn.execute(grouped)).all()
    # Plain tuples and local dicts: this loop runs once per group, up to ~10^5 times.
    for tier, tenant, key_id, dayno, findings, stripped, kind, provider, n, first, last in groups:
        by_tier[tier] = by_tier.get(tier, 0) + n
        if provider is not None:
            providers.add(provider)
        if tier == 3 and kind == "shared":
            tier3_shared += n
        tk = by_tk.get((tenant, key_id))
        if tk is None:
            by_tk[(tenant, key_id)] = [n, tier]
        else:
            tk[0] += n
            if tier > tk[1]:
                tk[1] = tier
        dayno = int(dayno)
        by_day[dayno] = by_day.get(dayno, 0) + n
        if earliest is None or first < earliest:
            earliest = first
        if latest is None or last > latest:
            latest = last
        if findings and findings != "{}":
            parsed = findings_cache.get(findings)
            if parsed is None:
                parsed = findings_cache[findings] = json.loads(findings)
            for entity, count in parsed.items():
                e = entities.get(entity)
                if e is None:
                    e = entities[entity] = [0, 0, 0, 0]
                e[0] += n
                e[1] += count * n
                e[2 if stripped else 3] += n
    by_tier = {int(t): v for t, v in by_tier.items()}
    total = sum(by_tier.values())
    base = rows_select(flt).where(and_(True, *(extra.where() if extra else [])))
    tier3 = tuple([r async for r in stream_select(
        engine, base.where(R.c.tier == 3).order_by(R.c.created_us, R.c.seq).limit(TIER3_LISTED)
    )]) if by_tier.get(3) else ()  # fmt: skip
    # Rank the matching slice (outcomes joined only if a bound reads them), then fetch the ten rows.
    top = (
        select(R.c.seq).select_from(base_from).where(and_(True, *where))
        .order_by(R.c.prompt_tokens.desc(), R.c.seq).limit(LONGEST_LISTED)
    ).scalar_subquery()  # fmt: skip
    longest = tuple([r async for r in stream_select(
        engine, rows_select(ExposureFilter(forwarded_only=False)).where(R.c.seq.in_(top))
        .order_by(R.c.prompt_tokens.desc(), R.c.seq)
    )]) if total else ()  # fmt: skip
    contact = sorted({t or "(no tenant)" for (t, _k), (_n, mt) in by_tk.items() if mt >= 2})
    notes = []
    if by_tier.get(3):
        notes.append(
            f"TIER 3: {by_tier[3]} regulated / customer-confidential request(s) reached the disclosed vendor's model"
        )
    if tier3_shared:
        notes.append(
            f"POLICY BREACH: {tier3_shared} Tier-3 request(s) went to a SHARED upstream; "
            "Tier 3 may only go to dedicated or on-prem upstreams"
        )
    unattributed = await _unattributed(engine, spec, extra)
    if unattributed:
        names = ", ".join(f"{u} ({n})" for u, n in unattributed)
        notes.append(
            f"UNATTRIBUTED: {sum(n for _u, n in unattributed)} request(s) meeting this disclosure's "
            f"other criteria went to vendor upstreams with no provider recorded: {names}. A "
            "disclosure by provider cannot find them: if they are this vendor's, name those "
            "upstreams under `upstreams`, and declare `provider:` on them for future requests"
        )
    return Assessment(
        disclosure=spec,
        total=total,
        by_tier=dict(sorted(by_tier.items())),
        by_tenant_key=tuple(
            TenantExposure(t, k, n, mt)
            for (t, k), (n, mt) in sorted(by_tk.items(), key=lambda kv: (-kv[1][0], str(kv[0])))
        ),
        by_day=tuple((from_us(d * DAY_US).date(), n) for d, n in sorted(by_day.items())),
        earliest=from_us(earliest) if earliest is not None else None,
        latest=from_us(latest) if latest is not None else None,
        entities=tuple(
            EntityExposure(name, *vals) for name, vals in sorted(entities.items(), key=lambda kv: -kv[1][0])
        ),
        tier3_total=by_tier.get(3, 0),
        tier3_shared=tier3_shared,
        tier3=tier3,
        longest=longest,
        tenants_to_contact=tuple(contact),
        verdict=_verdict(by_tier),
        disclosure_id=disclosure_id,
        notes=tuple(notes),
        providers=tuple(sorted(providers)),
        unattributed=unattributed,
    )


async def _unattributed(engine: AsyncEngine, spec: DisclosureSpec,
                        extra: ExposureFilter | None) -> tuple[tuple[str, int], ...]:  # fmt: skip
    """Vendor upstreams whose matching requests carry no provider (undeclared, or rows written
    before upstreams could declare one), when the disclosure names the vendor by provider."""
    if not spec.providers:
        return ()
    others = ExposureFilter.from_disclosure(spec.model_copy(update={"providers": (), "upstreams": ()}))
    unnamed = [R.c.provider.is_(None), R.c.upstream_kind != "onprem"]  # on-prem: no vendor
    if spec.upstreams:
        unnamed.append(not_(name_matches(R.c.upstream, spec.upstreams)))
    stmt = (
        select(R.c.upstream, func.count().label("n"))
        .select_from(rows_from(others, extra))
        .where(and_(True, *others.where(), *(extra.where() if extra else []), *unnamed))
        .group_by(R.c.upstream)
        .order_by(func.count().desc(), R.c.upstream)
    )
    async with engine.connect() as conn:
        return tuple((str(u), int(n)) for u, n in (await conn.execute(stmt)).all())
