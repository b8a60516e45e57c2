"""The SIEM event stream (``siem.sinks``): every audit record as a signed, numbered,
metadata-only JSON line, delivered to real receivers on loopback (webhook, syslog over TCP and
UDP, a file), through a receiver that is down for a while (nothing lost, order kept, the
signatures verify), across a gateway restart, and per tenant; ``tiergate audit verify-stream``
reports an edited, missing or reordered line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.stream_format import verify_lines
from gateway.cli import main as cli
from tests.gateway.conftest import base_config
from tests.support.harness import FakeUpstreams, GatewayHarness
from tests.support.siem_receivers import SyslogReceiver, WebhookReceiver, wait_for

KEY_ENV, KEY = "TIERGATE_TEST_SIEM_KEY", "siem-key-0d3c9a1e55b24f7d"
EMAIL = "jonas.weatherby@example.net"
PROMPT = f"SIEM-PROMPT-55e1 forward the contract to {EMAIL}"


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    monkeypatch.setenv("TIERGATE_TEST_HOOK_TOKEN", "hook-token-1")


def _config(fakes: FakeUpstreams, *sinks: dict[str, Any]) -> dict[str, Any]:
    return base_config(fakes, siem={"sinks": list(sinks), "key_env": KEY_ENV, "poll_interval_s": 0.05,
                                    "retry_initial_s": 0.05, "retry_max_s": 0.2})  # fmt: skip


def _ask(gw: GatewayHarness, key: str, n: int = 1) -> None:
    client = gw.openai(key)
    for _ in range(n):
        answer = client.chat.completions.create(model="chat", messages=[{"role": "user", "content": PROMPT}])
        assert answer.choices[0].message.content == "ok"


def _records(lines: list[str]) -> list[dict[str, Any]]:
    return [json.loads(line[line.index("{") :]) for line in lines]


def _chain_count(gw: GatewayHarness) -> int:
    gw.settle()
    (row,) = gw.rows("SELECT seq FROM audit_chain_head WHERE id = 1")
    return int(row["seq"])


def _check(lines: list[str], *, expect_records: int | None = None) -> list[dict[str, Any]]:
    report = verify_lines(lines, KEY.encode())
    assert report.ok, report.as_dict()
    records = _records(lines)
    assert [r["n"] for r in records] == list(range(1, len(records) + 1))  # in order, none missing
    seqs = [r["seq"] for r in records]
    assert seqs == sorted(seqs)
    if expect_records is not None:
        assert seqs == list(range(1, expect_records + 1))
    text = "\n".join(lines)
    assert "SIEM-PROMPT" not in text and EMAIL not in text and "jonas" not in text
    assert "fingerprint" not in text and "segment_fps" not in text
    return records


def test_webhook_down_for_a_while_loses_nothing(fakes: FakeUpstreams, sqlite_db: str, tmp_path: Path,
                                                classifier: Any) -> None:  # fmt: skip
    with WebhookReceiver() as hook:
        sink = {
            "name": "hook",
            "kind": "webhook",
            "url": hook.url,
            "headers_env": {"authorization": "TIERGATE_TEST_HOOK_TOKEN"},
            "batch_lines": 3,
        }
        with GatewayHarness(sqlite_db, tmp_path, _config(fakes, sink), classifier=classifier) as gw:
            key = gw.create_key()
            _ask(gw, key, 2)
            wait_for(lambda: len(hook.lines) >= _chain_count(gw), what="first records")
            hook.down()  # the port is closed: traffic must not notice
            _ask(gw, key, 3)
            wait_for(lambda: _failures(gw) >= 1, what="a refused delivery")
            hook.up()
            hook.status = 503  # up, but refusing: still nothing lost
            before = _failures(gw)
            _ask(gw, key, 1)
            wait_for(lambda: _failures(gw) > before, what="a 503")
            assert len(hook.lines) < _chain_count(gw)
            hook.status = 200
            total = _chain_count(gw)
            wait_for(lambda: len(hook.lines) >= total, what="every record after the outage")
        records = _check(hook.lines, expect_records=total)
    assert {r["type"] for r in records} == {"request", "outcome", "event"}
    assert any(r["type"] == "event" and r["kind"] == "key_created" for r in records)
    requests = [r for r in records if r["type"] == "request"]
    assert len(requests) == 6 and all(r["record"]["findings"].get("EMAIL_ADDRESS") == 1 for r in requests)
    assert all(r["tenant"] == "acme" and r["stream"] == "hook" for r in requests)
    outcomes = [r for r in records if r["type"] == "outcome"]
    assert all(o["tenant"] == "acme" and o["record"]["status"] == "ok" for o in outcomes)
    assert all(p["authorization"] == "hook-token-1" for p in hook.posts)


def _failures(gw: GatewayHarness, sink: str = "hook") -> float:
    import httpx

    for line in httpx.get(gw.url + "/metrics").text.splitlines():
        if line.startswith(f'tiergate_siem_delivery_failures_total{{sink="{sink}"}}'):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_syslog_tcp_down_and_udp(fakes: FakeUpstreams, sqlite_db: str, tmp_path: Path, classifier: Any) -> None:
    with SyslogReceiver("tcp") as tcp, SyslogReceiver("udp") as udp:
        sinks = [
            {"name": "tcp", "kind": "syslog", "host": "127.0.0.1", "port": tcp.port, "transport": "tcp"},
            {"name": "udp", "kind": "syslog", "host": "127.0.0.1", "port": udp.port, "transport": "udp"},
        ]
        with GatewayHarness(sqlite_db, tmp_path, _config(fakes, *sinks), classifier=classifier) as gw:
            key = gw.create_key()
            _ask(gw, key, 1)
            wait_for(lambda: len(tcp.messages) >= _chain_count(gw), what="tcp")
            tcp.down()
            _ask(gw, key, 2)
            wait_for(lambda: _failures(gw, "tcp") >= 1, what="a refused connection")
            tcp.up()
            total = _chain_count(gw)
            wait_for(lambda: len(tcp.messages) >= total and len(udp.messages) >= total, what="syslog")
        for received in (tcp.messages, udp.messages):
            _check(received, expect_records=total)
            # RFC 5424: <PRI>VERSION TIMESTAMP HOSTNAME APP-NAME PROCID MSGID SD MSG, facility 13.
            head = received[0].split(" ", 7)
            assert head[0] == "<109>1" and head[3] == "tiergate" and head[5] == "audit" and head[6] == "-"
    runner_file = tmp_path / "received.log"
    runner_file.write_text("\n".join(tcp.messages) + "\n")
    result = CliRunner().invoke(cli, ["audit", "verify-stream", str(runner_file), "--key-env", KEY_ENV])
    assert result.exit_code == 0, result.output
    assert "stream verifies" in result.output


def test_restart_with_sink_down_resumes(fakes: FakeUpstreams, sqlite_db: str, tmp_path: Path,
                                        classifier: Any) -> None:  # fmt: skip
    """Lines signed while the sink was down survive a restart in the outbox and are delivered by
    the next process, whose numbering and chain continue where the last one stopped."""
    hook = WebhookReceiver()  # down from the start
    cfg = _config(fakes, {"name": "hook", "kind": "webhook", "url": hook.url})
    with GatewayHarness(sqlite_db, tmp_path, cfg, classifier=classifier) as gw:
        key = gw.create_key()
        _ask(gw, key, 2)
        first = _chain_count(gw)
        wait_for(lambda: (tmp_path / "var/siem/hook/outbox.jsonl").stat().st_size > 0, what="outbox")
    with hook, GatewayHarness(sqlite_db, tmp_path, cfg, classifier=classifier) as gw:
        _ask(gw, key, 1)
        total = _chain_count(gw)
        assert total > first
        wait_for(lambda: len(hook.lines) >= total, what="delivery after restart")
    _check(hook.lines, expect_records=total)


def test_tenant_sink_gets_its_tenant_only(fakes: FakeUpstreams, sqlite_db: str, tmp_path: Path,
                                         classifier: Any) -> None:  # fmt: skip
    everything, acme_only = tmp_path / "all.jsonl", tmp_path / "acme.jsonl"
    cfg = _config(
        fakes,
        {"name": "all", "kind": "file", "path": str(everything)},
        {"name": "acme", "kind": "file", "path": str(acme_only), "tenant": "acme"},
    )
    with GatewayHarness(sqlite_db, tmp_path, cfg, classifier=classifier) as gw:
        acme, other = gw.create_key("acme"), gw.create_key("globex")
        _ask(gw, acme, 2)
        _ask(gw, other, 2)
        total = _chain_count(gw)
        wait_for(lambda: everything.exists() and len(everything.read_text().splitlines()) >= total, what="file")
        wait_for(lambda: acme_only.exists() and len(acme_only.read_text().splitlines()) >= 5, what="acme")
    _check(everything.read_text().splitlines(), expect_records=total)
    scoped = _check(acme_only.read_text().splitlines())
    # acme's key event, its 2 requests and their 2 outcomes; nothing of globex's.
    assert len(scoped) == 5 and {r["tenant"] for r in scoped} == {"acme"}
    assert "globex" not in acme_only.read_text()


def test_verify_stream_reports_tampering(tmp_path: Path) -> None:
    from audit.stream_format import StreamSigner

    signer = StreamSigner(KEY.encode(), "s")
    lines = [
        signer.sign({"type": "event", "seq": i, "kind": "key_created", "record": {"tenant": "acme"}}).decode()
        for i in range(1, 7)
    ]
    runner = CliRunner()

    def run(content: list[str]) -> Any:
        path = tmp_path / "stream.log"
        path.write_text("\n".join(content) + "\n")
        return runner.invoke(cli, ["audit", "verify-stream", str(path), "--key-env", KEY_ENV, "--format", "json"])

    ok = run(lines + [lines[-1]])  # a redelivered line is not tampering
    assert ok.exit_code == 0 and json.loads(ok.output)["repeated"] == 1
    edited = list(lines)
    edited[2] = edited[2].replace('"acme"', '"acmf"')
    out = run(edited)
    assert out.exit_code == 3 and json.loads(out.output)["bad_signature"] == [3]
    out = run(lines[:3] + lines[4:])
    assert out.exit_code == 3 and json.loads(out.output)["missing"] == [[4, 4]]
    out = run(lines[:2] + [lines[3], lines[2]] + lines[4:])
    assert out.exit_code == 3
    assert json.loads(out.output)["missing"] == [[3, 3]] and json.loads(out.output)["out_of_order"] == [4]
    out = run(lines[1:])  # the first line dropped: the stream starts at n 1
    assert out.exit_code == 3 and json.loads(out.output)["missing"] == [[1, 1]]
    path = tmp_path / "later.log"  # unless this file continues an earlier one
    path.write_text("\n".join(lines[3:]) + "\n")
    assert (
        runner.invoke(cli, ["audit", "verify-stream", str(path), "--key-env", KEY_ENV, "--first-n", "4"]).exit_code == 0
    )
    wrong_key = StreamSigner(b"another-key-of-16chars", "s").sign({"type": "event", "seq": 1}).decode()
    assert run([wrong_key]).exit_code == 3


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_any_single_deletion_or_edit_is_detected(data: st.DataObject) -> None:
    from audit.stream_format import StreamSigner

    signer = StreamSigner(KEY.encode(), "s")
    count = data.draw(st.integers(2, 12))
    lines = [
        signer.sign({"type": "outcome", "seq": i, "record": {"status": "ok", "http_status": 200}}).decode()
        for i in range(1, count + 1)
    ]
    assert verify_lines(lines, KEY.encode()).ok
    at = data.draw(st.integers(0, count - 1))
    deleted = lines[:at] + lines[at + 1 :]
    if at < count - 1:  # dropping the very last line is indistinguishable from "not sent yet"
        assert not verify_lines(deleted, KEY.encode()).ok
    line = lines[at]
    pos = data.draw(st.integers(0, len(line) - 1))
    char = data.draw(st.characters(codec="ascii", exclude_characters="\n\r"))
    edited = line[:pos] + char + line[pos + 1 :]
    if edited != line:
        assert not verify_lines(lines[:at] + [edited] + lines[at + 1 :], KEY.encode()).ok


def test_no_key_no_start(sqlite_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stream configured without its key refuses to start, naming the setting (fail closed:
    never an unsigned or silently missing stream); so does a sink URL in clear text elsewhere."""
    import asyncio

    from gateway.app import create_app
    from gateway.settings import ConfigError, load_settings
    from gateway.siem import SiemConfigError
    from tests.support.harness import SECRETS

    monkeypatch.delenv(KEY_ENV)
    settings = load_settings(secrets=SECRETS, state_dir=str(tmp_path / "var"),
                             audit={"url": sqlite_db, "checkpoint_dir": str(tmp_path / "cp")},
                             siem={"key_env": KEY_ENV, "sinks": [{"name": "f", "kind": "file",
                                                                  "path": str(tmp_path / "f")}]})  # fmt: skip
    app = create_app(settings)

    async def start() -> None:
        async with app.lifespan():
            pass

    with pytest.raises(BaseException) as err:
        asyncio.run(start())
    found: list[BaseException] = [err.value]
    while isinstance(found[-1], BaseExceptionGroup):  # the lifespan runs in a task group
        found.append(found[-1].exceptions[0])
    assert isinstance(found[-1], SiemConfigError) and "siem.key_env" in str(found[-1])
    with pytest.raises(ConfigError, match="siem.sinks.0.url"):
        load_settings(siem={"key_env": KEY_ENV, "sinks": [{"name": "h", "kind": "webhook",
                                                           "url": "http://siem.example.com/in"}]})  # fmt: skip
    with pytest.raises(ConfigError, match="siem.sinks.0"):
        load_settings(siem={"key_env": KEY_ENV, "sinks": [{"name": "s", "kind": "syslog"}]})
    with pytest.raises(ConfigError, match="siem"):
        load_settings(siem={"sinks": [{"name": "f", "kind": "file", "path": "x"}]})


def test_tls_syslog_and_https_webhook(fakes: FakeUpstreams, sqlite_db: str, tmp_path: Path,
                                      classifier: Any) -> None:  # fmt: skip
    """Syslog over TLS (RFC 5425) and an HTTPS webhook, each collector's certificate verified
    against ``ca_file``; a sink that does not trust the certificate delivers nothing (and keeps
    its lines) rather than sending in the clear or unverified."""
    from tests.support.tls import make_tls

    tls = make_tls(tmp_path / "tls")
    with SyslogReceiver("tls", tls=tls) as syslog, WebhookReceiver(tls=tls) as hook, \
            WebhookReceiver(tls=tls) as untrusted:  # fmt: skip
        sinks = [
            {
                "name": "tls",
                "kind": "syslog",
                "host": "127.0.0.1",
                "port": syslog.port,
                "transport": "tls",
                "ca_file": str(tls.ca_file),
            },
            {"name": "https", "kind": "webhook", "url": hook.url, "ca_file": str(tls.ca_file)},
            {"name": "hook", "kind": "webhook", "url": untrusted.url},
        ]  # the system CAs: not ours
        with GatewayHarness(sqlite_db, tmp_path, _config(fakes, *sinks), classifier=classifier) as gw:
            _ask(gw, gw.create_key(), 2)
            total = _chain_count(gw)
            wait_for(lambda: len(syslog.messages) >= total and len(hook.lines) >= total, what="tls delivery")
            wait_for(lambda: _failures(gw, "hook") >= 1, what="an untrusted certificate refused")
        _check(syslog.messages, expect_records=total)
        _check(hook.lines, expect_records=total)
        assert untrusted.lines == []
    assert (tmp_path / "var/siem/hook/outbox.jsonl").read_text().count("\n") == total
