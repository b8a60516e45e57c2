"""Exposure queries over the write-ahead log: filter, count and stream matching requests.

Every filter maps to an indexed column pair (``provider_model`` / ``upstream`` / ``provider`` /
``tenant`` with ``created_us``), so a window on one model reads its slice of an index instead of
the table. Results stream from a server-side cursor: memory stays flat however many rows match.

Upstream, provider and model names may be ``*`` patterns (:mod:`audit.names`), which read the
window's slice of the time index instead; provider names ignore case (the gateway stores them
lowercase). Token bounds of a disclosure also read the outcome's reported count (one join).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Select, and_, exists, func, or_, select
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.selectable import FromClause

from audit.disclosures import DisclosureSpec
from audit.models import AuditOutcome, AuditRequest
from audit.names import name_matches
from audit.timeutil import from_us, to_us
from audit.types import NOT_FORWARDED

__all__ = ["ROW_FIELDS", "ExposureFilter", "ExposureRow", "count_rows", "rows_from", "stream_rows"]

R = AuditRequest.__table__
O = AuditOutcome.__table__  # noqa: E741 -- O is the outcomes table, as in the SQL
_NF = O.alias("not_forwarded")  # its own name: the outer query may join O as well

ROW_FIELDS = (
    "seq", "request_id", "created_at", "tenant", "key_id", "endpoint", "client_model", "upstream",
    "upstream_kind", "provider", "provider_model", "prompt_chars", "prompt_tokens", "tier",
    "findings", "stripped", "stream", "forwarded", "status", "http_status", "upstream_status",
    "usage_prompt_tokens",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class ExposureRow:
    seq: int
    request_id: str
    created_at: datetime
    tenant: str | None
    key_id: str | None
    endpoint: str
    client_model: str | None
    upstream: str | None
    upstream_kind: str | None
    provider: str | None
    provider_model: str | None
    prompt_chars: int
    prompt_tokens: int
    tier: int
    findings: dict[str, int]
    stripped: bool
    stream: bool
    forwarded: bool
    status: str | None  # None: no outcome recorded (in flight, or the gateway died)
    http_status: int | None
    upstream_status: int | None
    usage_prompt_tokens: int | None

    def as_dict(self) -> dict[str, Any]:
        out = {name: getattr(self, name) for name in ROW_FIELDS}
        out["created_at"] = self.created_at.isoformat()
        return out


@dataclass(frozen=True, slots=True)
class ExposureFilter:
    """Every given criterion must hold; empty tuples and None mean "any"."""

    start: datetime | None = None  # inclusive
    end: datetime | None = None  # inclusive
    upstreams: tuple[str, ...] = ()  # names or * patterns
    providers: tuple[str, ...] = ()  # with upstreams: either identifies the vendor; case ignored
    models: tuple[str, ...] = ()  # provider model names or * patterns
    client_models: tuple[str, ...] = ()
    min_prompt_tokens: int | None = None
    max_prompt_tokens: int | None = None
    min_prompt_chars: int | None = None
    # The token bounds on our own count only, or also on the upstream's reported
    # usage.prompt_tokens: a request then meets a bound when either count does (see
    # ``_token_bounds``). Disclosures use both: their bounds are in the vendor's tokens.
    reported_tokens: bool = False
    tiers: tuple[int, ...] = ()
    tenants: tuple[str, ...] = ()
    key_ids: tuple[str, ...] = ()
    endpoints: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()  # outcome status; "pending" = no outcome recorded
    stream: bool | None = None
    forwarded_only: bool = True
    extra: tuple[ColumnElement[bool], ...] = field(default=(), repr=False)

    @classmethod
    def from_disclosure(cls, spec: DisclosureSpec) -> ExposureFilter:
        c = spec.conditions
        return cls(
            start=spec.window.start,
            end=spec.window.end,
            upstreams=spec.upstreams,
            providers=spec.providers,
            models=spec.models,
            min_prompt_tokens=c.min_prompt_tokens,
            max_prompt_tokens=c.max_prompt_tokens,
            min_prompt_chars=c.min_prompt_chars,
            endpoints=tuple(c.endpoints or ()),
            stream=True if c.stream_only else None,
            reported_tokens=True,
        )

    def where(self) -> list[ColumnElement[bool]]:
        w: list[ColumnElement[bool]] = list(self.extra)
        if self.start is not None:
            w.append(R.c.created_us >= to_us(self.start))
        if self.end is not None:
            w.append(R.c.created_us <= to_us(self.end))
        vendor = []
        if self.upstreams:
            vendor.append(name_matches(R.c.upstream, self.upstreams))
        if self.providers:
            vendor.append(name_matches(R.c.provider, (p.lower() for p in self.providers)))
        if vendor:
            w.append(or_(*vendor))
        if self.models:
            w.append(name_matches(R.c.provider_model, self.models))
        if self.client_models:
            w.append(R.c.client_model.in_(self.client_models))
        w += self._token_bounds()
        if self.min_prompt_chars is not None:
            w.append(R.c.prompt_chars >= self.min_prompt_chars)
        if self.tiers:
            w.append(R.c.tier.in_(self.tiers))
        if self.tenants:
            w.append(R.c.tenant.in_(self.tenants))
        if self.key_ids:
            w.append(R.c.key_id.in_(self.key_ids))
        if self.endpoints:
            w.append(R.c.endpoint.in_(self.endpoints))
        if self.stream is not None:
            w.append(R.c.stream.is_(self.stream))
        if self.forwarded_only:
            # A write-ahead row that committed after its client was told 503 was never forwarded.
            w.append(R.c.forwarded.is_(True))
            w.append(~exists().where(_NF.c.request_id == R.c.request_id, _NF.c.status == NOT_FORWARDED))
        if self.statuses:
            named = [s for s in self.statuses if s != "pending"]
            alts = [O.c.status.in_(named)] if named else []
            if "pending" in self.statuses:
                alts.append(O.c.seq.is_(None))
            w.append(or_(*alts))
        return w

    def _token_bounds(self) -> list[ColumnElement[bool]]:
        # With reported tokens, the true count lies somewhere between ours (an estimate unless the
        # upstream has a tokenizer) and the vendor's report (exact, but missing when the answer
        # failed, and some vendors leave cached prefix tokens out of it): a bound is met when
        # either count meets it. In doubt, a request is included.
        ours, reported = R.c.prompt_tokens, O.c.usage_prompt_tokens
        w: list[ColumnElement[bool]] = []
        if self.min_prompt_tokens is not None:
            n = self.min_prompt_tokens
            w.append(or_(ours >= n, reported >= n) if self.reported_tokens else ours >= n)
        if self.max_prompt_tokens is not None:
            n = self.max_prompt_tokens
            w.append(or_(ours <= n, reported <= n) if self.reported_tokens else ours <= n)
        return w

    @property
    def needs_outcomes(self) -> bool:
        reported = self.reported_tokens and (self.min_prompt_tokens is not None or self.max_prompt_tokens is not None)
        return bool(self.statuses) or reported


def rows_from(*filters: ExposureFilter | None) -> FromClause:
    """The FROM clause the filters' ``where()`` need: the requests, joined to their outcomes only
    when a filter reads them (the join costs an index probe per row)."""
    if any(f is not None and f.needs_outcomes for f in filters):
        return R.outerjoin(O, O.c.request_id == R.c.request_id)
    return R


_ROW_COLUMNS = (
    R.c.seq, R.c.request_id, R.c.created_us, R.c.tenant, R.c.key_id, R.c.endpoint,
    R.c.client_model, R.c.upstream, R.c.upstream_kind, R.c.provider, R.c.provider_model,
    R.c.prompt_chars, R.c.prompt_tokens, R.c.tier, R.c.findings, R.c.stripped, R.c.stream,
    R.c.forwarded, O.c.status, O.c.http_status, O.c.upstream_status, O.c.usage_prompt_tokens,
)  # fmt: skip


def rows_select(flt: ExposureFilter) -> Select[Any]:
    joined = R.outerjoin(O, O.c.request_id == R.c.request_id)
    return select(*_ROW_COLUMNS).select_from(joined).where(and_(True, *flt.where()))


_FINDINGS_CACHE: dict[str, dict[str, int]] = {}


def _findings(raw: str | None) -> dict[str, int]:
    # A handful of distinct values repeat across millions of rows: parse each once. The cached
    # dicts are shared, so callers must treat ``ExposureRow.findings`` as read-only.
    if not raw or raw == "{}":
        return {}
    parsed = _FINDINGS_CACHE.get(raw)
    if parsed is None:
        parsed = json.loads(raw)
        if len(_FINDINGS_CACHE) < 10_000:
            _FINDINGS_CACHE[raw] = parsed
    return parsed


def to_row(r: Any) -> ExposureRow:
    return ExposureRow(
        seq=int(r.seq),
        request_id=r.request_id,
        created_at=from_us(r.created_us),
        tenant=r.tenant,
        key_id=r.key_id,
        endpoint=r.endpoint,
        client_model=r.client_model,
        upstream=r.upstream,
        upstream_kind=r.upstream_kind,
        provider=r.provider,
        provider_model=r.provider_model,
        prompt_chars=int(r.prompt_chars),
        prompt_tokens=int(r.prompt_tokens),
        tier=int(r.tier),
        findings=_findings(r.findings),
        stripped=bool(r.stripped),
        stream=bool(r.stream),
        forwarded=bool(r.forwarded),
        status=r.status,
        http_status=r.http_status,
        upstream_status=r.upstream_status,
        usage_prompt_tokens=r.usage_prompt_tokens,
    )


async def stream_select(engine: AsyncEngine, stmt: Select[Any], chunk: int = 2000
                        ) -> AsyncIterator[ExposureRow]:  # fmt: skip
    async with engine.connect() as conn:
        result = await conn.stream(stmt.execution_options(yield_per=chunk))
        # Whole partitions: iterating an AsyncResult row by row costs a greenlet switch per row.
        async for partition in result.partitions(chunk):
            for r in partition:
                yield to_row(r)


def stream_rows(engine: AsyncEngine, flt: ExposureFilter, *, limit: int | None = None,
                newest_first: bool = False) -> AsyncIterator[ExposureRow]:  # fmt: skip
    """Matching requests in time order (ties by seq), streamed."""
    order = (R.c.created_us.desc(), R.c.seq.desc()) if newest_first else (R.c.created_us, R.c.seq)
    stmt = rows_select(flt).order_by(*order)
    if limit is not None:
        stmt = stmt.limit(limit)
    return stream_select(engine, stmt)


async def count_rows(engine: AsyncEngine, flt: ExposureFilter) -> int:
    stmt = select(func.count()).select_from(rows_from(flt)).where(and_(True, *flt.where()))
    async with engine.connect() as conn:
        return int((await conn.execute(stmt)).scalar_one())
