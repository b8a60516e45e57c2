"""Session fixtures for the engine tests: one tiny model, one real hardened vLLM server.

The tiny model is built once per test session (random weights, local byte-level tokenizer: no
downloads). ``engine_server`` runs ``tiergate engine serve`` (front + vLLM with the KV hygiene
plugin, vLLM multi-process as in production) in its own process group, killed at the end.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import yaml

from engine.launcher import free_port
from engine.salt import derive_cache_salt

SALT_KEY = b"engine-test-salt-key-0123456789"
MAX_MODEL_LEN = 2048
KV_BYTES = 1 << 20  # 32 blocks of 128 tokens at 256 B/token: 3,968 usable tokens
START_TIMEOUT_S = 600.0


def salt(tenant: str) -> str:
    return derive_cache_salt(SALT_KEY, tenant)


# vLLM caches what it learns about a model class (keyed by vLLM's own source hash) under
# VLLM_CACHE_ROOT; sharing one folder in the system temp dir saves every later vLLM start, in this
# session and the next, a subprocess that re-imports vLLM.
SHARED_CACHE = Path(tempfile.gettempdir()) / "tiergate-engine-test-cache"


def engine_env(tmp: Path) -> dict[str, str]:
    """Environment for any vLLM the tests start: one thread, temp files under ``tmp``."""
    env = dict(os.environ)
    env.update(
        {
            "OMP_NUM_THREADS": "1",
            "VLLM_CACHE_ROOT": str(SHARED_CACHE / "vllm"),
            "TORCHINDUCTOR_CACHE_DIR": str(SHARED_CACHE / "inductor"),
            "TMPDIR": str(tmp),
            "VLLM_NO_USAGE_STATS": "1",
            "HF_HUB_OFFLINE": "1",
            "PYTHONUNBUFFERED": "1",
        }
    )
    return env


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random-weight Llama and tokenizer, built once per session."""
    from tests.support.tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny-model"))


def write_config(path: Path, model: Path, **overrides: object) -> Path:
    config = {
        "model": str(model),
        "served_model_name": "tiny",
        "max_model_len": MAX_MODEL_LEN,
        "kv_cache_memory_bytes": KV_BYTES,
        "block_size": 128,
        "enforce_eager": True,
        "port": free_port(),
        "state_dir": str(path.parent / "state"),
        **overrides,
    }
    path.write_text(yaml.safe_dump(config))
    return path


@dataclass
class EngineServer:
    """The running front (``url``), its process, config and state directory."""

    url: str
    popen: subprocess.Popen[bytes]
    config_path: Path
    state_dir: Path
    log_path: Path

    def client(self, timeout: float = 120.0) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=timeout)

    def metric(self, name: str) -> float:
        """Sum of every sample of ``name`` on the front's /metrics."""
        from prometheus_client.parser import text_string_to_metric_families

        text = httpx.get(self.url + "/metrics", timeout=30).text
        total = 0.0
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name == name:
                    total += sample.value
        return total


def stop_group(popen: subprocess.Popen[bytes], grace_s: float = 20.0) -> None:
    for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(popen.pid, sig)
        except ProcessLookupError:
            return
        try:
            popen.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


class KvProbes:
    """Two in-process vLLM probes (``tests.engine.kvprobe``), stock and with the plugin.

    Started before the session server so their engine starts overlap with its start; the stock
    one also checks vLLM's own refusal of a context longer than its pool.
    """

    def __init__(self, model: Path, tmp: Path) -> None:
        self._procs: dict[str, subprocess.Popen[str]] = {}
        self._results: dict[str, dict] = {}
        for name, plugins, extra in (
            ("stock", "", ["--refuse-first"]),
            ("plugin", "tiergate_kv_hygiene", []),
        ):
            env = {
                **engine_env(tmp / name),
                "VLLM_ENABLE_V1_MULTIPROCESSING": "0",
                "VLLM_PLUGINS": plugins,
            }
            (tmp / name).mkdir(parents=True, exist_ok=True)
            self._procs[name] = subprocess.Popen(
                [sys.executable, "-m", "tests.engine.kvprobe", str(model), *extra],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                start_new_session=True,
            )

    def result(self, name: str) -> dict:
        if name not in self._results:
            proc = self._procs[name]
            out, err = proc.communicate(timeout=START_TIMEOUT_S)
            if proc.returncode != 0:
                pytest.fail(f"kv probe {name} failed ({proc.returncode}):\n{err[-3000:]}")
            self._results[name] = json.loads(out.strip().splitlines()[-1])
        return self._results[name]

    def close(self) -> None:
        for proc in self._procs.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


@pytest.fixture(scope="session")
def kv_probes(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KvProbes]:
    probes = KvProbes(tiny_model, tmp_path_factory.mktemp("kvprobe"))
    try:
        yield probes
    finally:
        probes.close()


@pytest.fixture(scope="session")
def engine_server(
    tiny_model: Path, tmp_path_factory: pytest.TempPathFactory, kv_probes: KvProbes
) -> Iterator[EngineServer]:
    """One hardened engine for the whole session: ``tiergate engine serve --config engine.yaml``."""
    tmp = tmp_path_factory.mktemp("engine")
    config_path = write_config(tmp / "engine.yaml", tiny_model)
    port = yaml.safe_load(config_path.read_text())["port"]
    log_path = tmp / "serve.log"
    with log_path.open("wb") as log:
        popen = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gateway.cli",
                "engine",
                "serve",
                "--config",
                str(config_path),
            ],
            env=engine_env(tmp),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    server = EngineServer(f"http://127.0.0.1:{port}", popen, config_path, tmp / "state", log_path)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if popen.poll() is not None:
                pytest.fail(f"engine exited with {popen.returncode}:\n{log_path.read_text()[-3000:]}")
            try:
                if httpx.get(server.url + "/health", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"engine not ready in {START_TIMEOUT_S}s:\n{log_path.read_text()[-3000:]}")
            time.sleep(1.0)
        yield server
    finally:
        stop_group(popen)
