"""Isolation probes against real fake upstreams on 127.0.0.1: a correct one passes, planted
cross-talk, stale content and unprocessed prompts fail, and failures reach the audit log and metrics."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from prometheus_client import CollectorRegistry, generate_latest

from engine import derive_cache_salt
from gateway.cli import main
from gateway.probe import MARKER_RE, ProbeMetrics, probe_upstream, record_probe, run_scheduled
from gateway.probes.settings import ProbeSettings
from gateway.settings import UpstreamSettings
from gateway.upstream import UpstreamClient
from tests.faults.conftest import open_store
from tests.support import FakeUpstream, Scripted, serve
from tests.support.crosstalk import CrossTalk, echo, last_user_text
from tests.support.harness import SECRETS, fetch_rows

SALT_KEY = SECRETS["cache_salt_key"].encode()


def _client(url: str, kind: str = "shared", name: str = "vendor") -> UpstreamClient:
    settings = UpstreamSettings(name=name, base_url=url + "/v1", kind=kind, max_tier=3 if kind != "shared" else 2,
                                models={"chat": f"{name}-chat"})  # fmt: skip
    return UpstreamClient(settings)


def _probe(url: str, cfg: ProbeSettings, kind: str = "shared") -> Any:
    async def run() -> Any:
        client = _client(url, kind)
        try:
            return await probe_upstream(client, settings=cfg, salt_key=SALT_KEY)
        finally:
            await client.aclose()

    return asyncio.run(run())


def _markers(fake: FakeUpstream) -> list[str]:
    return [MARKER_RE.findall(last_user_text(r))[0] for r in fake.ledger.items()]


def test_probe_passes_against_a_correct_upstream() -> None:
    """Against an upstream that answers each request with its own prompt, every marker comes home."""
    fake = FakeUpstream(name="vendor", script=echo)
    with serve(fake.app, lifespan="off") as server:
        report = _probe(server.url, ProbeSettings(requests=40, concurrency=10))
    assert report.passed and report.reasons == ()
    assert (report.sent, report.answered, report.errors) == (40, 40, 0)
    assert report.crossed == () and report.missing == ()
    markers = _markers(fake)
    assert len(markers) == 40 and len(set(markers)) == 40  # one fresh marker per request
    assert {b["model"] for b in fake.ledger.bodies()} == {"vendor-chat"}
    assert all("cache_salt" not in b for b in fake.ledger.bodies())  # shared: no salt


def test_probe_fails_on_planted_crosstalk(db_url: str, tmp_path: Path) -> None:
    """Answers carrying another request's marker fail the probe, name the pair, and are recorded in
    the audit log (without any marker) and in the metrics."""
    leak = CrossTalk(every=4)
    fake = FakeUpstream(name="vendor", script=leak)
    with serve(fake.app, lifespan="off") as server:
        report = _probe(server.url, ProbeSettings(requests=24, concurrency=6))
    assert not report.passed and "crossed" in report.reasons
    assert leak.leaked == 6 and len(report.crossed) == 6 and report.foreign == 0
    arrival = _markers(fake)  # the fake leaked the previous arrival's text
    sent = {m: i for i, m in enumerate(arrival)}
    for c in report.crossed:
        assert c.source is not None and c.source != c.receiver
    # Each leaking answer also misses its own marker: both are reported.
    assert set(report.missing) == {c.receiver for c in report.crossed}
    assert len(sent) == 24

    registry = CollectorRegistry()
    metrics = ProbeMetrics(registry)

    async def record() -> None:
        store = await open_store(db_url, tmp_path)
        try:
            await record_probe(report, record_event=store.record_event, metrics=metrics)
        finally:
            await store.close()

    asyncio.run(record())
    rows = fetch_rows(db_url, "SELECT kind, detail FROM audit_events WHERE kind = 'isolation_probe'")
    assert len(rows) == 1
    detail = json.loads(rows[0]["detail"])
    assert detail["passed"] is False and detail["crossed"] == 6 and detail["upstream"] == "vendor"
    assert sorted(tuple(p) for p in detail["crossings"]) == sorted((c.receiver, c.source) for c in report.crossed)
    assert "TGPROBE" not in rows[0]["detail"]
    text = generate_latest(registry).decode()
    assert 'tiergate_probe_runs_total{result="fail",upstream="vendor"} 1.0' in text
    assert 'tiergate_probe_crossed_markers_total{upstream="vendor"} 6.0' in text
    assert 'tiergate_probe_last_passed{upstream="vendor"} 0.0' in text


def test_probe_fails_when_the_upstream_ignores_the_prompt() -> None:
    """An upstream answering fluent text that never saw the prompt (the placeholder case) fails as
    'missing'; a tolerance of max_missing lets a weak model's few misses through, no more."""
    answers = iter(range(1000))
    fake = FakeUpstream(name="vendor", script=lambda r: Scripted("Sure, here it is.") if next(answers) < 3
                        else echo(r))  # fmt: skip
    with serve(fake.app, lifespan="off") as server:
        strict = _probe(server.url, ProbeSettings(requests=12, concurrency=4))
        answers = iter(range(1000))
        tolerant = _probe(server.url, ProbeSettings(requests=12, concurrency=4, max_missing=3))
        answers = iter(range(1000))
        too_many = _probe(server.url, ProbeSettings(requests=12, concurrency=4, max_missing=2))
    assert strict.reasons == ("missing",) and len(strict.missing) == 3 and strict.crossed == ()
    assert tolerant.passed
    assert too_many.reasons == ("missing",)


def test_probe_flags_stale_content_from_an_earlier_run() -> None:
    """An answer carrying a marker of no request in this run (an earlier request's stale KV) fails as
    a crossing with an unknown source."""
    stale: list[str] = []

    def script(r: Any) -> Scripted:
        if stale and r.seq == 10:
            return Scripted(stale[0])
        return echo(r)

    fake = FakeUpstream(name="vendor", script=script)
    with serve(fake.app, lifespan="off") as server:
        first = _probe(server.url, ProbeSettings(requests=10, concurrency=5))
        stale.append(last_user_text(fake.ledger.items()[-1]))
        second = _probe(server.url, ProbeSettings(requests=10, concurrency=5))
    assert first.passed
    assert not second.passed and second.foreign == 1
    (crossing,) = second.crossed
    assert crossing.source is None


def test_probe_spreads_onprem_requests_over_tenant_salts() -> None:
    """On-prem probes come from several synthetic tenants, each with its own derived cache_salt."""
    fake = FakeUpstream(name="local", kind="onprem", script=echo)
    with serve(fake.app, lifespan="off") as server:
        report = _probe(server.url, ProbeSettings(requests=12, concurrency=4, tenants=3), kind="onprem")
    assert report.passed
    salts = {b["cache_salt"] for b in fake.ledger.bodies()}
    assert salts == {derive_cache_salt(SALT_KEY, f"tiergate-probe-{t}") for t in range(3)}


def test_probe_fails_when_the_upstream_is_down() -> None:
    """An upstream that cannot be reached has not been shown safe: the probe fails on errors."""
    fake = FakeUpstream(name="vendor", script=echo)
    with serve(fake.app, lifespan="off") as server:
        url = server.url
    report = _probe(url, ProbeSettings(requests=4, concurrency=2))
    assert report.reasons == ("errors",) and report.errors == 4 and report.answered == 0
    assert set(report.error_classes) == {"RetryableUpstreamError"}


def _cli_config(tmp_path: Path, url: str) -> Path:
    cfg = {
        "upstreams": [{"name": "vendor", "base_url": url + "/v1", "kind": "shared", "max_tier": 2,
                       "models": {"chat": "vendor-chat"}}],
        "audit": {"url": f"sqlite+aiosqlite:///{tmp_path / 'audit.db'}",
                  "checkpoint_dir": str(tmp_path / "cp")},
        "secrets": SECRETS,
        "state_dir": str(tmp_path / "var"),
    }  # fmt: skip
    path = tmp_path / "tiergate.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def test_probe_command_exit_status_audit_and_metrics_file(tmp_path: Path) -> None:
    """`tiergate probe` exits 0 on a correct upstream and 1 on cross-talk, records both runs as audit
    events and writes the result for a textfile collector."""
    fake = FakeUpstream(name="vendor", script=echo)
    with serve(fake.app, lifespan="off") as server:
        config = _cli_config(tmp_path, server.url)
        runner = CliRunner()
        ok = runner.invoke(main, ["probe", "--config", str(config), "--upstream", "vendor", "--requests", "8"])
        fake.script = CrossTalk(every=2)
        prom = tmp_path / "probe.prom"
        bad = runner.invoke(main, ["probe", "--config", str(config), "--upstream", "vendor", "--requests", "8",
                                   "--metrics-file", str(prom)])  # fmt: skip
        unknown = runner.invoke(main, ["probe", "--config", str(config), "--upstream", "nope"])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout.splitlines()[0])["passed"] is True
    assert bad.exit_code == 1
    report = json.loads(bad.stdout.splitlines()[0])
    assert report["passed"] is False and report["crossed"] == 4
    assert 'tiergate_probe_runs_total{result="fail",upstream="vendor"} 1.0' in prom.read_text()
    assert unknown.exit_code != 0 and "no upstream named" in unknown.output
    rows = fetch_rows(f"sqlite+aiosqlite:///{tmp_path / 'audit.db'}",
                      "SELECT detail FROM audit_events WHERE kind = 'isolation_probe' ORDER BY seq")  # fmt: skip
    assert [json.loads(r["detail"])["passed"] for r in rows] == [True, False]


def test_scheduled_probes_run_until_cancelled(tmp_path: Path) -> None:
    """The server's probe loop probes each configured upstream every interval and records each run;
    a round that fails (upstream gone) is recorded as failed and the loop keeps going."""
    good = FakeUpstream(name="vendor", script=echo)
    with serve(good.app, lifespan="off") as server:
        url = server.url
        events: list[tuple[str, dict[str, Any]]] = []
        registry = CollectorRegistry()
        metrics = ProbeMetrics(registry)
        rounds = 0

        async def record(kind: str, detail: dict[str, Any]) -> None:
            events.append((kind, detail))

        async def tick(_s: float) -> None:
            nonlocal rounds
            rounds += 1
            if rounds > 3:
                raise asyncio.CancelledError
            if rounds == 3:
                server.stop()  # the third round finds the upstream gone
            await asyncio.sleep(0)

        async def run() -> None:
            client = _client(url)
            try:
                with pytest.raises(asyncio.CancelledError):
                    await run_scheduled({"vendor": client}, ProbeSettings(interval_s=0.01, requests=4),
                                        record_event=record, metrics=metrics, salt_key=SALT_KEY, sleep=tick)  # fmt: skip
            finally:
                await client.aclose()

        asyncio.run(run())
    assert [d["passed"] for _k, d in events] == [True, True, False]
    assert {k for k, _d in events} == {"isolation_probe"}
    text = generate_latest(registry).decode()
    assert 'tiergate_probe_runs_total{result="pass",upstream="vendor"} 2.0' in text


def test_server_runs_scheduled_probes(tmp_path: Path, classifier: Any) -> None:
    """With probes.interval_s set, the running gateway probes its upstream on its own and records
    each run in the audit log and in /metrics."""
    import time

    import httpx

    from tests.support.harness import FakeUpstreams, GatewayHarness

    with FakeUpstreams(FakeUpstream(name="vendor", script=echo)) as fakes:
        cfg = {"upstreams": [{"name": "vendor", "base_url": fakes.base_url("vendor"), "kind": "shared",
                              "max_tier": 2, "models": {"chat": "vendor-chat"}}],
               "probes": {"interval_s": 0.2, "requests": 4, "concurrency": 2}}  # fmt: skip
        db = f"sqlite+aiosqlite:///{tmp_path / 'audit.db'}"
        with GatewayHarness(db, tmp_path, cfg, classifier=classifier) as gw:
            rows: list[dict[str, Any]] = []
            deadline = time.monotonic() + 30
            while len(rows) < 2 and time.monotonic() < deadline:
                time.sleep(0.2)
                rows = gw.rows("SELECT detail FROM audit_events WHERE kind = 'isolation_probe'")
            metrics = httpx.get(gw.url + "/metrics", timeout=10).text
    assert len(rows) >= 2 and all(json.loads(r["detail"])["passed"] for r in rows)
    assert 'tiergate_probe_runs_total{result="pass",upstream="vendor"}' in metrics
    assert len(fakes["vendor"].ledger) >= 8


def test_probe_settings_reject_unknown_upstreams() -> None:
    """probes.upstreams naming no configured upstream fails at start-up, naming the key."""
    from gateway.settings import ConfigError, load_settings

    with pytest.raises(ConfigError) as err:
        load_settings(None, upstreams=[{"name": "vendor", "base_url": "http://x/v1", "kind": "shared"}],
                      probes={"interval_s": 5, "upstreams": ["nope"]})  # fmt: skip
    assert "probes.upstreams" in str(err.value)


# ---- streaming mode --------------------------------------------------------------------------


def _split(script: Any, size: int = 7) -> Any:
    """``script``'s answers streamed in ``size``-character deltas, so every marker (28 characters)
    straddles several chunks and only a reader that joins the deltas can find it."""

    def run(r: Any) -> Scripted:
        answer = script(r)
        answer.chunks = [answer.content[i : i + size] for i in range(0, len(answer.content), size)]
        return answer

    return run


def _chunks_with_a_whole_marker(fake: FakeUpstream) -> int:
    return sum(1 for r in fake.ledger.items()
               for piece in _split(echo)(r).chunks or () if MARKER_RE.search(piece))  # fmt: skip


def test_streaming_probe_passes_against_a_correct_upstream() -> None:
    """Streamed answers whose markers are split across deltas are joined again: a correct upstream passes."""
    fake = FakeUpstream(name="vendor", script=_split(echo))
    with serve(fake.app, lifespan="off") as server:
        report = _probe(server.url, ProbeSettings(requests=24, concurrency=6, stream=True))
    assert report.passed, report.detail()
    assert (report.sent, report.answered, report.errors, report.missing) == (24, 24, 0, ())
    assert report.stream and report.detail()["stream"] is True
    assert all(b["stream"] is True for b in fake.ledger.bodies())
    assert _chunks_with_a_whole_marker(fake) == 0  # no single chunk could have satisfied the check


def test_streaming_probe_fails_on_planted_crosstalk() -> None:
    """Streamed answers carrying another request's marker split across deltas fail the probe as crossed."""
    leak = CrossTalk(every=4)
    fake = FakeUpstream(name="vendor", script=_split(leak))
    with serve(fake.app, lifespan="off") as server:
        report = _probe(server.url, ProbeSettings(requests=24, concurrency=6, stream=True))
    assert not report.passed and "crossed" in report.reasons
    assert leak.leaked == 6 and len(report.crossed) == 6 and report.foreign == 0
    assert all(c.source is not None and c.source != c.receiver for c in report.crossed)
    assert set(report.missing) == {c.receiver for c in report.crossed}
    assert report.errors == 0  # the leaking streams were well formed: content alone shows the leak


def test_streaming_probe_counts_cut_streams_as_failures() -> None:
    """A stream cut before [DONE] is a failed request, yet a marker it leaked before the cut still crosses."""
    leak = CrossTalk(every=3)

    def script(r: Any) -> Scripted:
        answer = _split(leak)(r)
        if r.seq == 2:  # the first leaking answer (third arrival): every delta, then cut before [DONE]
            answer.cut_after_chunks = len(answer.chunks or ()) + 1
        if r.seq == 4:
            answer.cut_after_chunks = 2  # role delta and one piece: own marker never completes
        return answer

    fake = FakeUpstream(name="vendor", script=script)
    with serve(fake.app, lifespan="off") as server:
        report = _probe(server.url, ProbeSettings(requests=6, concurrency=1, stream=True, max_errors=5))
    assert report.error_classes == {"IncompleteStream": 2}
    assert report.answered == 4 and report.reasons == ("crossed", "missing")
    assert {c.receiver for c in report.crossed} == {2, 5}  # the cut leak (2) and the whole one (5)
    assert report.missing == (5,)  # the cut requests (2, 4) are errors, not missing markers


def _sse_upstream(last_event: bytes) -> Any:
    """An upstream streaming each request's own marker back in one delta, then ``last_event``."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        (marker,) = MARKER_RE.findall(body.decode())
        delta = {"choices": [{"index": 0, "delta": {"content": marker}, "finish_reason": None}]}
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream")]})  # fmt: skip
        await send({"type": "http.response.body", "body": b"data: " + json.dumps(delta).encode() + b"\n\n",
                    "more_body": True})  # fmt: skip
        await send({"type": "http.response.body", "body": last_event})

    return app


@pytest.mark.parametrize(("last_event", "error_class"), [
    (b'data: {"error": {"message": "engine failed", "type": "server_error", "code": null}}\n\n'
     b"data: [DONE]\n\n", "StreamErrorEvent"),
    (b"data: {not json\n\ndata: [DONE]\n\n", "MalformedStreamEvent"),
    (b'data: {"choices": []}\n\n' * 250_000 + b"data: [DONE]\n\n", "StreamTooLong"),
], ids=["error-event", "unreadable-event", "endless"])  # fmt: skip
def test_streaming_probe_fails_on_error_unreadable_or_endless_streams(last_event: bytes, error_class: str) -> None:
    """An error event, an unreadable event or a stream past the size cap fails its request though its marker came."""
    with serve(_sse_upstream(last_event), lifespan="off") as server:
        report = _probe(server.url, ProbeSettings(requests=4, concurrency=2, stream=True))
    assert report.reasons == ("errors",) and report.error_classes == {error_class: 4}
    assert report.crossed == () and report.missing == ()


def test_probe_command_stream_option_and_setting(tmp_path: Path) -> None:
    """`tiergate probe --stream` (or probes.stream) passes a correct upstream and exits 1 on streamed cross-talk."""
    fake = FakeUpstream(name="vendor", script=_split(echo))
    with serve(fake.app, lifespan="off") as server:
        config = _cli_config(tmp_path, server.url)
        runner = CliRunner()
        base = ["probe", "--config", str(config), "--upstream", "vendor", "--requests", "8", "--no-record"]
        ok = runner.invoke(main, [*base, "--stream"])
        ok_bodies = fake.ledger.bodies()
        fake.script = _split(CrossTalk(every=2))
        bad = runner.invoke(main, [*base, "--stream"])
        cfg = yaml.safe_load(config.read_text())
        config.write_text(yaml.safe_dump({**cfg, "probes": {"stream": True}}))
        fake.ledger.clear()
        from_setting = runner.invoke(main, base)
        setting_bodies = fake.ledger.bodies()
        fake.ledger.clear()
        overridden = runner.invoke(main, [*base, "--no-stream"])
        plain_bodies = fake.ledger.bodies()
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout.splitlines()[0])["stream"] is True
    assert len(ok_bodies) == 8 and all(b["stream"] is True for b in ok_bodies)
    assert bad.exit_code == 1, bad.output
    report = json.loads(bad.stdout.splitlines()[0])
    assert report["passed"] is False and report["crossed"] == 4 and report["stream"] is True
    assert from_setting.exit_code == 1 and all(b["stream"] is True for b in setting_bodies)
    assert overridden.exit_code == 1 and all(b["stream"] is False for b in plain_bodies)
    assert json.loads(overridden.stdout.splitlines()[0])["stream"] is False
