"""The engine's commands: serve the hardened vLLM, check a config or a running engine.

``python -m engine …`` runs them on an engine image without the gateway; ``tiergate engine …``
is the same group, added to the gateway's CLI (the gateway calls into the engine, never the
other way). Each command imports what it needs when it runs: ``check`` needs no vLLM.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from engine.config import EngineConfig
    from engine.manifest import EngineManifest

__all__ = ["engine_group"]


@click.group(name="engine")
def engine_group() -> None:
    """The hardened on-prem vLLM engine."""


def _load(path: Path) -> EngineConfig:
    from engine.config import EngineConfigError, load_engine_config

    try:
        return load_engine_config(path)
    except EngineConfigError as exc:
        raise click.ClickException(str(exc)) from exc


@engine_group.command(name="preflight")
@click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path, exists=True),
    required=True,
)
def preflight_command(config_path: Path) -> None:
    """Compute the KV pool for a config; exit 1 when it cannot hold max_model_len."""
    from engine.preflight import PreflightError, describe, plan_pool

    try:
        plan = plan_pool(_load(config_path))
    except PreflightError as exc:
        raise click.ClickException(f"preflight refused: {exc}") from exc
    click.echo(f"preflight ok: {describe(plan)}")


@engine_group.command(name="serve")
@click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path, exists=True),
    required=True,
)
def serve_command(config_path: Path) -> None:
    """Preflight, start vLLM with the KV hygiene plugin, read back, then serve the front."""
    import uvicorn

    from engine.front import create_front
    from engine.launcher import EngineStartError
    from engine.preflight import PreflightError
    from engine.supervisor import EngineSupervisor

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    config = _load(config_path)
    supervisor = EngineSupervisor(config)
    # An orchestrator's SIGTERM during the (minute-long) start: stop vLLM now rather than die and
    # leave it to the watchdog's grace period. uvicorn installs its own handlers afterwards.
    previous = signal.signal(signal.SIGTERM, _raise_stop)
    try:
        supervisor.start()
    except PreflightError as exc:
        raise click.ClickException(f"preflight refused: {exc}") from exc
    except EngineStartError as exc:
        raise click.ClickException(f"engine did not start: {exc}") from exc
    except _StopRequested:
        click.echo("SIGTERM while vLLM was starting: stopping it", err=True)
        supervisor.stop()
        sys.exit(128 + signal.SIGTERM)
    finally:
        signal.signal(signal.SIGTERM, previous)
    app = create_front(supervisor)
    # Stop vLLM inside the app's shutdown: uvicorn re-raises SIGTERM once it has shut down, so
    # code after serve() would never run on a signal.
    app.on_shutdown.append(lambda: supervisor.stop())
    server = uvicorn.Server(uvicorn.Config(app, host=config.host, port=config.port, log_level="info"))
    vllm_died = False

    async def run() -> None:
        nonlocal vllm_died

        async def watch() -> None:
            nonlocal vllm_died
            while not server.should_exit:
                if not supervisor.alive():
                    vllm_died = True
                    server.should_exit = True
                await asyncio.sleep(0.5)

        watcher = asyncio.create_task(watch())
        try:
            await server.serve()
        finally:
            watcher.cancel()

    try:
        asyncio.run(run())
    finally:
        supervisor.stop()
    if vllm_died:
        click.echo("vLLM exited; the engine front stopped with it", err=True)
        sys.exit(1)


class _StopRequested(BaseException):
    """SIGTERM arrived while the supervisor was starting vLLM (a BaseException: no ``except
    Exception`` on the way may swallow it)."""


def _raise_stop(signum: int, frame: object) -> None:
    raise _StopRequested()


@engine_group.command(name="check")
@click.argument("base_url")
@click.option("--context-window", type=int, required=True, help="What the gateway admits.")
def check_command(base_url: str, context_window: int) -> None:
    """Fetch a running engine's manifest; exit 1 unless it is hardened and consistent."""
    import httpx

    from engine.manifest import ManifestError, fetch_manifest, manifest_problems

    async def fetch() -> EngineManifest:
        async with httpx.AsyncClient(timeout=10.0) as client:
            return await fetch_manifest(client, base_url)

    try:
        manifest = asyncio.run(fetch())
    except ManifestError as exc:
        raise click.ClickException(str(exc)) from exc
    problems = manifest_problems(manifest, context_window)
    for key, value in manifest.to_json().items():
        click.echo(f"{key}: {value}")
    if problems:
        raise click.ClickException("not hardened: " + "; ".join(problems))
    click.echo("hardened: yes")
