"""`tiergate engine serve` as a pair of processes: when one side dies, nothing is left serving.

The front-side tests run the real serve command against ``tests.engine.fake_vllm`` (a stand-in
vLLM that starts in under a second): what they prove is about processes, not about vLLM. The
tests marked ``vllm`` start the real vLLM, where its own behaviour is the point: its process tree
(API server, engine core, worker), its deafness to SIGTERM while starting, and its refusal to
start when the KV hygiene plugin refuses to load. Neither runs to a full start, so neither costs
a whole vLLM start.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil
import pytest
import yaml

from engine.launcher import WATCHDOG_SCRIPT
from engine.plugin import ENV_ALSO_CHECK_VERSION
from tests.engine.conftest import engine_env, stop_group, write_config
from tests.engine.fake_vllm import vllm_shim

REPO = Path(__file__).resolve().parents[2]
GRACE_S = 2.0  # stop_grace_s in these configs: how long an orphaned vLLM may ignore SIGTERM
API_SERVER = "vllm.entrypoints.openai.api_server"


@dataclass
class Serve:
    """A running `tiergate engine serve` in its own process group, and where it writes."""

    popen: subprocess.Popen[bytes]
    url: str
    log_path: Path
    state_dir: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def vllm_log(self) -> str:
        path = self.state_dir / "vllm.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def descendants(self) -> list[psutil.Process]:
        try:
            return psutil.Process(self.popen.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return []

    def find(self, needle: str) -> psutil.Process | None:
        for proc in self.descendants():
            try:
                if needle in " ".join(proc.cmdline()):
                    return proc
            except psutil.Error:
                continue
        return None


def _serve(tmp: Path, model: Path, env: dict[str, str], **config: object) -> Serve:
    config_path = write_config(tmp / "engine.yaml", model, stop_grace_s=GRACE_S, **config)
    port = yaml.safe_load(config_path.read_text())["port"]
    log_path = tmp / "serve.log"
    with log_path.open("wb") as log:
        popen = subprocess.Popen(
            [sys.executable, "-m", "gateway.cli", "engine", "serve", "--config", str(config_path)],
            cwd=REPO,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    return Serve(popen, f"http://127.0.0.1:{port}", log_path, tmp / "state")


def _live(procs: list[psutil.Process]) -> list[psutil.Process]:
    """Those still running; a zombie runs nothing (its reaper may be an init that never reaps)."""
    alive = []
    for proc in procs:
        try:
            if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                alive.append(proc)
        except psutil.NoSuchProcess:
            continue
    return alive


def _wait_gone(procs: list[psutil.Process], within_s: float) -> list[psutil.Process]:
    deadline = time.monotonic() + within_s
    while (left := _live(procs)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def _kill_leftovers(procs: list[psutil.Process]) -> None:
    for proc in _live(procs):
        proc.kill()  # only processes this test started, found as descendants of its serve


@pytest.fixture
def fake_serve(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A model folder and an environment in which `engine serve` starts the fake vLLM."""
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(
        json.dumps({"num_hidden_layers": 2, "num_attention_heads": 2,
                    "num_key_value_heads": 1, "head_dim": 32, "hidden_size": 64,
                    "torch_dtype": "bfloat16"})
    )  # fmt: skip
    env = {**engine_env(tmp_path), "PYTHONPATH": str(vllm_shim(tmp_path / "shim"))}
    return model, env


def _wait_healthy(serve: Serve, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if serve.popen.poll() is not None:
            pytest.fail(f"serve exited with {serve.popen.returncode}:\n{serve.log()[-3000:]}")
        try:
            if httpx.get(serve.url + "/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    pytest.fail(f"serve not healthy in {timeout_s}s:\n{serve.log()[-3000:]}")


def test_front_exits_promptly_when_its_vllm_is_killed(fake_serve: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    """SIGKILL of vLLM: the front exits 1 within seconds, logs why, and leaves no process behind."""
    serve = _serve(tmp_path, *fake_serve)
    procs: list[psutil.Process] = []
    try:
        _wait_healthy(serve, 60)
        vllm = serve.find(API_SERVER)
        assert vllm is not None
        procs = serve.descendants()
        assert len(procs) == 3, procs  # the watchdog, the fake vLLM and its engine core
        vllm.send_signal(signal.SIGKILL)
        killed_at = time.monotonic()
        code = serve.popen.wait(timeout=30)
        took = time.monotonic() - killed_at
        assert code == 1
        assert took < 10, f"the front outlived its vLLM by {took:.1f}s"
        log = serve.log()
        assert f"vLLM (pid {vllm.pid}) was killed by SIGKILL; the engine is down" in log
        assert "vLLM exited; the engine front stopped with it" in log
        assert _wait_gone(procs, 5) == []
        with pytest.raises(httpx.ConnectError):
            httpx.get(serve.url + "/health", timeout=2)
    finally:
        stop_group(serve.popen, grace_s=5)
        _kill_leftovers(procs)


def test_killed_supervisor_takes_down_a_vllm_that_ignores_sigterm(
    fake_serve: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """SIGKILL of the supervisor: the watchdog SIGKILLs a vLLM group deaf to SIGTERM after the grace."""
    model, env = fake_serve
    serve = _serve(tmp_path, model, {**env, "FAKE_VLLM_IGNORE_SIGTERM": "1"})
    procs: list[psutil.Process] = []
    try:
        _wait_healthy(serve, 60)
        procs = serve.descendants()
        assert serve.find(str(WATCHDOG_SCRIPT)) in procs and len(procs) == 3
        serve.popen.send_signal(signal.SIGKILL)
        serve.popen.wait()
        killed_at = time.monotonic()
        assert _wait_gone(procs, GRACE_S + 15) == []
        took = time.monotonic() - killed_at
        # It took the escalation: SIGTERM alone would have left them running.
        assert took >= GRACE_S - 0.5
        assert f"still running after {GRACE_S:g}s: SIGKILL to process group" in serve.vllm_log()
    finally:
        _kill_leftovers(procs)


def test_sigterm_during_the_start_stops_vllm_and_exits(fake_serve: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    """SIGTERM to `engine serve` while vLLM still loads: serve stops it and exits 143, nothing left."""
    model, env = fake_serve
    serve = _serve(tmp_path, model, {**env, "FAKE_VLLM_START_DELAY_S": "60"})
    procs: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + 30
        while serve.find(API_SERVER) is None:
            assert serve.popen.poll() is None and time.monotonic() < deadline, serve.log()[-3000:]
            time.sleep(0.1)
        procs = serve.descendants()
        serve.popen.send_signal(signal.SIGTERM)
        assert serve.popen.wait(timeout=GRACE_S + 20) == 128 + signal.SIGTERM
        assert "SIGTERM while vLLM was starting: stopping it" in serve.log()
        assert _wait_gone(procs, 5) == []
    finally:
        stop_group(serve.popen, grace_s=5)
        _kill_leftovers(procs)


@pytest.mark.vllm
@pytest.mark.timeout(600)
def test_killed_supervisor_leaves_no_vllm_process_even_mid_start(tiny_model: Path, tmp_path: Path) -> None:
    """SIGKILL of `engine serve` while vLLM loads: its API server, engine core and workers all end."""
    serve = _serve(tmp_path, tiny_model, engine_env(tmp_path))
    procs: list[psutil.Process] = []
    try:
        # Kill while the engine core starts: vLLM's API server then loses a SIGTERM (checked by
        # hand: without the watchdog the whole tree came up and served on, unsupervised).
        deadline = time.monotonic() + 300
        while serve.find("VLLM::EngineCore") is None:
            assert serve.popen.poll() is None, serve.log()[-3000:]
            assert time.monotonic() < deadline, "vLLM's engine core never started"
            time.sleep(0.1)
        procs = serve.descendants()
        names = " ".join(" ".join(p.cmdline()) for p in _live(procs))
        assert API_SERVER in names and "VLLM::EngineCore" in names
        serve.popen.send_signal(signal.SIGKILL)
        serve.popen.wait()
        left = _wait_gone(procs, GRACE_S + 30)
        assert left == [], [(p.pid, p.name()) for p in _live(left)]
        assert "supervisor gone: SIGTERM to vLLM process group" in serve.vllm_log()
    finally:
        _kill_leftovers(procs)


@pytest.mark.vllm
@pytest.mark.timeout(600)
def test_plugin_refusal_fails_the_engine_start_with_its_reason(tiny_model: Path, tmp_path: Path) -> None:
    """An untested vLLM version (as the pin sees it): vLLM does not start; serve exits 1 naming why."""
    env = {**engine_env(tmp_path), ENV_ALSO_CHECK_VERSION: "0.33.0"}
    serve = _serve(tmp_path, tiny_model, env)
    try:
        code = serve.popen.wait(timeout=300)
    finally:
        stop_group(serve.popen, grace_s=5)
    log = serve.log()
    assert code == 1, log[-3000:]
    assert "Error: engine did not start: the KV hygiene plugin refused to load in vLLM" in log
    assert "tested with vLLM ['0.32.0'], not 0.33.0" in log
    assert "set allow_untested_vllm: true in the engine config" in log
    assert "Uvicorn running" not in log  # the front never served
    assert list(serve.state_dir.glob("kvzero-*.json")) == []  # zeroing was never on anywhere
    assert "PluginRefused" in serve.vllm_log()  # it was vLLM that stopped, on the plugin's raise
