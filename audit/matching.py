"""``exposure match --document``: which requests carried exactly this document?

The document's keyed fingerprint is compared with each request's whole-prompt fingerprint and with
its per-segment fingerprints (a document pasted as one message among others). The segment lookup
table is only an index, keyed by a prefix of the fingerprint: every hit is re-checked against the
chained ``segment_fps`` column, so neither a shared prefix nor tampering with the index can invent a
match.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncEngine

from audit.batch import segment_key
from audit.models import AuditRequest, AuditSegment
from audit.queries import ExposureFilter, ExposureRow, rows_select, to_row

__all__ = ["DocumentMatch", "match_fingerprint"]

_HEX = "0123456789abcdefABCDEF"
R = AuditRequest.__table__
S = AuditSegment.__table__


@dataclass(frozen=True, slots=True)
class DocumentMatch:
    row: ExposureRow
    matched_on: str  # "whole_prompt" | "segment"


async def match_fingerprint(engine: AsyncEngine, fp: str) -> AsyncIterator[DocumentMatch]:
    """Requests (forwarded or refused: see ``row.forwarded``) whose prompt or a segment is ``fp``."""
    if not fp or fp.strip(_HEX):
        return  # records hold hex fingerprints only (audit.records), and it has no segment key
    fp = fp.lower()  # as the writer spells them (hexdigest): "AB12…" copied from a report is the same
    seqs = select(S.c.request_seq).where(S.c.fp_key == segment_key(fp))
    stmt = (
        rows_select(ExposureFilter(forwarded_only=False))
        .add_columns(R.c.fingerprint, R.c.segment_fps)
        .where(or_(R.c.fingerprint == fp, R.c.seq.in_(seqs)))
        .order_by(R.c.created_us, R.c.seq)
    )
    async with engine.connect() as conn:
        result = await conn.stream(stmt.execution_options(yield_per=1000))
        async for partition in result.partitions(1000):
            for r in partition:
                whole = r.fingerprint == fp
                if not whole and fp not in (r.segment_fps or "").split():
                    continue  # the index pointed at a row whose chained data does not carry it
                yield DocumentMatch(to_row(r), "whole_prompt" if whole else "segment")
