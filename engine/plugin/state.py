"""Per-process evidence the plugin leaves for the supervisor: who loaded it, and how much it zeroed.

Each vLLM process that runs ``register`` writes ``kvzero-<pid>.json`` (written once, atomically)
and keeps ``kvzero-<pid>.count`` open: two little-endian u64 (zeroing calls, blocks zeroed)
updated with one ``pwrite`` per zeroing call. A pwrite is a single syscall; anything heavier
(JSON, locks, fsync) would sit on the scheduler's step path.

A process in which the plugin refused to load writes ``kvrefused-<pid>.json`` with the reason
instead, so that the supervisor can name it (vLLM's log buries it in a traceback).
"""

from __future__ import annotations

import json
import os
import struct
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "PluginProcess",
    "PluginRefusal",
    "ZeroCounter",
    "read_plugin_processes",
    "read_refusals",
    "write_process_record",
    "write_refusal",
]

_COUNT = struct.Struct("<QQ")


@dataclass(frozen=True, slots=True)
class PluginProcess:
    """One vLLM process in which the plugin reported itself active."""

    pid: int
    plugin_version: str
    vllm_version: str
    version_override: bool
    zeroing: bool
    calls: int
    blocks_zeroed: int
    amx: bool = False  # the process may use AMX tile data (asked for where the CPU has it)


class ZeroCounter:
    """In-process counter mirrored to ``kvzero-<pid>.count`` when a state dir is set."""

    def __init__(self, state_dir: Path | None) -> None:
        self.calls = 0
        self.blocks = 0
        self._fd: int | None = None
        if state_dir is not None:
            path = state_dir / f"kvzero-{os.getpid()}.count"
            self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
            os.pwrite(self._fd, _COUNT.pack(0, 0), 0)

    def add(self, blocks: int) -> None:
        self.calls += 1
        self.blocks += blocks
        if self._fd is not None:
            os.pwrite(self._fd, _COUNT.pack(self.calls, self.blocks), 0)


def _write_own(state_dir: Path, prefix: str, record: dict[str, object]) -> None:
    """Atomically write this process's ``<prefix>-<pid>.json`` (readers never see half a file)."""
    pid = os.getpid()
    tmp = state_dir / f".{prefix}-{pid}.json.tmp"
    tmp.write_text(json.dumps({**record, "pid": pid, "written_at": time.time()}))
    os.replace(tmp, state_dir / f"{prefix}-{pid}.json")


def write_process_record(state_dir: Path, record: dict[str, object]) -> None:
    """Atomically write this process's ``kvzero-<pid>.json``."""
    _write_own(state_dir, "kvzero", record)


def read_plugin_processes(state_dir: Path) -> list[PluginProcess]:
    """Every process record in ``state_dir`` with its current counts (0 before any zeroing)."""
    found: list[PluginProcess] = []
    for path in sorted(state_dir.glob("kvzero-*.json")):
        try:
            record = json.loads(path.read_text())
            count_path = state_dir / f"kvzero-{record['pid']}.count"
            raw = count_path.read_bytes()[: _COUNT.size] if count_path.exists() else b""
            calls, blocks = _COUNT.unpack(raw) if len(raw) == _COUNT.size else (0, 0)
            found.append(
                PluginProcess(
                    pid=int(record["pid"]),
                    plugin_version=str(record["plugin_version"]),
                    vllm_version=str(record["vllm_version"]),
                    version_override=bool(record["version_override"]),
                    zeroing=record.get("zeroing") is True,
                    calls=calls,
                    blocks_zeroed=blocks,
                    amx=record.get("amx") is True,
                )
            )
        except (OSError, ValueError, KeyError):
            continue  # a half-written or foreign file proves nothing: it simply does not count
    return found


@dataclass(frozen=True, slots=True)
class PluginRefusal:
    """One vLLM process in which the plugin refused to load, and why."""

    pid: int
    reason: str


def write_refusal(state_dir: Path, reason: str) -> None:
    """Atomically write this process's ``kvrefused-<pid>.json``."""
    _write_own(state_dir, "kvrefused", {"reason": reason})


def read_refusals(state_dir: Path) -> list[PluginRefusal]:
    """Every refusal recorded in ``state_dir``; unreadable files are skipped."""
    found: list[PluginRefusal] = []
    for path in sorted(state_dir.glob("kvrefused-*.json")):
        try:
            record = json.loads(path.read_text())
            found.append(PluginRefusal(pid=int(record["pid"]), reason=str(record["reason"])))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return found
