"""The recognizers' tables kept in the cache folder (``gateway/tables.py``): a default start derives
them and keeps a snapshot; the next start, in a process of another hash seed, derives none and
holds the same tables; a damaged snapshot is derived again and replaced; a change of the code or
of a source's version is another key.

Real default starts (``create_app(load_settings())`` and its lifespan, as ``tiergate serve``), in
fresh interpreters: a process holds its tables once read, which would hide a second start's reads.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gateway import tables as kept

ROOT = Path(__file__).resolve().parents[2]

_START = """
import asyncio, json, logging, sys
from gateway.app import create_app
from gateway.settings import load_settings
from tiers import tables
loads = []
for name, entry in tables._tables.items():
    entry.load = (lambda real, name: lambda: loads.append(name) or real())(entry.load, name)
app = create_app(load_settings())

async def main():
    async with app.lifespan():
        pass

asyncio.run(main())
print(json.dumps({"loads": sorted(loads), "held": sorted(n for n in tables._tables if tables.loaded(n))}))
"""


def _start(cwd: Path, seed: str) -> tuple[dict[str, list[str]], str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIERGATE_")}
    env.update(PYTHONHASHSEED=seed, PYTHONPATH=str(ROOT), XDG_CACHE_HOME=str(cwd / "cache"))
    out = subprocess.run([sys.executable, "-c", _START], cwd=cwd, env=env, capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-3000:]
    result: dict[str, list[str]] = json.loads(out.stdout.splitlines()[-1])
    return result, out.stderr


def _kept(cwd: Path) -> list[Path]:
    return sorted((cwd / "cache" / "tiergate").glob("tables-*.marshal"))


def test_a_restart_takes_the_tables_the_first_start_kept_and_a_damaged_file_is_replaced(tmp_path: Path) -> None:
    first, _ = _start(tmp_path, "1")
    assert first["loads"] and first["loads"] == first["held"]  # derived, each once
    [snapshot] = _kept(tmp_path)
    written = snapshot.read_bytes()

    second, _ = _start(tmp_path, "2")
    assert second["loads"] == [] and second["held"] == first["held"]  # taken, none derived

    snapshot.write_bytes(written[: len(written) // 2] + b"\0" + written[len(written) // 2 + 1 :])
    third, log = _start(tmp_path, "3")
    assert third["loads"] == first["loads"]  # derived again ...
    assert "recognizer tables not taken from the cache" in log and "Traceback" not in log
    assert _kept(tmp_path) == [snapshot]
    fourth, _ = _start(tmp_path, "4")  # ... and kept again: the next start takes them
    assert fourth["loads"] == []


def test_the_key_follows_the_code_and_the_sources_versions(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import importlib.metadata
    import shutil

    base = kept.tables_key()
    real = importlib.metadata.version
    monkeypatch.setattr(
        importlib.metadata, "version", lambda dist: real(dist) + ".post1" if dist == "names" else real(dist)
    )
    kept.tables_key.cache_clear()
    try:
        assert kept.tables_key() != base  # another release of one source
    finally:
        monkeypatch.undo()
        kept.tables_key.cache_clear()
    assert kept.tables_key() == base

    # a copy of the package with one loader's file changed by a byte: another key
    copy = tmp_path / "tree"
    shutil.copytree(ROOT / "tiers", copy / "tiers", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "gateway", copy / "gateway", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "formats", copy / "formats", ignore=shutil.ignore_patterns("__pycache__"))
    code = "from gateway.tables import tables_key; print(tables_key())"
    env = {**os.environ, "PYTHONPATH": str(copy)}

    def key_of_copy() -> str:
        out = subprocess.run(
            [sys.executable, "-c", code], cwd=copy, env=env, capture_output=True, text=True, timeout=120
        )
        assert out.returncode == 0, out.stderr[-2000:]
        return out.stdout.strip()

    assert key_of_copy() == base
    surnames = copy / "tiers" / "recognizers" / "_surnames.py"
    surnames.write_text(surnames.read_text() + "\n# changed\n")
    assert key_of_copy() != base


def test_a_cache_that_cannot_be_written_keeps_nothing_and_raises_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from tiers import Classifier, TiersConfig

    Classifier(TiersConfig())
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    kept.keep_tables(blocked / "cache")
    assert not (blocked / "cache").exists()
    assert "not kept" in caplog.text and "Not a directory" in caplog.text
    assert kept.preload_tables(blocked / "cache") is True  # this process holds every table already


def test_a_fifo_where_the_snapshot_should_be_does_not_hold_the_start(tmp_path: Path) -> None:
    """Opening a named pipe for reading waits for a writer; the start must not."""
    import threading

    from gateway.cache_files import read_kept

    path = kept.kept_tables_at(tmp_path)
    os.mkfifo(path)
    answers: list[object] = []
    reader = threading.Thread(target=lambda: answers.append(read_kept(path, 1 << 20)), daemon=True)
    reader.start()
    reader.join(timeout=10)
    assert not reader.is_alive() and answers == [None]
