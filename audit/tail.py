"""Read the audit log forward from a sequence number: what the SIEM stream and alerts follow.

The hash chain gives every request, outcome and event one global ``seq``, so following the log
is "everything after the last seq I saw", whoever wrote it (this process, another replica, the
CLI). Records come out metadata-only: the request row's fingerprints are left out (they are keyed
hashes of prompt text: an equality oracle has no place in a SIEM), and there is no text to leave.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from audit.models import AuditEvent, AuditOutcome, AuditRequest

__all__ = ["TailRecord", "first_seq", "head_seq", "read_after"]

_R, _O, _E = AuditRequest.__table__, AuditOutcome.__table__, AuditEvent.__table__
_REQUEST_FIELDS = ("request_id", "tenant", "key_id", "endpoint", "client_model", "upstream", "upstream_kind",
                   "provider", "provider_model", "prompt_chars", "prompt_tokens", "tier", "stripped", "stream",
                   "forwarded")  # fmt: skip
_OUTCOME_FIELDS = ("request_id", "status", "http_status", "upstream_status", "usage_prompt_tokens",
                   "usage_completion_tokens", "latency_us", "error_class", "integrity_flag")  # fmt: skip


@dataclass(frozen=True, slots=True)
class TailRecord:
    seq: int
    type: str  # "request" | "outcome" | "event"
    created_us: int
    chain_hash: str  # the row's hash in the audit chain (hex): ties a stream line to the log
    tenant: str | None  # the request's tenant (outcomes: their request's); events: detail["tenant"]
    kind: str | None  # events only
    fields: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"seq": self.seq, "type": self.type, "created_us": self.created_us,
                               "chain_hash": self.chain_hash, "tenant": self.tenant}  # fmt: skip
        if self.kind is not None:
            out["kind"] = self.kind
        out["record"] = self.fields
        return out


def _bool(v: Any) -> Any:
    return bool(v) if isinstance(v, int) and not isinstance(v, bool) else v


async def read_after(engine: AsyncEngine, after: int, limit: int) -> list[TailRecord]:
    """The first ``limit`` records with ``seq > after``, in seq order."""
    requests = select(_R.c.seq, _R.c.created_us, _R.c.hash, *(_R.c[f] for f in _REQUEST_FIELDS), _R.c.findings) \
        .where(_R.c.seq > after).order_by(_R.c.seq).limit(limit)  # fmt: skip
    outcomes = (
        select(_O.c.seq, _O.c.created_us, _O.c.hash, *(_O.c[f] for f in _OUTCOME_FIELDS), _R.c.tenant, _R.c.upstream)
        .select_from(_O.outerjoin(_R, _R.c.request_id == _O.c.request_id))
        .where(_O.c.seq > after)
        .order_by(_O.c.seq)
        .limit(limit)
    )
    events = select(_E.c.seq, _E.c.created_us, _E.c.hash, _E.c.kind, _E.c.detail) \
        .where(_E.c.seq > after).order_by(_E.c.seq).limit(limit)  # fmt: skip
    out: list[TailRecord] = []
    # One snapshot for the three reads; each table's first `limit` rows hold every one of the
    # merged first `limit`.
    async with engine.connect() as conn:
        for r in (await conn.execute(requests)).mappings():
            fields = {f: _bool(r[f]) if f in ("stripped", "stream", "forwarded") else r[f] for f in _REQUEST_FIELDS}
            fields["findings"] = json.loads(r["findings"])
            out.append(TailRecord(r["seq"], "request", r["created_us"], bytes(r["hash"]).hex(), r["tenant"], None,
                                  fields))  # fmt: skip
        for r in (await conn.execute(outcomes)).mappings():
            fields = {f: r[f] for f in _OUTCOME_FIELDS}
            fields["upstream"] = r["upstream"]  # the request's: which upstream this outcome is of
            fields["integrity_flag"] = bool(fields["integrity_flag"])
            out.append(TailRecord(r["seq"], "outcome", r["created_us"], bytes(r["hash"]).hex(), r["tenant"], None,
                                  fields))  # fmt: skip
        for r in (await conn.execute(events)).mappings():
            detail = json.loads(r["detail"])
            tenant = detail.get("tenant") if isinstance(detail, dict) else None
            out.append(TailRecord(r["seq"], "event", r["created_us"], bytes(r["hash"]).hex(),
                                  tenant if isinstance(tenant, str) else None, r["kind"], detail))  # fmt: skip
    out.sort(key=lambda t: t.seq)
    return out[:limit]


async def first_seq(engine: AsyncEngine) -> int | None:
    """The oldest seq still in the log (older ones were purged); None when it is empty."""
    async with engine.connect() as conn:
        values = [(await conn.execute(select(func.min(t.c.seq)))).scalar() for t in (_R, _O, _E)]
    present = [v for v in values if v is not None]
    return min(present) if present else None


async def head_seq(engine: AsyncEngine) -> int:
    """The seq of the last chained record (0 when none)."""
    from audit.models import ChainHead

    async with engine.connect() as conn:
        value = (await conn.execute(select(ChainHead.__table__.c.seq).where(ChainHead.__table__.c.id == 1))).scalar()
    return int(value or 0)
