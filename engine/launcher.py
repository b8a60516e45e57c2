"""Start and stop vLLM's OpenAI server with the hardening on, in a process group of its own.

The group is led by ``engine.watchdog``, which ends it if the supervisor dies without stopping
vLLM; vLLM's server also gets SIGTERM from the kernel when that happens (``PR_SET_PDEATHSIG``).
vLLM listens on 127.0.0.1 only; clients reach it through the front (``engine.front``). The
server is started as ``python -m vllm.entrypoints.openai.api_server`` because the ``vllm``
console script of the CPU build fails to find its own distribution.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

import httpx

from engine.config import EngineConfig
from engine.plugin import ENV_ALLOW_UNTESTED, ENV_STATE_DIR, PLUGIN_NAME

__all__ = ["EngineStartError", "VllmProcess", "free_port", "kv_transfer_config", "vllm_command", "vllm_env"]


class EngineStartError(Exception):
    """vLLM exited or did not become healthy; the message carries its exit code and last log lines."""

    status_code = 503


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def vllm_command(config: EngineConfig, port: int) -> list[str]:
    """The exact vLLM command line for ``config``; every pool-relevant number is explicit."""
    cmd = [
        sys.executable,
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        str(config.model),
        "--served-model-name",
        config.served_model_name,
        "--max-model-len",
        str(config.max_model_len),
        "--kv-cache-memory-bytes",
        str(config.kv_cache_memory_bytes),
        "--block-size",
        str(config.block_size),
        "--dtype",
        config.dtype,
        "--tensor-parallel-size",
        str(config.tensor_parallel_size),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        # cached_tokens in usage: the evidence for the cache-salt checks.
        "--enable-prompt-tokens-details",
        "--enable-prefix-caching" if config.prefix_caching else "--no-enable-prefix-caching",
    ]
    if config.enforce_eager:
        cmd.append("--enforce-eager")
    if config.disaggregation is not None:
        cmd += ["--kv-transfer-config", kv_transfer_config(config)]
    return cmd


def kv_transfer_config(config: EngineConfig) -> str:
    """vLLM's ``--kv-transfer-config`` for a split half: the transport, guarded unless turned off."""
    import json

    from engine.pd.settings import GuardSettings, guard_transfer_config

    split = config.disaggregation
    assert split is not None
    role: Literal["kv_producer", "kv_consumer"] = "kv_producer" if split.role == "prefill" else "kv_consumer"
    if not split.guard:
        return json.dumps({**split.connector, "kv_role": role})
    settings = GuardSettings(inner=dict(split.connector), record_dir=str(split.record_dir),
                             release_timeout_s=split.release_timeout_s)  # fmt: skip
    return guard_transfer_config(role, settings)


def vllm_env(config: EngineConfig, state_dir: Path, *, plugin: bool = True) -> dict[str, str]:
    """vLLM's environment: our plugin only, offline, no telemetry, caches under ``state_dir``."""
    env = dict(os.environ)
    env.update(
        {
            # An allow-list: exactly our plugin (or, for comparisons, none at all).
            "VLLM_PLUGINS": PLUGIN_NAME if plugin else "",
            ENV_STATE_DIR: str(state_dir),
            "VLLM_NO_USAGE_STATS": "1",
            "DO_NOT_TRACK": "1",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
        }
    )
    env.pop(ENV_ALLOW_UNTESTED, None)
    if config.allow_untested_vllm:
        env[ENV_ALLOW_UNTESTED] = "1"
    for var, sub in (
        ("VLLM_CACHE_ROOT", "vllm-cache"),
        ("TORCHINDUCTOR_CACHE_DIR", "inductor"),
    ):
        env.setdefault(var, str(state_dir / sub))
    return env


def _die_with_parent(parent_pid: int) -> Callable[[], None]:
    """``preexec_fn`` for vLLM: SIGTERM it when the supervisor dies without stopping it (Linux).

    The first line of defence for a running engine (vLLM shuts down cleanly on SIGTERM once it
    serves); ``engine.watchdog`` covers the rest of the group and a vLLM that ignores the signal.
    """

    def preexec() -> None:
        if not sys.platform.startswith("linux"):
            return
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        # A supervisor that died between fork and prctl sends no death signal: check by hand.
        if os.getppid() != parent_pid:
            os._exit(1)

    return preexec


WATCHDOG_SCRIPT = Path(__file__).with_name("watchdog.py")


def _spawn_watchdog(grace_s: float, log: IO[bytes]) -> tuple[subprocess.Popen[bytes], int]:
    """Start ``engine.watchdog`` leading a new process group; return it and the pipe's write end."""
    read_end, write_end = os.pipe()  # not inheritable: only the watchdog gets (only) the read end
    try:
        watchdog = subprocess.Popen(
            [sys.executable, "-I", str(WATCHDOG_SCRIPT), str(grace_s)],
            stdin=read_end,
            stdout=log,
            stderr=subprocess.STDOUT,
            process_group=0,
        )
    except BaseException:
        os.close(write_end)
        raise
    finally:
        os.close(read_end)
    return watchdog, write_end


@dataclass
class VllmProcess:
    """A running vLLM server: its process, port and log file, and the group it runs in.

    ``watchdog`` (when spawned by ``spawn``) leads the process group vLLM runs in and ends that
    group if this process dies without calling ``stop``; ``watch_fd`` is the pipe end whose
    closing tells it so. Without a watchdog, vLLM leads its own group.
    """

    popen: subprocess.Popen[bytes]
    port: int
    log_path: Path
    watchdog: subprocess.Popen[bytes] | None = None
    watch_fd: int | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pgid(self) -> int:
        return self.watchdog.pid if self.watchdog is not None else self.popen.pid

    @classmethod
    def spawn(
        cls,
        cmd: list[str],
        env: dict[str, str],
        log_path: Path,
        port: int,
        *,
        orphan_grace_s: float = 15.0,
    ) -> VllmProcess:
        """Start the watchdog, then vLLM in its process group: vLLM is never unwatched.

        ``orphan_grace_s``: how long an orphaned vLLM gets between SIGTERM and SIGKILL.
        """
        with log_path.open("ab") as log:
            watchdog, watch_fd = _spawn_watchdog(orphan_grace_s, log)
            try:
                popen = subprocess.Popen(
                    cmd,
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    # Not a new session: a process group can only be joined within one session.
                    process_group=watchdog.pid,
                    # Spawned before any thread starts, so preexec_fn is safe here.
                    preexec_fn=_die_with_parent(os.getpid()),  # noqa: PLW1509 -- see the line above
                )
            except BaseException:
                watchdog.kill()
                watchdog.wait()
                os.close(watch_fd)
                raise
        return cls(popen, port, log_path, watchdog, watch_fd)

    def log_tail(self, lines: int = 15) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def wait_healthy(self, timeout_s: float) -> None:
        """Block until GET /health is 200; raise ``EngineStartError`` if vLLM exits or times out."""
        deadline = time.monotonic() + timeout_s
        with httpx.Client(timeout=5.0) as client:
            while time.monotonic() < deadline:
                code = self.popen.poll()
                if code is not None:
                    raise EngineStartError(f"vLLM exited with code {code} during start:\n{self.log_tail()}")
                try:
                    if client.get(f"{self.base_url}/health").status_code == 200:
                        return
                except httpx.HTTPError:
                    pass
                time.sleep(0.5)
        self.stop()
        raise EngineStartError(f"vLLM not healthy after {timeout_s:.0f}s:\n{self.log_tail()}")

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, grace_s: float = 15.0) -> int | None:
        """SIGTERM the whole process group, then SIGKILL what is left; return vLLM's exit code."""
        for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(self.pgid, sig)
            except ProcessLookupError:
                break
            try:
                self.popen.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                continue
            # vLLM's server is gone; its children (and the watchdog) may linger: finish them too.
            try:
                os.killpg(self.pgid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            break
        if self.watch_fd is not None:
            # Only after the group is dead: closing it earlier would set the watchdog off too.
            os.close(self.watch_fd)
            self.watch_fd = None
        if self.watchdog is not None:
            try:
                self.watchdog.wait(timeout=5.0)
            except subprocess.TimeoutExpired:
                self.watchdog.kill()
                self.watchdog.wait()
        return self.popen.returncode
