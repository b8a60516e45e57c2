"""The gateway's compiled first pass (gateway/prefilter.py): compiled once in the background, kept in
the cache folder, attached from there at the next start, compiled again when the file is damaged,
and reaching the forked classification workers.

Real classifiers, a real compile (seconds, once per process: later calls share it), real files
and real forked workers of ``ClassifyStep``.
"""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from gateway import classify
from gateway.classify import ClassifyStep
from gateway.prefilter import attach_prefilter, kept_at
from tiers import Classifier, TiersConfig
from tiers.prefilter import available, platform

pytestmark = pytest.mark.skipif(not available(), reason="no hyperscan wheel for this platform")

KEY = b"k" * 32


def _wait(done: Future[bool]) -> bool:
    return done.result(timeout=120)


def test_compiled_once_kept_and_loaded_at_the_next_start(tmp_path: Path) -> None:
    first, second, third = (Classifier(TiersConfig()) for _ in range(3))
    calls: list[str] = []
    assert _wait(attach_prefilter(first, tmp_path, lambda: calls.append("first")))
    assert first.prefiltered and calls == ["first"]
    files = list(tmp_path.iterdir())
    assert files == [kept_at(tmp_path, first.prefilter_key)]
    kept = files[0].read_bytes()

    # the next start: attached from the file before the call returns
    done = attach_prefilter(second, tmp_path, lambda: calls.append("second"))
    assert done.done() and done.result() and second.prefiltered and calls == ["first", "second"]

    # a damaged file: compiled again (shared with the compile above in this process) and replaced
    files[0].write_bytes(kept[: len(kept) // 2])
    assert _wait(attach_prefilter(third, tmp_path, lambda: calls.append("third")))
    assert third.prefiltered and files[0].read_bytes() == kept
    assert [f.name for f in tmp_path.iterdir()] == [files[0].name]  # no temporary file left


def test_a_cache_that_cannot_be_written_still_attaches(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    clf = Classifier(TiersConfig())
    assert _wait(attach_prefilter(clf, blocked / "cache", lambda: None))
    assert clf.prefiltered


def _prefiltered_in_worker() -> bool:
    assert classify._STEP is not None
    return classify._STEP.classifier.prefiltered


def test_workers_forked_before_the_prefilter_get_it_after_renewal(tmp_path: Path) -> None:
    clf = Classifier(TiersConfig())
    step = ClassifyStep(clf, fingerprint_key=KEY, offload_bytes=0, timeout_s=60, workers=1, processes=True)
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "mail jane.doe@example-mail.com"}]})

    async def run() -> tuple[bool, bool, list[str], list[str]]:
        before = await step.run("chat", body.encode(), "t")
        was = await step._submit(_prefiltered_in_worker)
        loop = asyncio.get_running_loop()
        attached = asyncio.Event()

        def renew() -> None:
            step.renew_workers()
            attached.set()

        def on_attached() -> None:  # on the compiling thread
            loop.call_soon_threadsafe(renew)

        attach_prefilter(clf, tmp_path, on_attached)
        await asyncio.wait_for(attached.wait(), 120)
        now = await step._submit(_prefiltered_in_worker)
        after = await step.run("chat", body.encode(), "t")
        return (
            was,
            now,
            [f.entity_type for f in before.decision.findings],
            [f.entity_type for f in after.decision.findings],
        )

    try:
        was, now, before, after = asyncio.run(run())
    finally:
        step.close()
    assert (was, now) == (False, True)
    assert before == after == ["EMAIL_ADDRESS"]


def test_the_scan_command_attaches_a_kept_prefilter_and_never_compiles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from gateway.commands.scan import _classifier

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    threads = {t.name for t in threading.enumerate()}
    assert not _classifier(None).prefiltered  # nothing kept: RE2's sets, and no compile started
    assert "tiergate-prefilter" not in {t.name for t in threading.enumerate()} - threads
    assert not (tmp_path / "tiergate").exists()
    assert _wait(attach_prefilter(Classifier(TiersConfig()), tmp_path / "tiergate", lambda: None))
    assert _classifier(None).prefiltered


def test_compiled_ahead_by_the_command_and_attached_by_another_process_at_once(tmp_path: Path) -> None:
    """``tiergate config prefilter`` keeps what a start would compile; a later process, whatever
    its string hashing, finds it under the same key (it once did not: every start compiled)."""
    import os
    import subprocess
    import sys

    config = tmp_path / "tiergate.yaml"
    config.write_text(f"cache_dir: {tmp_path / 'cache'}\n")

    def command(seed: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "gateway.cli", "config", "prefilter", "--config", str(config)],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    first = command("1").splitlines()
    assert [line.split(": ")[0] for line in first] == ["tables kept", "kept"]
    (kept,) = (tmp_path / "cache").glob("prefilter-*")
    (tables,) = (tmp_path / "cache").glob("tables-*")
    assert first == [f"tables kept: {tables}", f"kept: {kept}"]
    inodes = kept.stat().st_ino, tables.stat().st_ino
    assert command("2").splitlines() == [f"tables already kept: {tables}", f"already kept: {kept}"]
    assert (kept.stat().st_ino, tables.stat().st_ino) == inodes  # neither compiled nor derived and written again
    clf = Classifier(TiersConfig())
    done = attach_prefilter(clf, tmp_path / "cache", lambda: None)
    assert done.done() and done.result() and clf.prefiltered  # from the file, before the call returned
    # a server's start in another process takes the kept tables: it derives none
    probe = (
        "import sys; from pathlib import Path; from gateway.tables import preload_tables; "
        "from tiers import tables; "
        "taken = preload_tables(Path(sys.argv[1])); "
        "print(taken, all(tables.loaded(n) for n in tables.sources()))"
    )
    took = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path / "cache")], capture_output=True, text=True, timeout=120
    )
    assert took.stdout.split() == ["True", "True"], took.stderr


def test_machines_of_another_instruction_set_keep_a_file_of_their_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database built for other CPU features does not load: two kinds of machine sharing a
    folder must not find (and replace) each other's file at every start."""
    import gateway.prefilter as kept

    here = Classifier(TiersConfig())
    assert _wait(attach_prefilter(here, tmp_path, lambda: None))
    (mine,) = tmp_path.iterdir()
    assert mine.name.endswith(f"-{platform()}.bin")
    before = mine.read_bytes()
    monkeypatch.setattr(kept, "platform", lambda: "avx2-avx512-other")
    other = kept_at(tmp_path, here.prefilter_key)
    assert other != mine
    other.write_bytes(b"tiergate-prefilter\n" + b"0" * 64 + b"\n\nnot for this machine")
    there = Classifier(TiersConfig())
    assert _wait(attach_prefilter(there, tmp_path, lambda: None))  # its own file did not load: compiled
    monkeypatch.undo()
    assert mine.read_bytes() == before  # the other kind's start left this machine's file alone


def test_databases_no_start_used_for_a_month_are_pruned_when_one_is_written(tmp_path: Path) -> None:
    import os
    import time

    stale, recent = tmp_path / "prefilter-0000.bin", tmp_path / "prefilter-1111.bin"
    other = tmp_path / "notes.txt"
    for f in (stale, recent, other):
        f.write_bytes(b"x")
    month = 31 * 86_400
    os.utime(stale, (time.time() - month, time.time() - month))
    os.utime(other, (time.time() - month, time.time() - month))
    clf = Classifier(TiersConfig())
    assert _wait(attach_prefilter(clf, tmp_path, lambda: None))
    kept = {f.name for f in tmp_path.iterdir()}
    written = kept_at(tmp_path, clf.prefilter_key)
    assert kept == {recent.name, other.name, written.name}
    # a start that loads a kept database marks it used
    os.utime(written, (time.time() - month, time.time() - month))
    assert attach_prefilter(Classifier(TiersConfig()), tmp_path, lambda: None).result(timeout=0)
    assert time.time() - written.stat().st_mtime < 3600


@pytest.mark.parametrize("on", [True, False])
def test_the_gauge_says_whether_the_gateway_scans_with_it(on: bool, fakes: Any, sqlite_db: str, tmp_path: Path) -> None:
    import time

    import httpx

    from tests.gateway.conftest import base_config
    from tests.support.harness import GatewayHarness

    clf = Classifier(TiersConfig())
    config = base_config(fakes, cache_dir=str(tmp_path / "cache"), limits={"auth_cache_s": 0, "prefilter": on})
    with GatewayHarness(sqlite_db, tmp_path, config, classifier=clf) as gw:
        deadline = time.monotonic() + 120
        while True:
            text = httpx.get(gw.url + "/metrics").text
            if not on or "tiergate_prefilter_attached 1.0" in text or time.monotonic() > deadline:
                break
            time.sleep(0.2)
    assert f"tiergate_prefilter_attached {1.0 if on else 0.0}" in text
    assert clf.prefiltered is on


def test_the_command_says_when_there_is_nothing_to_compile_and_names_a_bad_config(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from gateway.cli import main

    off = tmp_path / "off.yaml"
    off.write_text(f"cache_dir: {tmp_path / 'cache'}\nlimits:\n  prefilter: false\n")
    done = CliRunner().invoke(main, ["config", "prefilter", "--config", str(off)])
    assert done.exit_code == 0 and "nothing compiled: limits.prefilter is off" in done.output
    # no database, but the tables are kept whatever the prefilter setting
    assert [p.name.split("-")[0] for p in (tmp_path / "cache").iterdir()] == ["tables"]

    rules = tmp_path / "rules.yaml"
    rules.write_text(
        "recognizers:\n  - name: Broken\n    supported_entity: BROKEN\n    supported_language: en\n"
        "    patterns:\n      - name: p\n        regex: '('\n        score: 0.9\n"
    )
    bad = tmp_path / "bad.yaml"
    bad.write_text(f"cache_dir: {tmp_path / 'cache-bad'}\ntiers:\n  recognizer_files: [{rules}]\n")
    done = CliRunner().invoke(main, ["config", "prefilter", "--config", str(bad)])
    assert done.exit_code == 1 and "invalid configuration" in done.output and "tiers:" in done.output
    assert done.exception is None or isinstance(done.exception, SystemExit)  # a message, no traceback
    assert not (tmp_path / "cache-bad").exists()
