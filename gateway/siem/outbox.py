"""The stream's bounded on-disk queue: signed lines waiting for their sink, and where the stream
left off, so that a restart neither loses nor re-signs a line.

    <dir>/outbox.jsonl   signed lines, appended (fsync) before anyone tries to deliver them
    <dir>/delivered      byte offset into outbox.jsonl up to which the sink has them
    <dir>/head.json      {"n", "prev", "cursor"}: the signer's state and the last audit seq read

Lines are appended before ``head.json`` moves, and the head is recomputed from the outbox's last
line at start, so a crash between the two costs nothing. Once everything is delivered the outbox
is emptied (head first, then the truncation). The bound is on undelivered bytes: past it the
streamer stops reading the audit log (which keeps the records) instead of dropping any.
"""

from __future__ import annotations

import fcntl
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Head", "Outbox", "OutboxBusy"]


class OutboxBusy(Exception):
    """Another process (a second uvicorn worker, ``tiergate audit stream``) holds this outbox."""


@dataclass
class Head:
    n: int = 0
    prev: str = ""
    cursor: int = 0  # the last audit seq the stream has looked at (in scope or not)


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


class Outbox:
    def __init__(self, folder: Path, *, max_bytes: int) -> None:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        # One writer per outbox, whatever the number of processes started from one config:
        # two would number and chain the same stream twice. Released when the process ends.
        self._lock = os.open(folder / "lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._lock)
            raise OutboxBusy(str(folder)) from None
        self._lines = folder / "outbox.jsonl"
        self._offset_file = folder / "delivered"
        self._head_file = folder / "head.json"
        self.max_bytes = max_bytes
        self._lines.touch(mode=0o600, exist_ok=True)
        size = self._lines.stat().st_size
        self._drop_partial_tail(size)
        self.delivered = self._read_offset()
        if self.delivered > self._lines.stat().st_size:  # emptied, the offset not yet reset
            self.delivered = 0
        self.head = self._recover_head()

    # ---- state ------------------------------------------------------------------------------

    def _drop_partial_tail(self, size: int) -> None:
        # A crash mid-append leaves a line without its newline: it was never delivered, and its
        # record is still after the head's cursor, so it is signed again.
        if size == 0:
            return
        with open(self._lines, "rb+") as fh:
            data = fh.read()
            end = data.rfind(b"\n") + 1
            if end != len(data):
                fh.truncate(end)

    def _read_offset(self) -> int:
        try:
            return int(self._offset_file.read_text().strip() or 0)
        except FileNotFoundError:
            return 0

    def _recover_head(self) -> Head:
        head = Head()
        if self._head_file.exists():
            head = Head(**json.loads(self._head_file.read_text()))
        last = self._last_line()
        if last is not None and last["n"] > head.n:
            head = Head(last["n"], last["mac"], max(head.cursor, last.get("seq") or 0))
        return head

    def _last_line(self) -> dict[str, Any] | None:
        size = self._lines.stat().st_size
        if size == 0:
            return None
        with open(self._lines, "rb") as fh:
            fh.seek(max(0, size - 1_048_576))
            tail = fh.read().rstrip(b"\n")
        line: dict[str, Any] = json.loads(tail[tail.rfind(b"\n") + 1 :])
        return line

    def save_head(self, head: Head) -> None:
        self.head = head
        _write_atomic(self._head_file, json.dumps(head.__dict__).encode())

    # ---- the queue --------------------------------------------------------------------------

    @property
    def pending_bytes(self) -> int:
        return self._lines.stat().st_size - self.delivered

    @property
    def full(self) -> bool:
        return self.pending_bytes >= self.max_bytes

    def append(self, lines: list[bytes], head: Head) -> None:
        """Queue signed lines (durably), then move the head past them."""
        if lines:
            with open(self._lines, "ab") as fh:
                fh.write(b"".join(line + b"\n" for line in lines))
                fh.flush()
                os.fsync(fh.fileno())
        self.save_head(head)

    def pending(self, limit: int) -> tuple[list[bytes], int]:
        """Up to ``limit`` undelivered lines and the offset just past them."""
        with open(self._lines, "rb") as fh:
            fh.seek(self.delivered)
            out: list[bytes] = []
            offset = self.delivered
            for raw in fh:
                if not raw.endswith(b"\n") or len(out) >= limit:
                    break
                out.append(raw[:-1])
                offset += len(raw)
        return out, offset

    def count_pending(self) -> int:
        with open(self._lines, "rb") as fh:
            fh.seek(self.delivered)
            return sum(1 for _ in fh)

    def close(self) -> None:
        if self._lock >= 0:
            os.close(self._lock)  # and with it the lock
            self._lock = -1

    def mark_delivered(self, offset: int) -> None:
        self.delivered = offset
        if offset == self._lines.stat().st_size:
            self.save_head(self.head)
            with open(self._lines, "rb+") as fh:
                fh.truncate(0)
            self.delivered = 0
        _write_atomic(self._offset_file, str(self.delivered).encode())
