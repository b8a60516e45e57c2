"""What a default-config server loads: the stacks a laptop run does not use stay out of the process.

Start-up time and idle memory are measured in ``bench/startup.py``; this guards the cause. A fresh
interpreter imports the CLI (as ``tiergate serve`` does), builds the app from the default config
(no file, an empty working directory: embedded SQLite) and runs its lifespan; then no module of
the packages below may be in ``sys.modules``. PyTorch and transformers are installed beside the
vLLM engine in this environment, so the check is meaningful here: presidio and spaCy's thinc
reach for them whenever they are importable (``tiers/_presidio.py``). A second start in the same
directory (the database already migrated) must not load Alembic either.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Package -> why a default-config server must not import it.
LAZY = {
    "torch": "presidio's device detection and thinc's shims; the gateway never runs a model",
    "transformers": "presidio's Hugging Face NLP engine, never configured",
    "vllm": "the engine runs in its own process",
    "playwright": "tests only",
    "opentelemetry.sdk": "tracing is off by default",
    "opentelemetry.exporter": "tracing is off by default",
    "asyncpg": "the default audit log is SQLite",
    "redis": "no redis_url by default: in-process limits",
    "spacy": "presidio's NLP engines are deferred; no spacy_model by default",
    "thinc": "spaCy's machine-learning layer, with spaCy",
    "requests": "presidio's EmailRecognizer (tldextract) is bound lazily and never run",
    "filelock": "tldextract's cache, with tldextract",
    "httpx._main": "httpx's console command (gateway/_httpx.py): the gateway only uses its client",
    "rich": "httpx's console command, with it",
    "aiohttp": "only for a URL an egress proxy applies to (gateway/proxied.py); no proxy is set",
    "jinja2": "the dashboard's templates, made at its first page",
}
# What a restart (the schema already current) leaves out on top of LAZY.
LAZY_ON_RESTART = {
    "alembic": "the database is at the newest revision: no migration to run",
    # Alembic's PostgreSQL implementation loads it on a start that migrates; otherwise only a
    # failed sign-in's upsert on PostgreSQL does
    "sqlalchemy.dialects.postgresql": "the default audit log is SQLite",
    # httpx's console command no longer loads it; Alembic's templates (mako) still do, for HTML
    # error pages, on a start that migrates
    "pygments": "httpx's console command, and Alembic's mako, with them",
}

_PROBE = """
import asyncio, json, sys
import gateway.cli  # everything `tiergate serve` imports before uvicorn starts
from gateway.app import create_app
from gateway.settings import load_settings

app = create_app(load_settings())

async def main():
    async with app.lifespan():
        pass

asyncio.run(main())
print(json.dumps(sorted(sys.modules)))
"""


def _loaded_after_default_start(tmp_path: Path, proxy: str | None = None) -> set[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIERGATE_") and not k.lower().endswith("_proxy")}
    if proxy is not None:  # and an upstream, for which the start makes a client
        env["HTTPS_PROXY"] = proxy
        config = tmp_path / "tiergate.yaml"
        config.write_text(
            "upstreams:\n  - name: vendor\n    base_url: https://vendor.invalid/v1\n    kind: shared\n"
            "    models: {m: m}\n"
        )
        env["TIERGATE_CONFIG"] = str(config)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    out = subprocess.run([sys.executable, "-c", _PROBE], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=240)  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    return set(json.loads(out.stdout.splitlines()[-1]))


def _offenders(loaded: set[str], lazy: dict[str, str]) -> dict[str, str]:
    return {name: why for name, why in lazy.items() if any(m == name or m.startswith(name + ".") for m in loaded)}


def test_default_start_imports_none_of_the_unused_stacks(tmp_path: Path) -> None:
    loaded = _loaded_after_default_start(tmp_path)
    assert "tiers.classifier" in loaded and "presidio_analyzer" in loaded  # the probe did start a server
    assert "alembic" in loaded  # a first start migrates the new database
    offenders = _offenders(loaded, LAZY)
    assert not offenders, f"imported by a default-config start: {offenders}"


def test_restart_on_a_current_schema_loads_no_migration_code(tmp_path: Path) -> None:
    _loaded_after_default_start(tmp_path)  # creates ./var: database, secrets
    loaded = _loaded_after_default_start(tmp_path)
    assert "tiers.classifier" in loaded and "audit.store" in loaded
    offenders = _offenders(loaded, {**LAZY, **LAZY_ON_RESTART})
    assert not offenders, f"imported by a restart: {offenders}"


def test_a_start_where_a_proxy_is_named_checks_aiohttp_at_once(tmp_path: Path) -> None:
    """The proxied path's aiohttp (and its version check) is loaded by the start, not by the first
    proxied request, where the environment names a proxy."""
    loaded = _loaded_after_default_start(tmp_path, proxy="http://127.0.0.1:9")
    assert "gateway.proxied" in loaded and "aiohttp" in loaded


@pytest.mark.skipif(find_spec("torch") is None, reason="PyTorch is not installed: nothing to hide")
def test_torch_still_imports_normally_after_presidio() -> None:
    # Hiding it from presidio's first import must not break a later, deliberate import.
    code = "import tiers.classifier, sys; assert 'torch' not in sys.modules; import torch; print(torch.__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert out.returncode == 0 and out.stdout.strip() == "torch", out.stderr[-2000:]
