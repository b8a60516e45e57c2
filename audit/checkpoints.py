"""Signed checkpoints of the chain head, written as files outside the database.

A checkpoint pins (seq, hash) at a moment: editing or deleting any row at or before ``seq`` breaks
the chain up to it, and deleting the newest rows (a truncated tail) leaves a checkpoint pointing
past the end of the log. The signature (HMAC-SHA256 with the checkpoint key) stops someone with
file access alone from writing a matching checkpoint for a doctored log.

Rows newer than the latest checkpoint are protected by the keyed chain alone: keep
``checkpoint_interval_s`` short and the folder on storage the database host cannot rewrite.
"""

from __future__ import annotations

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

from audit.models import ChainHead
from audit.timeutil import from_us, to_us

__all__ = ["Checkpoint", "CheckpointSigner", "load_checkpoints", "write_checkpoint"]

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
    folder.mkdir(parents=True, exist_ok=True)
    # Write then rename: a crash never leaves a half-written checkpoint behind.
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".json")
    with os.fdopen(fd, "w") as fh:
        json.dump(doc, fh, sort_keys=True)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, folder / f"{_PREFIX}{cp.seq:020d}.json")
    return cp


def load_checkpoints(folder: Path, signer: CheckpointSigner) -> tuple[list[Checkpoint], list[str]]:
    """Valid checkpoints sorted by seq, and one message per file that is unreadable or forged."""
    good: list[Checkpoint] = []
    bad: list[str] = []
    if not folder.is_dir():
        return good, bad
    for path in sorted(folder.glob(f"{_PREFIX}*.json")):
        try:
            doc = json.loads(path.read_text())
            cp = Checkpoint(int(doc["seq"]), str(doc["head_hash"]), from_us(int(doc["created_us"])))
            signature = str(doc["signature"])
        except (OSError, ValueError, KeyError, TypeError):
            bad.append(f"{path.name}: unreadable checkpoint")
            continue
        if not signer.valid(cp, signature):
            bad.append(f"{path.name}: signature does not match (forged or wrong checkpoint key)")
            continue
        good.append(cp)
    good.sort(key=lambda c: c.seq)
    return good, bad
