"""The segment lookup keyed by a 60-bit prefix of the fingerprint (BIGINT), not its 64 characters.

On SQLite a table without rowid. The table is derived from the chained ``audit_requests.segment_fps``,
so both directions rebuild it from there rather than convert it.

Revision ID: 0007_segment_keys
Revises: 0006_upstream_length_caps
Create Date: 2026-12-05
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import sqlalchemy as sa
from alembic import op

revision = "0007_segment_keys"
down_revision = "0006_upstream_length_caps"
branch_labels = None
depends_on = None

_REQUESTS = sa.table("audit_requests", sa.column("seq"), sa.column("fingerprint"), sa.column("segment_fps"))
# requests read per round, index rows per INSERT: memory stays bounded however many segments a
# request carries (an agent's conversation: hundreds) and however sparse the seqs are (retention)
_PAGE = 500
_FLUSH = 20_000
_HEX = "0123456789abcdefABCDEF"


def _key(fp: str) -> int | None:
    # Writers before this revision took any alphanumeric fingerprint: one that is no hex has no
    # key, and no document (whose fingerprint is hex) can match it anyway.
    return None if fp.strip(_HEX) else int(fp[:15], 16)


def _rebuild(table: sa.Table, column: str, value: Callable[[str], Any]) -> None:
    """One index row per distinct value of a request's segment fingerprints, leaving out the
    whole prompt's own (matched directly): what ``audit.records.request_row`` indexes."""
    bind = op.get_bind()
    last = None
    values: list[dict[str, Any]] = []
    while True:
        query = sa.select(_REQUESTS.c.seq, _REQUESTS.c.fingerprint, _REQUESTS.c.segment_fps)
        if last is not None:
            query = query.where(_REQUESTS.c.seq > last)
        rows = bind.execute(query.order_by(_REQUESTS.c.seq).limit(_PAGE)).all()
        if not rows:
            break
        for seq, whole, fps in rows:
            for v in _distinct(value(f) for f in (fps or "").split() if f != whole):
                if v is not None:
                    values.append({column: v, "request_seq": seq})
            if len(values) >= _FLUSH:
                bind.execute(table.insert(), values)
                values = []
        last = rows[-1][0]
    if values:
        bind.execute(table.insert(), values)


def _distinct(values: Iterable[Any]) -> list[Any]:
    return list(dict.fromkeys(values))


def upgrade() -> None:
    op.drop_index("ix_audit_segments_request_seq", table_name="audit_segments")
    op.drop_table("audit_segments")
    table = op.create_table(
        "audit_segments",
        sa.Column("fp_key", sa.BigInteger, autoincrement=False, nullable=False),
        sa.Column("request_seq", sa.BigInteger, autoincrement=False, nullable=False),
        sa.PrimaryKeyConstraint("fp_key", "request_seq", name="pk_audit_segments"),
        sqlite_with_rowid=False,
    )
    _rebuild(table, "fp_key", _key)
    op.create_index("ix_audit_segments_request_seq", "audit_segments", ["request_seq"])


def downgrade() -> None:
    op.drop_index("ix_audit_segments_request_seq", table_name="audit_segments")
    op.drop_table("audit_segments")
    table = op.create_table(
        "audit_segments",
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("request_seq", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("fingerprint", "request_seq", name="pk_audit_segments"),
    )
    _rebuild(table, "fingerprint", lambda fp: fp)
    op.create_index("ix_audit_segments_request_seq", "audit_segments", ["request_seq"])
