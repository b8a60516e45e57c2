"""A batch of chained rows and its placement in the chain: pure, shared by both write paths.

:func:`link_batch` gives every row its ``seq`` and ``hash`` after the current chain head and lays
the rows out as driver-ready tuples per table; the caller runs the INSERTs and moves the head, in
the same transaction that read it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from audit.chain import ChainHasher
from audit.errors import AuditWriteError
from audit.models import AuditEvent, AuditOutcome, AuditRequest, AuditSegment

__all__ = ["INSERT_COLUMNS", "LinkedBatch", "PendingRow", "insert_sql", "link_batch", "segment_key"]

INSERT_COLUMNS: dict[str, tuple[str, ...]] = {
    t.name: tuple(c.name for c in t.columns)
    for t in (AuditRequest.__table__, AuditOutcome.__table__, AuditEvent.__table__, AuditSegment.__table__)
}
# audit_segments is derived (a lookup index), its rows built here rather than by the caller.
if INSERT_COLUMNS["audit_segments"] != ("fp_key", "request_seq"):  # pragma: no cover
    raise ImportError("audit_segments columns changed: update link_batch")


def segment_key(fingerprint: str) -> int:
    """The lookup key of a segment's fingerprint (hex): its first 60 bits, a positive BIGINT on
    both databases."""
    return int(fingerprint[:15], 16)


@dataclass(slots=True)
class PendingRow:
    """One chained row before it has a place in the chain (no ``seq`` / ``hash`` yet)."""

    table: str
    values: dict[str, Any]
    segments: tuple[str, ...] = ()


@dataclass(slots=True)
class LinkedBatch:
    """A batch placed in the chain: rows per table, ready for the driver, and the new head."""

    rows: dict[str, list[tuple[Any, ...]]]
    seqs: list[list[int]]
    head_seq: int
    head_hash: bytes


def link_batch(head_seq: int, head_hash: bytes, batch: list[list[PendingRow]], hasher: ChainHasher) -> LinkedBatch:
    """Give every row its ``seq`` and ``hash`` after the current head; pure, used by both backends."""
    seq, prev = head_seq, head_hash
    link = hasher.link
    by_table: dict[str, list[tuple[Any, ...]]] = {}
    segments: list[tuple[Any, ...]] = []
    seqs: list[list[int]] = []
    for rows in batch:
        item_seqs = []
        for row in rows:
            seq += 1
            values = dict(row.values, seq=seq)
            prev = link(prev, row.table, values)
            values["hash"] = prev
            cols = INSERT_COLUMNS[row.table]
            by_table.setdefault(row.table, []).append(tuple(values[c] for c in cols))
            # (fp_key, request_seq); two fingerprints of one request may share a key
            segments.extend((key, seq) for key in dict.fromkeys(map(segment_key, row.segments)))
            item_seqs.append(seq)
        seqs.append(item_seqs)
    if segments:
        by_table["audit_segments"] = segments
    return LinkedBatch(by_table, seqs, seq, prev)


@functools.cache
def insert_sql(table: str, paramstyle: str) -> str:
    cols = INSERT_COLUMNS[table]
    if paramstyle == "qmark":
        marks = ", ".join("?" for _ in cols)
    elif paramstyle == "numeric_dollar":
        marks = ", ".join(f"${i}" for i in range(1, len(cols) + 1))
    elif paramstyle == "format":
        marks = ", ".join("%s" for _ in cols)
    else:  # pragma: no cover - only the two supported drivers reach here
        raise AuditWriteError(f"unsupported driver paramstyle {paramstyle}")
    return f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({marks})"
