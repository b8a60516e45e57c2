"""Per-process evidence of the KV guard, for the engine's manifest and ``/metrics``.

Each vLLM process in which the guard connector runs writes ``kvguard-<pid>.json`` (its role, the
inner connector, the protections it enforces) under the engine's state dir and keeps
``kvguard-<pid>.count`` open: little-endian u64 counters updated with one ``pwrite`` each time
one changes (the same scheme as the zeroing plugin's counter: nothing heavier on the step path).
"""

from __future__ import annotations

import json
import os
import struct
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["COUNTER_NAMES", "GuardCounters", "GuardProcess", "read_guard_processes"]

COUNTER_NAMES = (
    "verified",  # loads whose boundary and checksums passed
    "boundary_refused",  # loads refused: no record, or fewer tokens vouched for than claimed
    "checksum_mismatch",  # loads refused: a block's checksum differed from the sender's
    "deferred_drained",  # held blocks released after the peer acknowledged
    "deferred_timeout",  # held blocks zeroed and released after the timeout
    "records_written",  # sender records written (one per request per step)
)
_COUNT = struct.Struct("<" + "Q" * len(COUNTER_NAMES))


@dataclass(frozen=True, slots=True)
class GuardProcess:
    pid: int
    role: str
    inner: str
    protections: tuple[str, ...]
    counts: dict[str, int]


class GuardCounters:
    def __init__(self, state_dir: Path | None, record: dict[str, object]) -> None:
        self.values = dict.fromkeys(COUNTER_NAMES, 0)
        self._fd: int | None = None
        if state_dir is None:
            return
        state_dir.mkdir(parents=True, exist_ok=True)
        pid = os.getpid()
        self._fd = os.open(state_dir / f"kvguard-{pid}.count", os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        self._flush()
        tmp = state_dir / f".kvguard-{pid}.json.tmp"
        tmp.write_text(json.dumps({**record, "pid": pid, "written_at": time.time()}))
        os.replace(tmp, state_dir / f"kvguard-{pid}.json")

    def add(self, name: str, n: int = 1) -> None:
        self.values[name] += n
        self._flush()

    def _flush(self) -> None:
        if self._fd is not None:
            os.pwrite(self._fd, _COUNT.pack(*(self.values[k] for k in COUNTER_NAMES)), 0)


def read_guard_processes(state_dir: Path) -> list[GuardProcess]:
    """Every guard process record under ``state_dir`` with its current counts."""
    found: list[GuardProcess] = []
    for path in sorted(state_dir.glob("kvguard-*.json")):
        try:
            record = json.loads(path.read_text())
            pid = int(record["pid"])
            count_path = state_dir / f"kvguard-{pid}.count"
            raw = count_path.read_bytes()[: _COUNT.size] if count_path.exists() else b""
            values = _COUNT.unpack(raw) if len(raw) == _COUNT.size else (0,) * len(COUNTER_NAMES)
            found.append(
                GuardProcess(
                    pid=pid,
                    role=str(record["role"]),
                    inner=str(record["inner"]),
                    protections=tuple(str(p) for p in record["protections"]),
                    counts=dict(zip(COUNTER_NAMES, values, strict=True)),
                )
            )
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return found
