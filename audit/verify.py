"""``audit verify``: walk the chain from its oldest surviving record and report the first bad one.

What each tampering looks like here:

* modified row   -> its recomputed hash differs from the stored one (the chain key is secret)
* deleted row    -> a gap in ``seq`` (the next record's link also fails)
* inserted row   -> a ``seq`` used twice, a row beyond the chain head, or a hash that fails
* truncated tail -> the chain head row, or a signed checkpoint, points past the last record
* rewritten log  -> a checkpoint's head hash differs from the record at its ``seq``

A retention purge removes a prefix and first appends a ``purge`` event naming the last purged
``seq`` and its hash (the anchor), so the walk can start after it with nothing missing.

An interrupted purge (a crash or a cancel between two batches) leaves the records from some
``seq`` up to the anchor still present. That is not tampering: the log verifies, and the report's
``unfinished_purge`` names what is left for the next purge to delete. The walk then starts at the
oldest surviving record (its predecessor's hash went with the deleted batches, so that one record
is taken as stored) and every later link is checked, up to and through the anchor.

The whole walk reads one snapshot of the database, so a purge or writers running meanwhile cannot
make a consistent log look broken.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from audit.chain import CHAINED_COLUMNS, GENESIS, ChainHasher
from audit.checkpoints import CheckpointSigner, load_checkpoints
from audit.models import AuditEvent, AuditOutcome, AuditRequest, ChainHead
from audit.retention import latest_purge

__all__ = ["Problem", "VerifyReport", "verify_chain"]

_TABLES = {
    "audit_requests": AuditRequest.__table__,
    "audit_outcomes": AuditOutcome.__table__,
    "audit_events": AuditEvent.__table__,
}
_HEAD = ChainHead.__table__
_PAGE = 20_000
_MAX_PROBLEMS = 100


@dataclass(frozen=True, slots=True)
class Problem:
    kind: str  # modified | deleted | inserted | truncated | checkpoint
    seq: int | None
    table: str | None
    message: str


@dataclass(frozen=True, slots=True)
class VerifyReport:
    records: int
    first_seq: int | None
    last_seq: int | None
    head_seq: int
    checkpoints_checked: int
    purged_through: int | None
    problems: tuple[Problem, ...] = field(default_factory=tuple)
    unfinished_purge: tuple[int, int] | None = None
    """(first, last) seq of records the newest purge planned to delete that are still present."""

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def first_bad(self) -> Problem | None:
        return self.problems[0] if self.problems else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "records": self.records,
            "first_seq": self.first_seq,
            "last_seq": self.last_seq,
            "head_seq": self.head_seq,
            "checkpoints_checked": self.checkpoints_checked,
            "purged_through": self.purged_through,
            "unfinished_purge": None
            if self.unfinished_purge is None
            else {"from_seq": self.unfinished_purge[0], "through_seq": self.unfinished_purge[1]},
            "first_bad": None if self.ok else _problem_dict(self.problems[0]),
            "problems": [_problem_dict(p) for p in self.problems],
        }


def _problem_dict(p: Problem) -> dict[str, Any]:
    return {"kind": p.kind, "seq": p.seq, "table": p.table, "message": p.message}


async def _page(conn: AsyncConnection, after: int, upto: int) -> list[tuple[int, str, Any]]:
    """Every chained row with ``after < seq <= upto`` (at most one page per table), by seq."""
    rows: list[tuple[int, str, Any]] = []
    limit_seq = upto
    fetched: list[tuple[str, Sequence[Any]]] = []
    for name, table in _TABLES.items():
        cols = [table.c[c] for c in CHAINED_COLUMNS[name]] + [table.c.hash]
        got = (
            await conn.execute(
                select(*cols).where(table.c.seq > after, table.c.seq <= upto).order_by(table.c.seq).limit(_PAGE)
            )
        ).all()
        fetched.append((name, got))
        if len(got) == _PAGE:  # this table has more: only seqs up to its last row are complete
            limit_seq = min(limit_seq, int(got[-1].seq))
    for name, got in fetched:
        rows.extend((int(r.seq), name, r) for r in got if int(r.seq) <= limit_seq)
    rows.sort(key=lambda t: (t[0], t[1]))
    return rows


async def verify_chain(
    engine: AsyncEngine,
    hasher: ChainHasher,
    signer: CheckpointSigner,
    checkpoint_dir: Path,
    progress: Callable[[int], None] | None = None,
) -> VerifyReport:
    problems: list[Problem] = []

    def problem(kind: str, seq: int | None, table: str | None, message: str) -> None:
        if len(problems) < _MAX_PROBLEMS:
            problems.append(Problem(kind, seq, table, message))

    checkpoints, bad_files = load_checkpoints(checkpoint_dir, signer)
    for msg in bad_files:
        problem("checkpoint", None, None, msg)
    by_seq = {cp.seq: cp for cp in checkpoints}

    async with engine.connect() as plain:
        conn = await _snapshot(plain)
        head = (await conn.execute(select(_HEAD.c.seq, _HEAD.c.hash).where(_HEAD.c.id == 1))).one()
        head_seq, head_hash = int(head.seq), bytes(head.hash)
        purge = await latest_purge(conn)
        first_seqs = [
            (await conn.execute(select(func.min(t.c.seq)).where(t.c.seq <= head_seq))).scalar()
            for t in _TABLES.values()
        ]
        present = [s for s in first_seqs if s is not None]
        first_seq = min(present) if present else None

        purged_through = purge.through_seq if purge else None
        expected = (purged_through + 1) if purged_through is not None else 1
        prev: bytes | None = purge.anchor_hash if purge else GENESIS
        unfinished: tuple[int, int] | None = None
        if first_seq is not None and purged_through is not None and first_seq <= purged_through:
            # An interrupted purge: the start is unanchored, the anchor is checked at its seq.
            prev = None
            expected = first_seq
            unfinished = (first_seq, purged_through)
        checked = 0
        records = 0
        last_seq: int | None = None
        after = expected - 1 if first_seq is None else min(expected, first_seq) - 1
        while True:
            page = await _page(conn, after, head_seq)
            if not page:
                break
            for seq, group in groupby(page, key=lambda t: t[0]):
                candidates = [(table, row) for _, table, row in group]
                records += len(candidates)
                if seq < expected:  # only possible for a seq we have already walked past
                    for table, _row in candidates:
                        problem("inserted", seq, table, f"seq {seq} appears more than once")
                    continue
                if seq > expected:
                    problem("deleted", expected, None,
                            f"records {expected}..{seq - 1} are missing")  # fmt: skip
                    prev = None  # resynchronise on the stored hash below
                table, row = candidates[0]
                if prev is not None:
                    matching = [
                        (t, r) for t, r in candidates
                        if hasher.link(prev, t, r._mapping) == bytes(r.hash)
                    ]  # fmt: skip
                    if matching:
                        table, row = matching[0]
                    else:
                        problem("modified", seq, table,
                                f"record {seq} ({table}) does not match its chain hash")  # fmt: skip
                for t, _r in candidates:
                    if _r is not row:
                        problem("inserted", seq, t, f"seq {seq} appears more than once ({t})")
                stored = bytes(row.hash)
                if purge is not None and seq == purge.through_seq:
                    if stored != purge.anchor_hash:
                        problem("modified", seq, table, f"record {seq} differs from the purge anchor")
                cp = by_seq.get(seq)
                if cp is not None:
                    checked += 1
                    if cp.head_hash != stored.hex():
                        problem("checkpoint", seq, table,
                                f"record {seq} differs from the signed checkpoint")  # fmt: skip
                prev = stored
                expected = seq + 1
                last_seq = seq
            after = page[-1][0]
            if progress is not None:
                progress(records)

        beyond = [(await conn.execute(select(func.max(t.c.seq)))).scalar() for t in _TABLES.values()]
        top = max((b for b in beyond if b is not None), default=0)
        if top > head_seq:
            # Writers commit rows and the head together, so a row is legitimately past the head
            # we started from only if the head has moved on by now.
            now_head = (await conn.execute(select(_HEAD.c.seq).where(_HEAD.c.id == 1))).scalar()
            if top > int(now_head or 0):
                problem("inserted", int(now_head or 0) + 1, None,
                        f"records exist beyond the chain head (up to seq {top})")  # fmt: skip
        end = last_seq if last_seq is not None else (purged_through or 0)
        if head_seq > end:
            problem("truncated", end + 1, None,
                    f"records {end + 1}..{head_seq} are missing (the chain head is at {head_seq})")  # fmt: skip
        elif last_seq is not None and prev is not None and head_hash != prev:
            problem("modified", last_seq, None, "the chain head does not match the last record")
        for cp in checkpoints:
            if cp.seq > end and cp.seq > head_seq:
                problem("truncated", end + 1, None,
                        f"a signed checkpoint records {cp.seq} entries; the log ends at {end}")  # fmt: skip
                break
            if cp.seq > end >= 0 and cp.seq == head_seq and cp.head_hash != head_hash.hex():
                problem("checkpoint", cp.seq, None, "chain head differs from the signed checkpoint")
    problems.sort(key=lambda p: (p.seq is None, p.seq or 0))
    return VerifyReport(records, first_seq, last_seq, head_seq, checked, purged_through,
                        tuple(problems), unfinished)  # fmt: skip


async def _snapshot(conn: AsyncConnection) -> AsyncConnection:
    """One consistent view for the whole walk.

    PostgreSQL's default READ COMMITTED gives each statement a fresh view: a purge batch that
    commits between two pages would look like deleted records. SQLite in WAL mode already reads
    one snapshot per transaction, and the connection's transaction lasts the whole walk.
    """
    if conn.dialect.name == "postgresql":
        return await conn.execution_options(isolation_level="REPEATABLE READ")
    return conn
