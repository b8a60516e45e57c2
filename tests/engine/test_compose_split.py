"""The compose profile "split" (docker-compose.yml), run without Docker: its own command lines.

Docker is not on the test machines, so the profile is checked by doing what Compose would do,
with the containers' paths and ports mapped onto one host: each service's entrypoint (the image's
``ENTRYPOINT`` or the service's own) and command are run as written, the volumes become shared
folders (a named volume is one folder for every service that mounts it), every absolute path in
an engine config must lie under one of its service's mounts, ``http://<service>:<port>`` becomes
that service's loopback port, and each healthcheck's own code is what decides it is up. The
engine configs are the shipped examples (``engine/engine-*.example.yaml``, the files the profile
says to copy), loaded and preflighted by the real ``python -m engine serve``; vLLM is the
stand-in of ``tests.engine.fake_vllm``, which checks the guard's ``--kv-transfer-config`` with
the guard's own parser and leaves the evidence the guard leaves. The gateway's own judgement
(``HardeningMonitor``) of the router, configured as the profile documents, must let Tier 3
through; with the decode half's guard turned off it must not.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from engine.config import load_engine_config
from engine.launcher import free_port, kv_transfer_config
from engine.manifest import EngineManifest, manifest_problems
from engine.pd.settings import GUARD_CONNECTOR, GuardSettings
from engine.preflight import plan_pool
from tests.engine.conftest import engine_env, stop_group
from tests.engine.fake_vllm import vllm_shim

REPO = Path(__file__).resolve().parents[2]
SPLIT = ("engine-prefill", "engine-decode", "engine-router")
WAIT_S = 120.0  # generous bound for a start that must happen; never a speed assertion
# The shape of Llama 3.1 8B's config.json (the example's model): 128 KiB of bf16 KV per token.
LLAMA_8B = {"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 32, "num_attention_heads": 32,
            "num_key_value_heads": 8, "hidden_size": 4096, "head_dim": 128, "torch_dtype": "bfloat16"}  # fmt: skip


def _compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    return data


def _argv(service: dict[str, Any]) -> list[str]:
    """Entrypoint + command, the entrypoint from the service or its image's ENTRYPOINT line."""
    entrypoint = service.get("entrypoint")
    if entrypoint is None:
        found = re.search(r"^\s*ENTRYPOINT (\[.*\])\s*$", service["build"]["dockerfile_inline"], re.M)
        assert found, "the engine image has no ENTRYPOINT"
        entrypoint = json.loads(found.group(1))
    return [*entrypoint, *service["command"]]


@dataclass
class Mounts:
    """One service's volumes: container path -> host folder or file."""

    pairs: list[tuple[str, Path]]

    @classmethod
    def of(cls, service: dict[str, Any], project: Path, volumes: Path) -> Mounts:
        pairs = []
        for spec in service.get("volumes", []):
            source, target = spec.split(":")[:2]
            host = project / source[2:] if source.startswith("./") else volumes / source
            pairs.append((target, host))
        return cls(pairs)

    def host(self, path: str) -> Path:
        """Where a container path lies here; fails for a path no mount of this service provides."""
        best = max((t for t, _ in self.pairs if path == t or path.startswith(t.rstrip("/") + "/")), key=len,
                   default=None)  # fmt: skip
        assert best is not None, f"{path} is on no volume of this service"
        return dict(self.pairs)[best] / path[len(best) :].lstrip("/")


def _map_paths(value: Any, mounts: Mounts) -> Any:
    if isinstance(value, dict):
        return {k: _map_paths(v, mounts) for k, v in value.items()}
    if isinstance(value, str) and value.startswith("/"):
        return str(mounts.host(value))
    return value


@dataclass
class Deployment:
    """The profile's services running here: name -> loopback port, and their processes."""

    ports: dict[str, int]
    procs: list[subprocess.Popen[bytes]]
    configs: dict[str, Path]
    records: dict[str, Path]

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.ports[name]}"


def _project(tmp: Path, *, decode_guard: bool) -> Path:
    """The operator's folder: the example configs copied as the profile says, and a model."""
    project = tmp / "project"
    project.mkdir()
    for half in ("prefill", "decode"):
        shutil.copy(REPO / "engine" / f"engine-{half}.example.yaml", project / f"engine-{half}.yaml")
    if not decode_guard:
        raw = yaml.safe_load((project / "engine-decode.yaml").read_text())
        raw["disaggregation"]["guard"] = False
        (project / "engine-decode.yaml").write_text(yaml.safe_dump(raw))
    return project


def _wait_healthy(name: str, service: dict[str, Any], port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    """Run the service's own healthcheck (its container port mapped to ``port``) until it passes."""
    test = service["healthcheck"]["test"]
    assert test[:3] == ["CMD", "python3", "-c"], test
    code = test[3]
    assert "127.0.0.1:8000/" in code, code  # the port every engine service listens on in its container
    code = code.replace("127.0.0.1:8000/", f"127.0.0.1:{port}/")
    deadline = time.monotonic() + WAIT_S
    while True:
        if proc.poll() is not None:
            pytest.fail(f"{name} exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        if subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60).returncode == 0:
            return
        if time.monotonic() > deadline:
            pytest.fail(f"{name} not healthy in {WAIT_S}s:\n{log.read_text()[-3000:]}")
        time.sleep(0.5)


@contextmanager
def _deploy(tmp: Path, *, decode_guard: bool = True) -> Iterator[Deployment]:
    services = _compose()["services"]
    project, volumes = _project(tmp, decode_guard=decode_guard), tmp / "volumes"
    ports = {name: free_port() for name in SPLIT}
    env = {**engine_env(tmp), "PYTHONPATH": str(vllm_shim(tmp / "shim"))}
    run = Deployment(ports, [], {}, {})
    try:
        for name in SPLIT:
            service = services[name]
            mounts = Mounts.of(service, project, volumes)
            for _, host in mounts.pairs:
                if not host.suffix:  # a volume or a bind-mounted folder (./models): Compose creates them
                    host.mkdir(parents=True, exist_ok=True)
            argv = _argv(service)
            assert argv[0] == "python3", argv
            argv[0] = sys.executable
            if name != "engine-router":
                at = argv.index("--config") + 1
                raw = _map_paths(yaml.safe_load(mounts.host(argv[at]).read_text()), mounts)
                assert raw["port"] == 8000 and raw["host"] == "0.0.0.0", (name, raw["port"], raw["host"])
                raw.update(port=ports[name], host="127.0.0.1", state_dir=str(tmp / name / "state"))
                Path(raw["model"]).mkdir(parents=True, exist_ok=True)  # the operator's model under ./models
                (Path(raw["model"]) / "config.json").write_text(json.dumps(LLAMA_8B))
                config = tmp / name / "engine.yaml"
                config.parent.mkdir()
                config.write_text(yaml.safe_dump(raw))
                argv[at] = str(config)
                run.configs[name] = config
                run.records[name] = Path(raw["disaggregation"]["record_dir"])
            else:
                for flag, at in ((f, argv.index(f) + 1) for f in ("--prefill", "--decode")):
                    half = re.fullmatch(r"http://([a-z-]+):8000", argv[at])
                    assert half and half.group(1) in ports, (flag, argv[at])
                    argv[at] = run.url(half.group(1))
                at = argv.index("--record-dir") + 1
                argv[at] = str(mounts.host(argv[at]))
                run.records[name] = Path(argv[at])
                assert argv[argv.index("--port") + 1] == "8000" and argv[argv.index("--host") + 1] == "0.0.0.0"
                argv[argv.index("--port") + 1], argv[argv.index("--host") + 1] = str(ports[name]), "127.0.0.1"
            log = tmp / f"{name}.log"
            with log.open("wb") as out:
                proc = subprocess.Popen(argv, cwd=tmp, env={**env, **service.get("environment", {})}, stdout=out,
                                        stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
            run.procs.append(proc)
            if name == "engine-router":  # Compose starts it only once both halves are healthy
                _wait_healthy(name, service, ports[name], proc, log)
            elif name == "engine-decode":
                for started, p in zip(SPLIT[:2], run.procs, strict=True):
                    _wait_healthy(started, services[started], ports[started], p, tmp / f"{started}.log")
        yield run
    finally:
        for proc in run.procs:
            stop_group(proc)


def _router_upstream(url: str) -> dict[str, Any]:
    """tiergate.example.yaml's on-prem upstream, pointed at the router as the profile says."""
    header = (REPO / "docker-compose.yml").read_text()
    documented = dict(re.findall(r"^\s*#\s+(base_url|tokenize_url): (\S+)$", header, re.M))
    assert documented == {
        "base_url": "http://engine-router:8000/v1",
        "tokenize_url": "http://engine-router:8000/tokenize",
    }
    (local,) = [u for u in yaml.safe_load((REPO / "tiergate.example.yaml").read_text())["upstreams"]
                if u["kind"] == "onprem"]  # fmt: skip
    return {**local, **{k: v.replace("http://engine-router:8000", url) for k, v in documented.items()}}


def _gateway_allows_tier3(upstream: dict[str, Any]) -> tuple[bool, list[str]]:
    from gateway.hardening import HardeningMonitor
    from gateway.metrics import Metrics
    from gateway.settings import UpstreamSettings

    settings = UpstreamSettings.model_validate(upstream)

    async def judge() -> tuple[bool, list[str]]:
        async with httpx.AsyncClient(timeout=30.0) as client:
            monitor = HardeningMonitor([settings], {settings.name: client}, Metrics())
            return await monitor.refresh(settings), monitor.problems(settings.name)

    return asyncio.run(judge())


def test_the_profile_runs_both_halves_guarded_behind_the_router(tmp_path: Path) -> None:
    """Every command line of the profile runs as written; the halves load the example configs
    (preflight passed), wrap the example connector in the guard, share one record folder with
    the router; the router's combined manifest claims all four split protections, and the
    gateway, pointed at the router as documented, routes Tier 3 there."""
    compose = _compose()
    services = compose["services"]
    assert all(services[name]["profiles"] == ["split"] for name in SPLIT)
    assert all("healthcheck" in services[name] and "build" in services[name] for name in SPLIT)
    assert services["gateway"]["depends_on"]["engine-router"] == {"condition": "service_healthy", "required": False}
    with _deploy(tmp_path) as run:
        assert len(set(run.records.values())) == 1, run.records  # one volume: halves and router
        halves = {name: load_engine_config(run.configs[name]) for name in SPLIT[:2]}
        assert {name: c.disaggregation.role for name, c in halves.items() if c.disaggregation} == {
            "engine-prefill": "prefill", "engine-decode": "decode"}  # fmt: skip
        for config in halves.values():
            transfer = json.loads(kv_transfer_config(config))
            assert transfer["kv_connector"] == GUARD_CONNECTOR
            inner = GuardSettings.from_extra(transfer["kv_connector_extra_config"]).inner
            assert inner["kv_connector"] == "ExampleConnector"
        stores = {c.disaggregation.connector["kv_connector_extra_config"]["shared_storage_path"]
                  for c in halves.values() if c.disaggregation}  # fmt: skip
        assert len(stores) == 1  # both halves on the kvstore volume
        manifest = EngineManifest.from_json(
            httpx.get(run.url("engine-router") + "/tiergate/manifest", timeout=30).json()
        )
        assert manifest.disaggregated and manifest.paired_aborts
        assert manifest.kv_boundary_check and manifest.kv_deferred_release and manifest.kv_checksums
        assert manifest.pool_tokens == min(plan_pool(c).usable_tokens for c in halves.values())
        upstream = _router_upstream(run.url("engine-router"))
        assert manifest_problems(manifest, upstream["context_window"]) == []
        assert _gateway_allows_tier3(upstream) == (True, [])
        # A half reached directly never passes: only the router can claim paired aborts.
        direct = {**upstream, "base_url": run.url("engine-decode") + "/v1"}
        ok, problems = _gateway_allows_tier3(direct)
        assert not ok and problems == ["prefill/decode disaggregation without paired aborts of prefill and decode"]


def test_the_gateway_refuses_tier3_when_a_half_runs_without_the_guard(tmp_path: Path) -> None:
    """The same profile with ``guard: false`` in the decode half's config starts, but the
    router's manifest no longer claims the guard's protections and the gateway keeps Tier 3 away."""
    with _deploy(tmp_path, decode_guard=False) as run:
        ok, problems = _gateway_allows_tier3(_router_upstream(run.url("engine-router")))
        assert not ok
        assert problems == [
            "prefill/decode disaggregation without the KV boundary check (decode over blocks no sender vouched for)",
            "prefill/decode disaggregation without deferred release of blocks in flight",
            "prefill/decode disaggregation without per-block KV checksums",
        ]


def test_the_halves_refuse_a_guard_config_the_guard_would_refuse(tmp_path: Path) -> None:
    """The stand-in judges the guard's settings with the guard's parser: an unknown key under the
    transport's config fails the start, as the real guard fails vLLM's, so the run above proves
    the example configs are what the guard accepts."""
    raw = yaml.safe_load((REPO / "engine" / "engine-prefill.example.yaml").read_text())
    raw["disaggregation"]["connector"]["kv_connectr_module"] = "x"
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps(LLAMA_8B))
    raw.update(model=str(model), host="127.0.0.1", port=free_port(), state_dir=str(tmp_path / "state"),
               disaggregation={**raw["disaggregation"], "record_dir": str(tmp_path / "records")})  # fmt: skip
    config = tmp_path / "engine.yaml"
    config.write_text(yaml.safe_dump(raw))
    env = {**engine_env(tmp_path), "PYTHONPATH": str(vllm_shim(tmp_path / "shim"))}
    done = subprocess.run([sys.executable, "-m", "engine", "serve", "--config", str(config)], env=env,
                          capture_output=True, timeout=300, start_new_session=True)  # fmt: skip
    assert done.returncode == 1
    assert b"engine did not start" in done.stderr
    assert "unsupported keys ['kv_connectr_module']" in (tmp_path / "state" / "vllm.log").read_text()
