"""Preflight, start, read back and watch one hardened vLLM; answer for it in the manifest.

Start order, each step fatal on failure (the engine never serves half-checked):
1. ``plan_pool``: our KV arithmetic, before vLLM is even started;
2. spawn vLLM with only our plugin allowed, wait for /health;
3. read back the pool and context from vLLM and compare with the plan;
4. check that every vLLM process (API server, engine core, workers) reported the plugin active.

A plugin that refused to load (e.g. an untested vLLM version) stops vLLM; the start then fails
with the plugin's own reason, never with an engine that runs unhardened.
"""

from __future__ import annotations

import logging
import signal
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx
import psutil

from engine.config import EngineConfig
from engine.launcher import (
    WATCHDOG_SCRIPT,
    EngineStartError,
    VllmProcess,
    free_port,
    vllm_command,
    vllm_env,
)
from engine.manifest import MANIFEST_SCHEMA, EngineManifest
from engine.plugin import PLUGIN_VERSION
from engine.plugin.state import read_plugin_processes, read_refusals
from engine.preflight import (
    PoolPlan,
    PreflightError,
    ReadBack,
    describe,
    parse_readback,
    plan_pool,
    readback_problems,
)

__all__ = ["EngineSupervisor", "ZeroingStatus", "is_helper_process"]

log = logging.getLogger("tiergate.engine")

# Helper processes that never hold KV and never load vLLM plugins: Python's multiprocessing
# trackers (started as ``python -c "from multiprocessing.<x> import main; ..."``), torch's
# compile workers, and our orphan watchdog (``python -I .../engine/watchdog.py``).
_HELPER_CODE = (
    "from multiprocessing.resource_tracker import",
    "from multiprocessing.forkserver import",
)


def is_helper_process(cmdline: list[str]) -> bool:
    """True for multiprocessing trackers and compile workers, judged by their exact launch form."""
    if "-c" in cmdline[:4]:
        code = cmdline[cmdline.index("-c") + 1] if cmdline.index("-c") + 1 < len(cmdline) else ""
        if code.startswith(_HELPER_CODE):
            return True
    return (
        any(a.endswith("_inductor/compile_worker/__main__.py") for a in cmdline[:3])
        or ("-m" in cmdline[:3] and "torch._inductor.compile_worker" in cmdline[:4])
        or (cmdline[1:2] == ["-I"] and cmdline[2:3] == [str(WATCHDOG_SCRIPT)])
    )


@dataclass(frozen=True, slots=True)
class ZeroingStatus:
    """Whether every vLLM process has the plugin active, and what it has zeroed so far."""

    active: bool
    processes: int  # vLLM processes with the plugin active
    missing: tuple[int, ...]  # vLLM processes without it (pids)
    blocks_zeroed: int
    vllm_version: str
    version_override: bool


class EngineSupervisor:
    """Owns one vLLM process; ``start`` raises ``PreflightError`` / ``EngineStartError``."""

    def __init__(self, config: EngineConfig) -> None:
        self.config = config
        if config.state_dir is not None:
            config.state_dir.mkdir(parents=True, exist_ok=True)
            self.state_dir = config.state_dir
        else:
            self.state_dir = Path(tempfile.mkdtemp(prefix="tiergate-engine-"))
        self.plan: PoolPlan | None = None
        self.readback: ReadBack | None = None
        self.process: VllmProcess | None = None
        self.started_at: str | None = None
        self._exit_logged = False

    @property
    def vllm_url(self) -> str:
        if self.process is None:
            raise EngineStartError("vLLM is not running")
        return self.process.base_url

    def start(self) -> None:
        self.plan = plan_pool(self.config)
        log.info("preflight ok: %s", describe(self.plan))
        for pattern in ("kvzero-*", "kvrefused-*", "kvguard-*"):
            for stale in self.state_dir.glob(pattern):
                stale.unlink()  # evidence of an earlier run must not speak for this one
        port = self.config.vllm_port or free_port()
        self.process = VllmProcess.spawn(
            vllm_command(self.config, port),
            vllm_env(self.config, self.state_dir),
            self.state_dir / "vllm.log",
            port,
            orphan_grace_s=self.config.stop_grace_s,
        )
        try:
            self.process.wait_healthy(self.config.startup_timeout_s)
            self.readback = self._read_back()
            problems = readback_problems(self.plan, self.config, self.readback)
            if problems:
                raise PreflightError("vLLM disagrees with the plan: " + "; ".join(problems))
            status = self.zeroing_status()
            if not status.active:
                raise EngineStartError(
                    f"KV hygiene plugin not active in vLLM processes {list(status.missing)} "
                    f"(active in {status.processes})"
                )
        except BaseException as exc:
            self.stop()
            refused = self._plugin_refusal()
            if refused is not None and isinstance(exc, Exception):
                # vLLM's exit code and log tail bury the reason; the plugin's record names it.
                raise EngineStartError(refused) from exc
            raise
        self.started_at = datetime.now(UTC).isoformat(timespec="seconds")
        log.info(
            "engine ready on %s; plugin active in %d processes",
            self.vllm_url,
            status.processes,
        )

    def _plugin_refusal(self) -> str | None:
        refusals = read_refusals(self.state_dir)
        if not refusals:
            return None
        first = refusals[0]
        return f"the KV hygiene plugin refused to load in vLLM (pid {first.pid}), so vLLM did not start: {first.reason}"

    def _read_back(self) -> ReadBack:
        with httpx.Client(base_url=self.vllm_url, timeout=10.0) as client:
            metrics = client.get("/metrics")
            models = client.get("/v1/models")
        if metrics.status_code != 200 or models.status_code != 200:
            raise PreflightError("vLLM read-back endpoints did not answer 200")
        return parse_readback(metrics.text, models.json())

    def vllm_pids(self) -> list[int]:
        """The vLLM server and its descendants, minus multiprocessing/compiler helpers."""
        if self.process is None or not self.process.alive():
            return []
        try:
            root = psutil.Process(self.process.popen.pid)
            procs = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []
        pids: list[int] = []
        for proc in procs:
            try:
                cmdline = proc.cmdline()
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
            if not is_helper_process(cmdline):
                pids.append(proc.pid)
        return pids

    def zeroing_status(self) -> ZeroingStatus:
        records = {p.pid: p for p in read_plugin_processes(self.state_dir)}
        pids = self.vllm_pids()
        active = [records[p] for p in pids if p in records and records[p].zeroing]
        missing = tuple(p for p in pids if p not in records or not records[p].zeroing)
        versions = {r.vllm_version for r in active}
        return ZeroingStatus(
            active=bool(pids) and not missing,
            processes=len(active),
            missing=missing,
            blocks_zeroed=sum(r.blocks_zeroed for r in active),
            vllm_version=versions.pop() if len(versions) == 1 else "unknown",
            version_override=any(r.version_override for r in active),
        )

    def alive(self) -> bool:
        if self.process is None:
            return False
        if self.process.alive():
            return True
        if not self._exit_logged and self.started_at is not None:
            # Once, at the first look after the fact: the line that says why the front went down.
            self._exit_logged = True
            log.error(
                "vLLM (pid %d) %s; the engine is down",
                self.process.popen.pid,
                _describe_exit(self.process.popen.returncode),
            )
        return False

    def manifest(self) -> EngineManifest:
        """The manifest as of now; raises ``EngineStartError`` when the engine is not running."""
        if self.plan is None or self.readback is None or self.started_at is None or not self.alive():
            raise EngineStartError("engine is not running")
        status = self.zeroing_status()
        rb = self.readback
        guarded = self.guard_active()
        return EngineManifest(
            schema=MANIFEST_SCHEMA,
            vllm_version=status.vllm_version,
            plugin_version=PLUGIN_VERSION if status.processes else None,
            model=rb.model,
            max_model_len=rb.max_model_len,
            block_size=rb.block_size,
            num_blocks=rb.num_blocks,
            pool_tokens=rb.usable_tokens,
            kv_zeroing=status.active,
            zeroing_processes=status.processes,
            version_override=status.version_override,
            prefix_caching=rb.prefix_caching,
            cache_salt_required=(self.config.cache_salt.require and rb.prefix_caching)
            or self.config.cache_salt.secret_file is not None,
            over_long_rejected=True,
            truncation_dropped=True,
            disaggregated=self.config.disaggregation is not None,
            preflight_ok=not readback_problems(self.plan, self.config, rb),
            started_at=self.started_at,
            kv_boundary_check=guarded,
            kv_deferred_release=guarded,
            kv_checksums=guarded,
            paired_aborts=False,  # only engine.pd.router, which fronts both halves, can say so
        )

    def guard_active(self) -> bool:
        """The KV guard runs in the scheduler and a worker of this live vLLM (its own evidence)."""
        if self.config.disaggregation is None or not self.config.disaggregation.guard:
            return False
        from engine.pd.counters import read_guard_processes

        live = set(self.vllm_pids())
        roles = {p.role.split(":")[0] for p in read_guard_processes(self.state_dir) if p.pid in live}
        return {"scheduler", "worker"} <= roles

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop(self.config.stop_grace_s)


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "is running"
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"
