"""Signed checkpoints of the chain head, written as files outside the database.

A checkpoint pins (seq, hash) at a moment: editing or deleting any row at or before ``seq`` breaks
the chain up to it, and deleting the newest rows (a truncated tail) leaves a checkpoint pointing
past the end of the log. The signature (HMAC-SHA256 with the checkpoint key) stops someone with
file access alone from writing a matching checkpoint for a doctored log.

Rows newer than the latest checkpoint are protected by the keyed chain alone: keep
``checkpoint_interval_s`` short and the folder on storage the database host cannot rewrite.

A checkpoint file is never replaced by one that pins a different hash at the same ``seq``: that
only happens after the log was rewound or rewritten, and the old file is the evidence.
``checkpoint_pruning.py`` removes old files that no longer prove anything.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from audit.errors import AuditError
from audit.models import ChainHead
from audit.timeutil import from_us, to_us

__all__ = ["Checkpoint", "CheckpointSigner", "load_checkpoints", "scan_checkpoints",
           "write_checkpoint"]  # fmt: skip

_HEAD = ChainHead.__table__
_PREFIX = "checkpoint-"


@dataclass(frozen=True, slots=True)
class Checkpoint:
    seq: int  # records ever appended up to and including this one
    head_hash: str  # hex
    created_at: datetime

    def payload(self) -> bytes:
        body = {"v": 1, "seq": self.seq, "head_hash": self.head_hash,
                "created_us": to_us(self.created_at)}  # fmt: skip
        return json.dumps(body, sort_keys=True, separators=(",", ":")).encode()


class CheckpointSigner:
    def __init__(self, checkpoint_key: bytes) -> None:
        self._key = hmac.new(checkpoint_key, b"tiergate/checkpoint/v1", hashlib.sha256).digest()

    def sign(self, cp: Checkpoint) -> str:
        return hmac.new(self._key, cp.payload(), hashlib.sha256).hexdigest()

    def valid(self, cp: Checkpoint, signature: str) -> bool:
        return hmac.compare_digest(self.sign(cp), signature)


async def write_checkpoint(engine: AsyncEngine, signer: CheckpointSigner, folder: Path,
                           now: datetime) -> Checkpoint:  # fmt: skip
    async with engine.connect() as conn:
        head = (await conn.execute(select(_HEAD.c.seq, _HEAD.c.hash).where(_HEAD.c.id == 1))).one()
    cp = Checkpoint(int(head.seq), bytes(head.hash).hex(), now)
    doc = json.loads(cp.payload())
    doc["signature"] = signer.sign(cp)
    folder.mkdir(parents=True, exist_ok=True)  # noqa: ASYNC240 -- once per checkpoint, a directory that exists
    # Write then rename: a crash never leaves a half-written checkpoint behind.
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".json")
    with os.fdopen(fd, "w") as fh:
        json.dump(doc, fh, sort_keys=True)
        fh.flush()
        os.fsync(fh.fileno())
    target = folder / f"{_PREFIX}{cp.seq:020d}.json"
    try:
        _check_replaceable(target, cp, signer)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return cp


def _check_replaceable(target: Path, cp: Checkpoint, signer: CheckpointSigner) -> None:
    """Refuse to overwrite a checkpoint at the same seq that says something else."""
    if not target.exists():
        return
    existing, problem = _read(target, signer)
    if existing is None:
        why = problem
    elif existing.head_hash == cp.head_hash:
        return  # the same head, checkpointed again (an idle log, or another replica)
    else:
        why = f"it pins hash {existing.head_hash[:16]}…, the log now has {cp.head_hash[:16]}…"
    raise AuditError(f"refusing to overwrite {target.name}: {why}; the log was rewound or "
                     "rewritten since it was written: run `tiergate audit verify`")  # fmt: skip


def _read(path: Path, signer: CheckpointSigner) -> tuple[Checkpoint | None, str | None]:
    """The valid checkpoint in ``path``, or None and why not."""
    try:
        doc = json.loads(path.read_text())
        cp = Checkpoint(int(doc["seq"]), str(doc["head_hash"]), from_us(int(doc["created_us"])))
        signature = str(doc["signature"])
    except (OSError, ValueError, KeyError, TypeError):
        return None, "unreadable checkpoint"
    if not signer.valid(cp, signature):
        return None, "signature does not match (forged or wrong checkpoint key)"
    return cp, None


def load_checkpoints(folder: Path, signer: CheckpointSigner) -> tuple[list[Checkpoint], list[str]]:
    """Valid checkpoints sorted by seq, and one message per file that is unreadable or forged."""
    good, bad = scan_checkpoints(folder, signer)
    return [cp for _path, cp in good], bad


def scan_checkpoints(folder: Path,
                     signer: CheckpointSigner) -> tuple[list[tuple[Path, Checkpoint]], list[str]]:  # fmt: skip
    """Like :func:`load_checkpoints`, with the file each valid checkpoint was read from."""
    good: list[tuple[Path, Checkpoint]] = []
    bad: list[str] = []
    if not folder.is_dir():
        return good, bad
    for path in sorted(folder.glob(f"{_PREFIX}*.json")):
        cp, problem = _read(path, signer)
        if cp is None:
            bad.append(f"{path.name}: {problem}")
            continue
        good.append((path, cp))
    good.sort(key=lambda pc: pc[1].seq)
    return good, bad
