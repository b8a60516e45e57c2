"""The plugin's per-process evidence and the supervisor's "active in every process" judgement.

Real processes stand in for vLLM's (a parent with one child and a multiprocessing helper-like
child); records are written the way the plugin writes them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from engine.config import EngineConfig
from engine.launcher import VllmProcess
from engine.plugin.state import ZeroCounter, read_plugin_processes
from engine.supervisor import EngineSupervisor, is_helper_process

WORKER_CODE = "import time; time.sleep(120)"
TREE = f"""
import subprocess, sys, time
kids = [subprocess.Popen([sys.executable, "-c", "{WORKER_CODE}"]),
        subprocess.Popen([sys.executable, "-c",
                          "from multiprocessing.resource_tracker import main; import time; time.sleep(120)"])]
print(" ".join(str(k.pid) for k in kids), flush=True)
time.sleep(120)
"""


def _record(state: Path, pid: int, zeroing: bool = True) -> None:
    (state / f"kvzero-{pid}.json").write_text(
        json.dumps({"pid": pid, "plugin_version": "0.1.0", "vllm_version": "0.32.0",
                    "version_override": False, "zeroing": zeroing})
    )  # fmt: skip


@pytest.fixture
def tree(tmp_path: Path) -> Iterator[tuple[EngineSupervisor, int, int]]:
    """A supervisor whose 'vLLM' is a real process with a worker child and a helper child."""
    (tmp_path / "config.json").write_text("{}")
    config = EngineConfig(model=tmp_path, served_model_name="m", max_model_len=16,
                          kv_cache_memory_bytes=1 << 20, state_dir=tmp_path / "state")  # fmt: skip
    sup = EngineSupervisor(config)
    popen = subprocess.Popen([sys.executable, "-c", TREE], stdout=subprocess.PIPE, start_new_session=True)
    assert popen.stdout is not None
    worker, helper = (int(p) for p in popen.stdout.readline().split())
    # Judge the tree only once both children show their own command line (a process caught before
    # its exec shows its parent's, and would count as a worker that never reported: safe for the
    # product, which then reports "not active", but not the tree this test means to build).
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not (
        psutil.Process(worker).cmdline()[1:] == ["-c", WORKER_CODE]
        and is_helper_process(psutil.Process(helper).cmdline())
    ):
        time.sleep(0.01)
    assert is_helper_process(psutil.Process(helper).cmdline()), "the helper never showed its command line"
    sup.process = VllmProcess(popen, 0, tmp_path / "log")
    try:
        yield sup, worker, helper
    finally:
        sup.stop()


def test_active_only_when_every_process_reported(
    tree: tuple[EngineSupervisor, int, int],
) -> None:
    """Root alone reporting is not enough; root and worker reporting is; helpers need not report."""
    sup, worker, helper = tree
    root = sup.process.popen.pid  # type: ignore[union-attr]  # the fixture started the process
    status = sup.zeroing_status()
    assert not status.active and set(status.missing) == {root, worker}
    _record(sup.state_dir, root)
    status = sup.zeroing_status()
    assert not status.active and status.missing == (worker,)
    _record(sup.state_dir, worker, zeroing=False)
    assert not sup.zeroing_status().active
    _record(sup.state_dir, worker)
    status = sup.zeroing_status()
    assert status.active and status.processes == 2 and helper not in status.missing


def test_dead_engine_is_not_active(tree: tuple[EngineSupervisor, int, int]) -> None:
    """Once the engine's processes are gone, old records vouch for nothing."""
    sup, worker, _ = tree
    _record(sup.state_dir, sup.process.popen.pid)  # type: ignore[union-attr]  # the fixture started the process
    _record(sup.state_dir, worker)
    assert sup.zeroing_status().active
    sup.stop()
    deadline = time.monotonic() + 10
    while psutil.pid_exists(worker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not sup.zeroing_status().active


def test_counter_file_tracks_calls_and_blocks(tmp_path: Path) -> None:
    """The pwrite counter is read back with the process record; torn or foreign files are skipped."""
    counter = ZeroCounter(tmp_path)
    counter.add(3)
    counter.add(4)
    _record(tmp_path, os.getpid())
    (tmp_path / "kvzero-999999.json").write_text("{not json")
    (procs,) = read_plugin_processes(tmp_path)
    assert (procs.pid, procs.calls, procs.blocks_zeroed, procs.zeroing) == (
        os.getpid(),
        2,
        7,
        True,
    )
