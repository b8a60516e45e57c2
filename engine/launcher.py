"""Start and stop vLLM's OpenAI server with the hardening on, in its own process group.

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
from dataclasses import dataclass
from pathlib import Path

import httpx

from engine.config import EngineConfig
from engine.plugin import ENV_ALLOW_UNTESTED, ENV_STATE_DIR, PLUGIN_NAME

__all__ = ["EngineStartError", "VllmProcess", "free_port", "vllm_command", "vllm_env"]


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
        "--enable-prefix-caching"
        if config.prefix_caching
        else "--no-enable-prefix-caching",
    ]
    if config.enforce_eager:
        cmd.append("--enforce-eager")
    return cmd


def vllm_env(
    config: EngineConfig, state_dir: Path, *, plugin: bool = True
) -> dict[str, str]:
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


def _die_with_parent() -> None:
    # Linux: SIGTERM vLLM if the supervisor dies without stopping it (kill -9, crash), so an
    # unsupervised engine never keeps serving.
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(
            1, signal.SIGTERM
        )  # PR_SET_PDEATHSIG


@dataclass
class VllmProcess:
    """A running vLLM server: its process (group leader), port and log file."""

    popen: subprocess.Popen[bytes]
    port: int
    log_path: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @classmethod
    def spawn(
        cls, cmd: list[str], env: dict[str, str], log_path: Path, port: int
    ) -> VllmProcess:
        log = log_path.open("ab")
        try:
            popen = subprocess.Popen(
                cmd,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                preexec_fn=_die_with_parent,  # noqa: PLW1509 - spawned before any thread starts
            )
        finally:
            log.close()
        return cls(popen, port, log_path)

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
                    raise EngineStartError(
                        f"vLLM exited with code {code} during start:\n{self.log_tail()}"
                    )
                try:
                    if client.get(f"{self.base_url}/health").status_code == 200:
                        return
                except httpx.HTTPError:
                    pass
                time.sleep(0.5)
        self.stop()
        raise EngineStartError(
            f"vLLM not healthy after {timeout_s:.0f}s:\n{self.log_tail()}"
        )

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, grace_s: float = 15.0) -> int | None:
        """SIGTERM the whole process group, then SIGKILL what is left; return the exit code."""
        for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(self.popen.pid, sig)
            except ProcessLookupError:
                break
            try:
                self.popen.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                continue
            # The leader is gone; children of the group may linger: finish them too.
            try:
                os.killpg(self.popen.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            break
        return self.popen.returncode
