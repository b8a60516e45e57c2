"""Following the audit log for the SIEM stream, on SQLite and PostgreSQL: records in seq order
across requests, outcomes and events, metadata only; a stream over records purged before it read
them, or a seq missing from the middle of the log, carries a signed gap line, counts the loss and
still verifies; a full outbox pauses reading and loses nothing."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry
from sqlalchemy import text

from audit import Outcome
from audit.stream_format import verify_lines
from audit.tail import first_seq, head_seq, read_after
from gateway.settings import SiemSettings, SiemSinkSettings
from gateway.siem.streamer import SiemMetrics, SinkStream
from tests.audit.conftest import make_settings, open_store, request

KEY = b"tail-stream-key-0123456789"


class ListSink:
    def __init__(self) -> None:
        self.lines: list[str] = []

    async def deliver(self, lines: list[bytes]) -> None:
        self.lines.extend(line.decode() for line in lines)

    async def aclose(self) -> None:
        return None


async def _seed(store: Any) -> None:
    for i in range(3):
        rec = request(request_id=f"r{i}", tenant="acme" if i != 1 else "globex", findings={"EMAIL_ADDRESS": 1},
                      fingerprint="ab" * 32, segments=("cd" * 32,))  # fmt: skip
        await store.record_request(rec)
        await store.record_outcome(Outcome(f"r{i}", "ok", 200, 200, 10, 2, integrity_flag=i == 2))
    await store.record_event("key_created", {"key_id": "k9", "tenant": "acme", "max_tier": 3})


def _stream(store: Any, tmp_path: Path, registry: CollectorRegistry, sink: ListSink, **kw: Any) -> SinkStream:
    settings = SiemSettings(sinks=[SiemSinkSettings(name="s", kind="file", path=tmp_path / "x")], key_env="K",
                            hole_wait_s=0.2, **kw)  # fmt: skip
    return SinkStream(settings.sinks[0], settings, store.engine, KEY, tmp_path / "siem", sink, SiemMetrics(registry))


def test_read_after_in_seq_order(db_url: str, tmp_path: Path) -> None:
    async def run() -> None:
        store = await open_store(make_settings(db_url, tmp_path))
        try:
            await _seed(store)
            records = await read_after(store.engine, 0, 100)
            assert [r.seq for r in records] == list(range(1, 8)) and await head_seq(store.engine) == 7
            assert [r.type for r in records] == ["request", "outcome"] * 3 + ["event"]
            assert [r.tenant for r in records] == ["acme", "acme", "globex", "globex", "acme", "acme", "acme"]
            assert records[0].fields["findings"] == {"EMAIL_ADDRESS": 1} and records[0].fields["stripped"] is False
            assert "fingerprint" not in records[0].fields and "segment_fps" not in records[0].fields
            assert records[5].fields["integrity_flag"] is True and records[5].fields["upstream"] == "openai-shared"
            assert records[6].kind == "key_created"
            assert [r.seq for r in await read_after(store.engine, 3, 2)] == [4, 5]
            assert await first_seq(store.engine) == 1
        finally:
            await store.close()

    asyncio.run(run())


def test_gaps_are_signed_counted_and_verify(db_url: str, tmp_path: Path) -> None:
    registry = CollectorRegistry()

    async def run() -> list[str]:
        store = await open_store(make_settings(db_url, tmp_path))
        try:
            await _seed(store)
            async with store.engine.begin() as conn:  # as a purge would: the oldest records gone,
                await conn.execute(text("DELETE FROM audit_outcomes WHERE seq = 2"))
                await conn.execute(text("DELETE FROM audit_requests WHERE seq = 1"))
                # and one from the middle, as only tampering would
                await conn.execute(text("DELETE FROM audit_outcomes WHERE seq = 4"))
            sink = ListSink()
            stream = _stream(store, tmp_path, registry, sink)
            while await stream.fill():
                pass
            await stream.deliver()
            assert [line.count('"type":"gap"') for line in sink.lines] == [1, 0]  # purged gap, seq 3; waits at 4
            await asyncio.sleep(0.25)  # past hole_wait_s: the missing seq becomes a gap too
            while await stream.fill():
                pass
            await stream.deliver()
            return sink.lines
        finally:
            await store.close()

    lines = asyncio.run(run())
    report = verify_lines(lines, KEY)
    assert report.ok and report.last_n == len(lines)
    assert [(g["from_seq"], g["to_seq"], g["reason"]) for g in report.gaps] == [(1, 2, "purged"), (4, 4, "missing")]
    assert registry.get_sample_value("tiergate_siem_records_lost_total", {"sink": "s", "reason": "purged"}) == 2
    assert registry.get_sample_value("tiergate_siem_records_lost_total", {"sink": "s", "reason": "missing"}) == 1
    seqs = [int(line.split('"seq":')[1].split(",")[0]) for line in lines]
    assert seqs == [2, 3, 4, 5, 6, 7]


def test_full_outbox_pauses_and_loses_nothing(db_url: str, tmp_path: Path) -> None:
    async def run() -> tuple[int, list[str], int]:
        store = await open_store(make_settings(db_url, tmp_path))
        try:
            await _seed(store)
            for i in range(60):
                await store.record_event("probe_note", {"i": i, "tenant": "acme"})
            total = await head_seq(store.engine)
            sink = ListSink()
            stream = _stream(store, tmp_path, CollectorRegistry(), sink, max_queue_bytes=4096, read_batch=5)
            while await stream.fill():
                pass
            paused_at = stream.outbox.head.cursor
            await stream.deliver()
            while await stream.fill():
                await stream.deliver()
            await stream.deliver()
            return total, sink.lines, paused_at
        finally:
            await store.close()

    total, lines, paused_at = asyncio.run(run())
    assert paused_at < total  # reading stopped at the bound, before the end of the log
    report = verify_lines(lines, KEY)
    assert report.ok and len(lines) == total


def test_stream_command_once(sqlite_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`tiergate audit stream --once` (the stream outside the servers): delivers the log, again
    only what is new, and says so with exit 1 while a sink is down (the lines wait on disk)."""
    import yaml
    from click.testing import CliRunner

    from gateway.cli import main as cli
    from tests.audit.conftest import write_cli_config
    from tests.support.siem_receivers import WebhookReceiver

    monkeypatch.setenv("TIERGATE_TEST_SIEM_KEY", KEY.decode())

    async def seed() -> None:
        store = await open_store(make_settings(sqlite_db, tmp_path))
        try:
            await _seed(store)
        finally:
            await store.close()

    asyncio.run(seed())
    path = Path(write_cli_config(tmp_path, sqlite_db))
    out = tmp_path / "siem.jsonl"
    cfg = yaml.safe_load(path.read_text())
    cfg["siem"] = {"key_env": "TIERGATE_TEST_SIEM_KEY", "in_server": False,
                   "sinks": [{"name": "f", "kind": "file", "path": str(out)}]}  # fmt: skip
    path.write_text(yaml.safe_dump(cfg))
    runner = CliRunner()
    first = runner.invoke(cli, ["audit", "stream", "--once", "--config", str(path)])
    assert first.exit_code == 0, first.output
    assert "undelivered lines: 0" in first.output and len(out.read_text().splitlines()) == 7
    asyncio.run(_more(sqlite_db, tmp_path))
    again = runner.invoke(cli, ["audit", "stream", "--once", "--config", str(path)])
    assert again.exit_code == 0
    lines = out.read_text().splitlines()
    assert len(lines) == 8 and verify_lines(lines, KEY).ok  # only the new record, numbering continued
    hook = WebhookReceiver()  # never started
    cfg["siem"]["sinks"].append({"name": "hook", "kind": "webhook", "url": hook.url})
    path.write_text(yaml.safe_dump(cfg))
    down = runner.invoke(cli, ["audit", "stream", "--once", "--config", str(path)])
    assert down.exit_code == 1 and "undelivered lines: 8" in down.output
    assert (tmp_path / "state/siem/hook/outbox.jsonl").read_text().count("\n") == 8


async def _more(db_url: str, tmp_path: Path) -> None:
    store = await open_store(make_settings(db_url, tmp_path))
    try:
        await store.record_event("key_revoked", {"key_id": "k9", "tenant": "acme"})
    finally:
        await store.close()


def test_admin_changes_are_chained_events(sqlite_db: str, tmp_path: Path) -> None:
    """`tiergate admin` changes become audit events, so the stream carries them: who, their
    tenant, the change; never a password or its hash. A change that found nobody records nothing."""
    from click.testing import CliRunner

    from gateway.cli import main as cli

    runner = CliRunner()
    env = {"TIERGATE_STATE_DIR": str(tmp_path / "state")}
    password = "a very long password 42\n"

    def admin(*args: str) -> Any:
        return runner.invoke(cli, ["admin", *args, "--db-url", sqlite_db], input=password, env=env)

    assert admin("create-user", "bob", "--tenant", "acme", "--password-stdin").exit_code == 0
    assert admin("set-password", "bob", "--password-stdin").exit_code == 0
    assert admin("disable", "bob").exit_code == 0
    assert admin("enable", "bob").exit_code == 0
    assert admin("delete", "bob").exit_code == 0
    assert admin("delete", "nobody").exit_code != 0

    async def read() -> list[Any]:
        store = await open_store(make_settings(sqlite_db, tmp_path))
        try:
            return await read_after(store.engine, 0, 100)
        finally:
            await store.close()

    records = asyncio.run(read())
    assert [r.kind for r in records] == ["admin_created", "admin_password_set", "admin_disabled", "admin_enabled",
                                         "admin_deleted"]  # fmt: skip
    assert all(r.tenant == "acme" and r.fields["username"] == "bob" for r in records)
    text = json.dumps([r.as_dict() for r in records])
    assert "very long password" not in text and "argon2" not in text


def test_one_process_per_outbox(sqlite_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A second process started from the same config (another uvicorn worker, `tiergate audit
    stream` next to the servers) finds the sink's outbox locked and leaves that sink alone."""
    from gateway.settings import Settings
    from gateway.siem import build_streams, deliver_once
    from tests.support.harness import SECRETS

    monkeypatch.setenv("TIERGATE_TEST_SIEM_KEY", KEY.decode())
    settings = Settings(secrets=SECRETS, state_dir=str(tmp_path / "var"),
                        siem={"key_env": "TIERGATE_TEST_SIEM_KEY",
                              "sinks": [{"name": "f", "kind": "file", "path": str(tmp_path / "f.jsonl")}]})  # fmt: skip

    async def run() -> tuple[int, int, int]:
        store = await open_store(make_settings(sqlite_db, tmp_path))
        try:
            first = build_streams(settings, store, CollectorRegistry())
            second = build_streams(settings, store, CollectorRegistry())
            await deliver_once(first)  # closes its outboxes: the sink is free again
            third = build_streams(settings, store, CollectorRegistry())
            await deliver_once(third)
            return len(first), len(second), len(third)
        finally:
            await store.close()

    assert asyncio.run(run()) == (1, 0, 1)


def test_a_line_refused_for_good_is_skipped_and_counted(sqlite_db: str, tmp_path: Path) -> None:
    """A webhook that refuses one line with 413 (however it is retried) must not stall the
    stream: the batch is retried line by line, that line alone is skipped and counted, the rest
    arrive in order, and the receiver's check names the missing number."""
    from gateway.siem.sinks import WebhookSink
    from tests.support.siem_receivers import WebhookReceiver

    registry = CollectorRegistry()
    with WebhookReceiver() as hook:
        hook.reject = lambda body: b'"kind":"key_created"' in body

        async def run() -> None:
            store = await open_store(make_settings(sqlite_db, tmp_path))
            try:
                await _seed(store)
                await store.record_event("key_revoked", {"key_id": "k9", "tenant": "acme"})
                settings = SiemSettings(sinks=[SiemSinkSettings(name="s", kind="webhook", url=hook.url)],
                                        key_env="K")  # fmt: skip
                sink = WebhookSink(hook.url, headers={}, timeout_s=5)
                stream = SinkStream(settings.sinks[0], settings, store.engine, KEY, tmp_path / "siem", sink,
                                    SiemMetrics(registry))  # fmt: skip
                while await stream.fill():
                    pass
                await stream.deliver()
                await stream.aclose()
            finally:
                await store.close()

        asyncio.run(run())
    report = verify_lines(hook.lines, KEY)
    assert len(hook.lines) == 7 and report.missing == [(7, 7)] and not report.ok
    assert registry.get_sample_value("tiergate_siem_records_lost_total", {"sink": "s", "reason": "rejected"}) == 1
    assert registry.get_sample_value("tiergate_siem_delivery_failures_total", {"sink": "s"}) in (None, 0.0)
