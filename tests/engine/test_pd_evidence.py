"""The supervisor's judgement that the KV guard runs in the live vLLM of a split half.

A real process with a real child stands in for vLLM's API server (where the scheduler side of
the connector runs in this test) and its worker; records are written as the guard writes them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.config import EngineConfig
from engine.launcher import VllmProcess
from engine.supervisor import EngineSupervisor

TREE = """
import subprocess, sys, time
kid = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
print(kid.pid, flush=True)
time.sleep(120)
"""


def _guard_record(state: Path, pid: int, side: str) -> None:
    state.mkdir(parents=True, exist_ok=True)
    record = {"pid": pid, "role": f"{side}:kv_consumer", "inner": "NixlConnector",
              "protections": ["kv_boundary_check", "kv_deferred_release", "kv_checksums"]}  # fmt: skip
    (state / f"kvguard-{pid}.json").write_text(json.dumps(record))


def _supervisor(tmp_path: Path, guard: bool) -> EngineSupervisor:
    (tmp_path / "config.json").write_text("{}")
    split = {"role": "decode", "connector": {"kv_connector": "NixlConnector"}, "record_dir": str(tmp_path / "r"),
             "guard": guard}  # fmt: skip
    config = EngineConfig(model=tmp_path, served_model_name="m", max_model_len=16, kv_cache_memory_bytes=1 << 20,
                          state_dir=tmp_path / "state", disaggregation=split)  # fmt: skip
    return EngineSupervisor(config)


@pytest.fixture
def tree(tmp_path: Path) -> Iterator[tuple[Path, int, int, subprocess.Popen[bytes]]]:
    popen = subprocess.Popen([sys.executable, "-c", TREE], stdout=subprocess.PIPE, start_new_session=True)
    assert popen.stdout is not None
    worker = int(popen.stdout.readline())
    try:
        yield tmp_path, popen.pid, worker, popen
    finally:
        popen.kill()
        popen.wait()
        subprocess.run(["kill", "-9", str(worker)], check=False)


def test_guard_active_only_with_scheduler_and_worker_evidence_from_live_processes(tree) -> None:  # type: ignore[no-untyped-def]  # a tuple fixture
    tmp_path, root, worker, popen = tree
    sup = _supervisor(tmp_path, guard=True)
    sup.process = VllmProcess(popen, 0, tmp_path / "log")
    state = tmp_path / "state"
    assert not sup.guard_active()  # no evidence at all
    _guard_record(state, root, "scheduler")
    assert not sup.guard_active()  # the scheduler side alone
    _guard_record(state, 999_999_999, "worker")
    assert not sup.guard_active()  # a worker record of a process that is not this vLLM's
    _guard_record(state, worker, "worker")
    assert sup.guard_active()
    off = _supervisor(tmp_path, guard=False)
    off.process = sup.process
    assert not off.guard_active()  # evidence of a guard the config did not ask for proves nothing
