"""Pruning the signed checkpoint files: keep the newest N, and every one that still proves something.

What ``verify`` does with checkpoints (``audit/verify.py``):

* the newest: a checkpoint past the end of the log is how a truncated tail shows, and through the
  keyed chain it pins every record up to its ``seq``;
* one at a surviving record: its head hash must equal that record's hash.

So an older checkpoint that agrees with the log adds nothing the newest does not already pin, and
one whose record was purged (at or before the newest purge's anchor) is never looked at again:
both may go once they are not among the newest ``keep``. A checkpoint that disagrees with the log
is evidence (a rewritten record, a checkpointed record missing with no purge to explain it, a
checkpoint past the chain head) and is never deleted, however old: pruning must not erase what
``verify`` would report. Unreadable or forged files are not touched either; ``verify`` names them.

Every race with writers or a purge running meanwhile errs towards keeping a file: a record that
appears or vanishes while we look makes its checkpoint look like evidence, never like agreement.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from audit.checkpoints import Checkpoint, CheckpointSigner, scan_checkpoints
from audit.models import AuditEvent, AuditOutcome, AuditRequest, ChainHead
from audit.retention import PurgeAnchor, latest_purge

__all__ = ["PruneResult", "prune_checkpoints"]

_TABLES = (AuditRequest.__table__, AuditOutcome.__table__, AuditEvent.__table__)
_HEAD = ChainHead.__table__
_CHUNK = 500  # seqs per IN (...) lookup: well below every driver's parameter limit


@dataclass(frozen=True, slots=True)
class PruneResult:
    deleted: tuple[int, ...]
    """Seqs of the checkpoints whose files were removed."""
    kept: int
    """Valid checkpoint files left in the folder."""
    evidence: tuple[int, ...]
    """Seqs of checkpoints older than the newest ``keep`` that were kept because they disagree
    with the log: ``tiergate audit verify`` reports why."""


async def prune_checkpoints(engine: AsyncEngine, signer: CheckpointSigner, folder: Path,
                            keep: int | None) -> PruneResult:  # fmt: skip
    """Delete checkpoint files beyond the newest ``keep`` that the log no longer needs.

    ``keep`` None deletes nothing (write-once storage)."""
    if keep is not None and keep < 1:
        raise ValueError("checkpoint_keep must be at least 1: the newest checkpoint is always kept")
    found, _unreadable = scan_checkpoints(folder, signer)
    older = found[:-keep] if keep is not None and len(found) > keep else []
    if not older:
        return PruneResult((), len(found), ())
    async with engine.connect() as conn:
        head_seq = int((await conn.execute(select(_HEAD.c.seq).where(_HEAD.c.id == 1))).scalar_one())
        purge = await latest_purge(conn)
        hashes = await _hashes_at(conn, {cp.seq for _path, cp in older})
    deleted: list[int] = []
    evidence: list[int] = []
    for path, cp in older:
        if _agrees(cp, head_seq, purge, hashes.get(cp.seq, set())):
            path.unlink(missing_ok=True)  # another replica may have pruned it already
            deleted.append(cp.seq)
        else:
            evidence.append(cp.seq)
    return PruneResult(tuple(deleted), len(found) - len(deleted), tuple(evidence))


def _agrees(cp: Checkpoint, head_seq: int, purge: PurgeAnchor | None, stored: set[str]) -> bool:
    """True when verify could not report anything about this checkpoint, now or later."""
    if cp.seq > head_seq:
        return False  # the log ends before it: a truncated tail
    if cp.seq == 0:
        return True  # the empty log: pins nothing a later checkpoint does not
    if stored:
        return cp.head_hash in stored
    # The record is gone: fine only when a purge took it.
    return purge is not None and cp.seq <= purge.through_seq


async def _hashes_at(conn: AsyncConnection, seqs: Iterable[int]) -> dict[int, set[str]]:
    """Hex hashes of the chained records at these seqs (a forged duplicate adds a second one)."""
    wanted = sorted(seqs)
    out: dict[int, set[str]] = {}
    for i in range(0, len(wanted), _CHUNK):
        chunk = wanted[i : i + _CHUNK]
        for table in _TABLES:
            rows = await conn.execute(select(table.c.seq, table.c.hash).where(table.c.seq.in_(chunk)))
            for seq, digest in rows:
                out.setdefault(int(seq), set()).add(bytes(digest).hex())
    return out
