"""What the sending side says it sent, and who is done with a transfer: a shared directory.

Each transfer has an id chosen by the split router (``tiergate_transfer_id`` in the request's
``kv_transfer_params``, the same on the prefill and the decode half). Per transfer and tensor-
parallel rank the directory holds:

    <id>.r<rank>.rec      the sender's record: block size, prompt tokens covered, one checksum
                          per logical block of the request (JSON, replaced atomically per step)
    <id>.<role>.r<rank>.ack  that rank of that side will neither read nor write the transfer's
                          blocks any more (empty file)

The sender writes its record inside the engine step that computed the KV, so the record exists
before the prefill answer reaches the router and before the decode half can ask for the blocks.
The directory must be shared by both instances (a volume in ``docker-compose.yml``); nothing in it
is request content: ids, counts and checksums only.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["RecordStore", "TransferRecord", "valid_transfer_id"]

_ID = re.compile(r"[A-Za-z0-9_-]{8,64}")
_ROLES = ("producer", "consumer")


def valid_transfer_id(value: object) -> bool:
    """Ids become file names: only a short, plain token is accepted."""
    return isinstance(value, str) and _ID.fullmatch(value) is not None


@dataclass(frozen=True, slots=True)
class TransferRecord:
    """The sender's account of one transfer on one rank."""

    block_size: int
    tokens: int  # prompt tokens whose KV the sender computed, from token 0
    checksums: tuple[int, ...]  # per logical block, covering min(block_size, tokens - i*bs) slots

    def count(self, block_index: int) -> int:
        return max(0, min(self.block_size, self.tokens - block_index * self.block_size))

    def to_json(self) -> str:
        return json.dumps(
            {"block_size": self.block_size, "tokens": self.tokens, "checksums": [f"{c:016x}" for c in self.checksums]}
        )

    @classmethod
    def from_json(cls, text: str) -> TransferRecord:
        data = json.loads(text)
        return cls(int(data["block_size"]), int(data["tokens"]), tuple(int(c, 16) for c in data["checksums"]))


class RecordStore:
    """The shared directory; every write is a rename, so readers never see half a file."""

    def __init__(self, root: Path, *, max_age_s: float = 3600.0) -> None:
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)
        self._max_age_s = max_age_s

    def _path(self, tid: str, suffix: str) -> Path:
        if not valid_transfer_id(tid):
            raise ValueError("invalid transfer id")
        return self.root / f"{tid}.{suffix}"

    def _write(self, path: Path, text: str) -> None:
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(text)
        os.replace(tmp, path)

    def put_record(self, tid: str, rank: int, record: TransferRecord) -> None:
        self._write(self._path(tid, f"r{rank}.rec"), record.to_json())

    def get_record(self, tid: str, rank: int) -> TransferRecord | None:
        try:
            return TransferRecord.from_json(self._path(tid, f"r{rank}.rec").read_text())
        except (OSError, ValueError, KeyError, TypeError):
            return None  # absent or unreadable: the receiver treats it as "nothing was vouched for"

    def ack(self, tid: str, role: str, rank: int) -> None:
        if role not in _ROLES:
            raise ValueError(f"role {role!r}")
        # An acknowledgement is its file's existence: creating it is atomic without the rename a
        # record needs (a quarter of the guard's own cost per request on the benchmark's loads).
        os.close(os.open(self._path(tid, f"{role}.r{rank}.ack"), os.O_WRONLY | os.O_CREAT, 0o644))

    def acked(self, tid: str, role: str, ranks: int) -> bool:
        """Every one of the ``ranks`` ranks of side ``role`` said it is done with ``tid``."""
        return all(self._path(tid, f"{role}.r{r}.ack").exists() for r in range(ranks))

    def sweep(self, now: float | None = None) -> int:
        """Remove files older than ``max_age_s``; return how many went."""
        cutoff = (time.time() if now is None else now) - self._max_age_s
        gone = 0
        for path in self.root.iterdir():
            try:
                if path.stat().st_mtime < cutoff:
                    path.unlink()
                    gone += 1
            except OSError:
                continue
        return gone
