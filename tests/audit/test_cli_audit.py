"""`tiergate audit checkpoint | verify | purge` over a real database."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime

from click.testing import CliRunner
from sqlalchemy import text

from gateway.cli import main
from tests.audit.conftest import make_settings, open_store, outcome, request, write_cli_config


def _setup(db_url, tmp_path):
    async def body():
        store = await open_store(make_settings(db_url, tmp_path))
        try:
            for _ in range(5):
                # Written now, not at a fixed date: the CLI purges by the real clock, and these rows
                # must stay inside retention on whatever day the suite runs.
                rec = request(at=datetime.now(UTC))
                await store.record_request(rec)
                await store.record_outcome(outcome(rec.request_id))
        finally:
            await store.close()

    asyncio.run(body())
    return write_cli_config(tmp_path, db_url)


def test_verify_checkpoint_and_tamper(db_url, tmp_path):
    """verify exits 0 on a clean log and 3 naming the first bad seq after an UPDATE."""
    cfg = _setup(db_url, tmp_path)
    runner = CliRunner()
    res = runner.invoke(main, ["audit", "checkpoint", "--config", cfg])
    assert res.exit_code == 0 and "seq 10" in res.stdout
    res = runner.invoke(main, ["audit", "verify", "--config", cfg])
    assert res.exit_code == 0, res.output
    assert "OK" in res.stdout and "checkpoints matched: 1" in res.stdout

    async def tamper():
        store = await open_store(make_settings(db_url, tmp_path))
        try:
            async with store.engine.begin() as conn:
                await conn.execute(text("UPDATE audit_requests SET tier = 3 WHERE seq = 5"))
        finally:
            await store.close()

    asyncio.run(tamper())
    res = runner.invoke(main, ["audit", "verify", "--config", cfg])
    assert res.exit_code == 3 and "first bad record: seq 5 (modified)" in res.stdout
    res = runner.invoke(main, ["audit", "verify", "--config", cfg, "--format", "json"])
    assert res.exit_code == 3 and json.loads(res.stdout)["first_bad"]["seq"] == 5


def test_purge_command_with_nothing_old(sqlite_db, tmp_path):
    """purge on a fresh log deletes nothing and says so; the log still verifies."""
    cfg = _setup(sqlite_db, tmp_path)
    runner = CliRunner()
    res = runner.invoke(main, ["audit", "purge", "--config", cfg])
    assert res.exit_code == 0 and "nothing older than" in res.stdout
    assert runner.invoke(main, ["audit", "verify", "--config", cfg]).exit_code == 0


def test_verify_explains_an_interrupted_purge_and_purge_finishes_it(db_url, tmp_path):
    """verify exits 0 naming the leftover range of an interrupted purge; `audit purge` completes it."""
    from datetime import timedelta

    import pytest

    from tests.audit.conftest import Clock

    class Stop(Exception):
        pass

    def stop(done: int, through: int) -> None:
        raise Stop

    async def interrupt() -> None:
        # Seqs 1..12 are far past retention, 13..14 are recent (the CLI's clock is the real one).
        # The purge stops after its first batch of four.
        clock = Clock(datetime.now(UTC) - timedelta(days=400))
        store = await open_store(make_settings(db_url, tmp_path), clock)
        try:
            for _ in range(12):
                await store.record_request(request(at=clock.now))
            clock.now = datetime.now(UTC)
            for _ in range(2):
                await store.record_request(request(at=clock.now))
            with pytest.raises(Stop):
                await store.purge(batch_size=4, on_batch=stop)
        finally:
            await store.close()

    asyncio.run(interrupt())
    cfg = write_cli_config(tmp_path, db_url)
    runner = CliRunner()
    res = runner.invoke(main, ["audit", "verify", "--config", cfg])
    assert res.exit_code == 0, res.output
    assert "unfinished purge: records 5..12" in res.stdout and "OK" in res.stdout
    res = runner.invoke(main, ["audit", "verify", "--config", cfg, "--format", "json"])
    assert json.loads(res.stdout)["unfinished_purge"] == {"from_seq": 5, "through_seq": 12}
    res = runner.invoke(main, ["audit", "purge", "--config", cfg, "--batch-size", "4", "--progress"])
    assert res.exit_code == 0, res.output
    assert "purged 8 records (seq 5..12" in res.stdout
    assert res.stderr.splitlines() == [f"deleted through seq {n} of 12…" for n in (8, 12)]
    res = runner.invoke(main, ["audit", "verify", "--config", cfg])
    assert res.exit_code == 0 and "unfinished" not in res.stdout and "purged through seq 12" in res.stdout
