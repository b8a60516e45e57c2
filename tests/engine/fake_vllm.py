"""A stand-in for vLLM's OpenAI server, for the engine's process-lifecycle tests.

``vllm_shim`` writes a ``vllm.entrypoints.openai.api_server`` module into a folder that, put
first on ``PYTHONPATH``, takes the place of the real vLLM for ``python -m`` (the command the
launcher runs). The stand-in answers what the supervisor reads at start (``/health``,
``/metrics`` with ``vllm:cache_config_info``, ``/v1/models``), with the pool the config asks
for, and records the plugin as active for itself and for one child process, like vLLM's
engine core. It starts in well under a second, where a real vLLM takes about a minute here.

With ``FAKE_VLLM_IGNORE_SIGTERM=1`` both processes ignore SIGTERM, as vLLM 0.32 does while it is
still starting; ``FAKE_VLLM_START_DELAY_S`` holds the start back (a model still loading).

Given a ``--kv-transfer-config`` naming the KV guard (a split half), it reads the guard's settings
with the guard's own parser and refuses to start where the guard would (exit 1: unknown or
missing settings, a failure policy other than ``fail``); otherwise both processes leave the
guard's evidence, the server as its scheduler side and the child as its worker side, as the
guard's two instances in a real vLLM do. No KV moves: the stand-in proves configuration only.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from engine.config import EngineConfig
from engine.pd.counters import GuardCounters
from engine.pd.records import RecordStore
from engine.pd.settings import GUARD_CONNECTOR, GUARD_MODULE, PROTECTIONS, GuardSettings
from engine.plugin import ENV_STATE_DIR, PLUGIN_VERSION
from engine.plugin.state import write_process_record
from engine.preflight import plan_pool

__all__ = ["vllm_shim"]

_REPO = Path(__file__).resolve().parents[2]
_CHILD_FLAG = "--fake-engine-core"
# The guard's counters, held for the process's life as the guard holds its own.
_EVIDENCE: list[GuardCounters] = []


def vllm_shim(folder: Path) -> Path:
    """Write the shadowing ``vllm`` package under ``folder``; return the PYTHONPATH to use."""
    pkg = folder / "vllm" / "entrypoints" / "openai"
    pkg.mkdir(parents=True, exist_ok=True)
    for init in (folder / "vllm", folder / "vllm" / "entrypoints", pkg):
        (init / "__init__.py").write_text("")
    (pkg / "api_server.py").write_text(
        "from tests.engine.fake_vllm import main\n\nif __name__ == '__main__':\n    main()\n"
    )
    return Path(f"{folder}{os.pathsep}{_REPO}")


def _record() -> None:
    write_process_record(
        Path(os.environ[ENV_STATE_DIR]),
        {
            "plugin_version": PLUGIN_VERSION,
            "vllm_version": "0.32.0",
            "version_override": False,
            "zeroing": True,
        },
    )


def _ignore_sigterm_if_asked() -> None:
    if os.environ.get("FAKE_VLLM_IGNORE_SIGTERM") == "1":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)


def _guard_settings(transfer: dict[str, object]) -> GuardSettings:
    """What the guard's constructor checks before it wraps anything; exits 1 where it refuses."""
    try:
        if transfer.get("kv_connector_module_path") != GUARD_MODULE:
            raise ValueError(f"the guard is loaded from {GUARD_MODULE}")
        if transfer.get("kv_load_failure_policy") != "fail":
            raise ValueError("the KV guard needs kv_load_failure_policy 'fail'")
        extra = transfer.get("kv_connector_extra_config")
        settings = GuardSettings.from_extra(extra if isinstance(extra, dict) else None)
    except ValueError as exc:
        print(f"fake vLLM: KV guard refused: {exc}", file=sys.stderr)
        sys.exit(1)
    RecordStore(Path(settings.record_dir))
    return settings


def _guard_evidence(side: str, transfer: dict[str, object]) -> GuardCounters:
    settings = _guard_settings(transfer)
    return GuardCounters(
        Path(os.environ[ENV_STATE_DIR]),
        {"role": f"{side}:{transfer.get('kv_role')}", "inner": str(settings.inner["kv_connector"]),
         "protections": list(PROTECTIONS), "version": "fake"},
    )  # fmt: skip


def _guarded(raw: str | None) -> dict[str, object] | None:
    transfer = json.loads(raw) if raw else None
    return transfer if isinstance(transfer, dict) and transfer.get("kv_connector") == GUARD_CONNECTOR else None


def _engine_core(raw_transfer: str | None) -> None:
    _ignore_sigterm_if_asked()
    transfer = _guarded(raw_transfer)
    if transfer:
        _EVIDENCE.append(_guard_evidence("worker", transfer))
    _record()
    while True:
        time.sleep(3600)


def main() -> None:
    if _CHILD_FLAG in sys.argv:
        at = sys.argv.index(_CHILD_FLAG)
        _engine_core(sys.argv[at + 1] if len(sys.argv) > at + 1 else None)
        return
    _ignore_sigterm_if_asked()
    parser = argparse.ArgumentParser()
    for flag in ("--model", "--served-model-name", "--dtype"):
        parser.add_argument(flag, required=True)
    for flag in ("--max-model-len", "--kv-cache-memory-bytes", "--block-size", "--port"):
        parser.add_argument(flag, type=int, required=True)
    parser.add_argument("--no-enable-prefix-caching", action="store_true")
    parser.add_argument("--kv-transfer-config", default=None)
    args, _ = parser.parse_known_args()
    transfer = _guarded(args.kv_transfer_config)
    if transfer:
        _EVIDENCE.append(_guard_evidence("scheduler", transfer))
    plan = plan_pool(
        EngineConfig(
            model=Path(args.model),
            served_model_name=args.served_model_name,
            max_model_len=args.max_model_len,
            kv_cache_memory_bytes=args.kv_cache_memory_bytes,
            block_size=args.block_size,
            dtype=args.dtype,
        )
    )
    time.sleep(float(os.environ.get("FAKE_VLLM_START_DELAY_S", "0")))
    core_argv = [sys.executable, "-m", "tests.engine.fake_vllm", _CHILD_FLAG]
    core = subprocess.Popen(core_argv + ([json.dumps(transfer)] if transfer else []))
    state = Path(os.environ[ENV_STATE_DIR])
    while not (state / f"kvzero-{core.pid}.json").exists():
        time.sleep(0.02)  # vLLM too answers /health only once its engine core is up
    _record()
    metrics = (
        "# TYPE vllm:cache_config_info gauge\n"
        f'vllm:cache_config_info{{block_size="{args.block_size}",'
        f'enable_prefix_caching="{not args.no_enable_prefix_caching}",'
        f'num_gpu_blocks="{plan.num_blocks}"}} 1.0\n'
    )
    models = {
        "object": "list",
        "data": [{"id": args.served_model_name, "max_model_len": args.max_model_len}],
    }
    routes = {
        "/health": ("application/json", b"{}"),
        "/metrics": ("text/plain", metrics.encode()),
        "/v1/models": ("application/json", json.dumps(models).encode()),
    }

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            kind, body = routes.get(self.path, ("application/json", b""))
            self.send_response(200 if body else 404)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return None

    ThreadingHTTPServer(("127.0.0.1", args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
