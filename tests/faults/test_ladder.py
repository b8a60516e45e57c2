"""The long-context ladder probe against real fake vendors on 127.0.0.1.

The incident's shape (``tests.support.incident``): beyond N prompt tokens the vendor replaces the
prompt by one token and answers fluently from an earlier request's text, with HTTP 200. The ladder
must pass every rung below N and fail the first above it, naming why; a short isolation probe of
the same vendor passes.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from gateway.cli import main
from gateway.probe import MARKER_RE, probe_upstream
from gateway.probes.ladder import LadderReport
from gateway.probes.plan import OverBudget, ladder_plan
from gateway.probes.runner import run_ladder
from gateway.probes.settings import LadderSettings, ProbeSettings
from gateway.settings import UpstreamSettings
from gateway.upstream import UpstreamClient
from tests.support import FakeUpstream, Scripted, serve
from tests.support.crosstalk import last_user_text
from tests.support.harness import SECRETS, fetch_rows
from tests.support.incident import Incident, echo_markers

N = 3000
CONTEXT = 8192


def _upstream(url: str, **extra: Any) -> UpstreamSettings:
    return UpstreamSettings(name="vendor", base_url=url + "/v1", kind="shared", max_tier=2,
                            models={"chat": "vendor-chat"}, context_window=CONTEXT, **extra)  # fmt: skip


def _incident(usage: str = "placeholder", limit: int = N) -> FakeUpstream:
    fake = FakeUpstream(name="vendor")
    fake.script = Incident(limit, lambda body: fake.prompt_tokens("/v1/chat/completions", body), usage=usage)  # type: ignore[arg-type]  # Incident is called as the fake's script (tests/support/incident.py)
    return fake


def _climb(up: UpstreamSettings, cfg: LadderSettings, budget: int = 10**7) -> LadderReport:
    async def run() -> LadderReport:
        client = UpstreamClient(up)
        try:
            plan = ladder_plan(upstream=up.name, model="vendor-chat", context_window=up.context_window,
                               safe_prompt_tokens=up.safe_prompt_tokens, cfg=cfg, budget=budget)  # fmt: skip
            return await run_ladder(client, plan, ProbeSettings(ladder=cfg, max_tokens_per_run=budget), salt_key=None)
        finally:
            await client.aclose()

    return asyncio.run(run())


@pytest.mark.parametrize("usage", ["placeholder", "plausible"])
def test_ladder_passes_below_the_incident_length_and_fails_the_first_rung_above(usage: str) -> None:
    """Every rung below N passes; the first above fails, naming the reasons: with prompt_tokens 1
    the usage check fires too; with a plausible usage the markers alone show it."""
    fake = _incident(usage)
    with serve(fake.app, lifespan="off") as server:
        report = _climb(_upstream(server.url), LadderSettings())
    tokens = [r.rung.tokens for r in report.rungs]
    assert tokens == [256, 512, 1024, 2048, 4096, 8032, 8355]
    below = [r for r in report.rungs if r.rung.tokens < N]
    above = [r for r in report.rungs if r.rung.tokens > N]
    assert below and all(r.passed for r in below), [r.as_dict() for r in below]
    assert above and not any(r.passed for r in above)
    first = report.first_failed
    assert first is not None and first.rung.tokens == 4096
    expected = {"crossed", "echo_missing"} | ({"prompt_tokens_low"} if usage == "placeholder" else set())
    assert set(first.reasons) == expected
    assert report.last_good_tokens == 2048 and not report.passed
    # Every leaking answer carried an earlier request's marker: crossings name its source.
    assert report.crossings and all(src is not None and src != rx for rx, src in report.crossings)
    assert {rx[0] for rx, _src in report.crossings} == {4, 5, 6}
    detail = report.detail()
    assert detail["first_failed_tokens"] == 4096 and detail["last_good_tokens"] == 2048
    assert "TGPROBE" not in json.dumps(detail)  # no marker (or answer text) reaches the audit detail
    # Pure synthetic text, each request with its own three markers, the tokens as planned.
    bodies = fake.ledger.bodies()
    assert len(bodies) == 2 * len(tokens)
    markers = [MARKER_RE.findall(b["messages"][1]["content"]) for b in bodies]
    assert all(len(m) == 3 for m in markers) and len({x for m in markers for x in m}) == 3 * len(bodies)


def test_the_short_isolation_probe_misses_what_the_ladder_finds() -> None:
    """The same vendor passes the 48-token isolation probe every time: why the ladder exists."""
    fake = _incident()
    with serve(fake.app, lifespan="off") as server:

        async def run() -> Any:
            client = UpstreamClient(_upstream(server.url))
            try:
                fake.script = lambda r: Scripted(MARKER_RE.findall(last_user_text(r))[0]) \
                    if fake.prompt_tokens("/v1/chat/completions", r.body) <= N else Scripted("leak")  # fmt: skip
                return await probe_upstream(client, settings=ProbeSettings(requests=8))
            finally:
                await client.aclose()

        assert asyncio.run(run()).passed


def test_correct_vendor_passes_and_refuses_the_over_context_rung() -> None:
    """A correct vendor passes every rung; its 400 for the rung over the window is a pass, not a leak."""

    def script(r: Any) -> Scripted:
        if fake.prompt_tokens("/v1/chat/completions", r.body) + 64 > CONTEXT:
            return Scripted(status=400, error_body={"error": {"message": "too long", "type": "invalid_request_error",
                                                              "code": "context_length_exceeded"}})  # fmt: skip
        return echo_markers(r)

    fake = FakeUpstream(name="vendor", script=script)
    with serve(fake.app, lifespan="off") as server:
        report = _climb(_upstream(server.url), LadderSettings())
    assert report.passed, [r.as_dict() for r in report.rungs if not r.passed]
    over = report.rungs[-1]
    assert over.rung.label == "over_context" and over.refused
    assert {(q.status, q.error) for q in over.requests} == {(400, "context_length_exceeded")}
    assert report.last_good_tokens == 8032  # the top in-context rung


def test_a_refusal_inside_the_window_fails_its_rung() -> None:
    """A 400 for a prompt that fits the declared window is not a pass: the vendor cannot take it."""

    def script(r: Any) -> Scripted:
        if fake.prompt_tokens("/v1/chat/completions", r.body) > 5000:
            return Scripted(status=400, error_body={"error": {"message": "x", "code": "context_length_exceeded"}})
        return echo_markers(r)

    fake = FakeUpstream(name="vendor", script=script)
    with serve(fake.app, lifespan="off") as server:
        report = _climb(_upstream(server.url), LadderSettings())
    first = report.first_failed
    assert first is not None and first.rung.tokens == 8032 and first.reasons == ("rejected",)
    assert report.rungs[-1].passed and report.rungs[-1].refused  # the over-context one still passes


def test_empty_and_length_cut_answers_fail() -> None:
    """An empty answer fails its rung; cut off by finish_reason length it is named so."""

    def script(r: Any) -> Scripted:
        tokens = fake.prompt_tokens("/v1/chat/completions", r.body)
        if 400 < tokens < 700:
            return Scripted(content="", finish_reason="length")
        if 900 < tokens < 1200:
            return Scripted(content="")
        return echo_markers(r)

    fake = FakeUpstream(name="vendor", script=script)
    with serve(fake.app, lifespan="off") as server:
        report = _climb(_upstream(server.url), LadderSettings(rungs=[256, 512, 1024, 2048], over_context=False))
    assert [(r.rung.tokens, r.reasons) for r in report.rungs] == [
        (256, ()),
        (512, ("empty_length",)),
        (1024, ("empty",)),
        (2048, ()),
    ]
    assert report.last_good_tokens == 256


def test_rungs_around_safe_prompt_tokens_and_echo_optional() -> None:
    """With safe_prompt_tokens set, rungs sit just below and above it; an upstream that fails only
    above it fails there. Without require_echo a model that cannot copy still passes on usage."""
    fake = FakeUpstream(name="vendor", script=lambda r: Scripted("fluent text that repeats nothing"))
    with serve(fake.app, lifespan="off") as server:
        up = _upstream(server.url, safe_prompt_tokens=6000)
        strict = _climb(up, LadderSettings(over_context=False))
        lenient = _climb(up, LadderSettings(over_context=False, require_echo=False))
    labels = {r.rung.label: r.rung.tokens for r in strict.rungs}
    assert labels["below_safe"] == 6000 - 120 and labels["above_safe"] == 6000 + 120
    assert all(r.reasons == ("echo_missing",) for r in strict.rungs)
    assert lenient.passed


def test_ladder_command_plans_records_alarms_and_exits_1(tmp_path: Path) -> None:
    """`tiergate probe --ladder` prints the plan first, then the report; a failing ladder exits 1,
    and its run and each failed rung are audit events (the alarm names the rung)."""
    fake = _incident()
    with serve(fake.app, lifespan="off") as server:
        config = _config(tmp_path, server.url)
        prom = tmp_path / "ladder.prom"
        result = CliRunner().invoke(main, ["probe", "--config", str(config), "--upstream", "vendor", "--ladder",
                                           "--rungs", "512,2048,4096", "--metrics-file", str(prom)])  # fmt: skip
    assert result.exit_code == 1, result.output
    plan_line, report_line = result.stdout.splitlines()[:2]
    plan = json.loads(plan_line)["plan"]
    assert [r["tokens"] for r in plan["rungs"]] == [512, 2048, 4096] and plan["requests"] == 6
    report = json.loads(report_line)
    assert report["first_failed_tokens"] == 4096 and report["last_good_tokens"] == 2048
    rows = fetch_rows(f"sqlite+aiosqlite:///{tmp_path / 'audit.db'}",
                      "SELECT kind, detail FROM audit_events WHERE kind LIKE 'ladder%' ORDER BY seq")  # fmt: skip
    assert [r["kind"] for r in rows] == ["ladder_probe", "ladder_rung_failed"]
    alarm = json.loads(rows[1]["detail"])
    assert alarm["rung_tokens"] == 4096 and "crossed" in alarm["reasons"] and alarm["upstream"] == "vendor"
    text = prom.read_text()
    assert 'tiergate_ladder_rung_passed{rung="2048",upstream="vendor"} 1.0' in text
    assert 'tiergate_ladder_rung_passed{rung="4096",upstream="vendor"} 0.0' in text
    assert 'tiergate_ladder_rung_failures_total{reason="crossed",rung="4096",upstream="vendor"} 1.0' in text
    assert 'tiergate_ladder_first_failed_tokens{upstream="vendor"} 4096.0' in text


def _config(tmp_path: Path, url: str, **extra: Any) -> Path:
    cfg = {
        "upstreams": [{"name": "vendor", "base_url": url + "/v1", "kind": "shared", "max_tier": 2,
                       "provider": "examplecloud", "models": {"chat": "vendor-chat"}, "context_window": CONTEXT}],
        "audit": {"url": f"sqlite+aiosqlite:///{tmp_path / 'audit.db'}", "checkpoint_dir": str(tmp_path / "cp")},
        "secrets": SECRETS,
        "state_dir": str(tmp_path / "var"),
        **extra,
    }  # fmt: skip
    path = tmp_path / "tiergate.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


# ---- cost bound ------------------------------------------------------------------------------


def test_a_ladder_over_budget_does_not_start(tmp_path: Path) -> None:
    """Over probes.max_tokens_per_run nothing is sent, nothing recorded: the plan and the refusal
    are printed (exit 2). run_ladder refuses the same plan the same way."""
    fake = _incident()
    with serve(fake.app, lifespan="off") as server:
        config = _config(tmp_path, server.url, probes={"max_tokens_per_run": 5000})
        result = CliRunner().invoke(main, ["probe", "--config", str(config), "--upstream", "vendor", "--ladder"])
        with pytest.raises(OverBudget) as err:
            _climb(_upstream(server.url), LadderSettings(), budget=5000)
    assert result.exit_code == 2, result.output
    plan = json.loads(result.stdout.splitlines()[0])["plan"]
    assert plan["within_budget"] is False and plan["total_tokens"] > 5000 == plan["max_tokens_per_run"]
    assert "over probes.max_tokens_per_run" in result.stderr
    assert err.value.plan.total_tokens == plan["total_tokens"]
    assert len(fake.ledger) == 0
    assert not (tmp_path / "audit.db").exists()  # not even the audit log was opened


def test_dry_run_prints_the_plan_with_the_vendors_price(tmp_path: Path) -> None:
    """`--dry-run` states tokens and, from the vendor register, the price; it sends nothing."""
    fake = _incident()
    vendors = {"providers": {"examplecloud": {"price": {"input_per_million": "2.50", "output_per_million": "10",
                                                        "currency": "EUR"}}}}  # fmt: skip
    with serve(fake.app, lifespan="off") as server:
        config = _config(tmp_path, server.url, vendors=vendors)
        result = CliRunner().invoke(main, ["probe", "--config", str(config), "--upstream", "vendor", "--ladder",
                                           "--dry-run", "--rungs", "1000,2000"])  # fmt: skip
        no_price = CliRunner().invoke(main, ["probe", "--config", str(_config(tmp_path, server.url)), "--upstream",
                                             "vendor", "--ladder", "--dry-run", "--rungs", "1000,2000"])  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) == 1
    plan = json.loads(lines[0])["plan"]
    # Two requests per rung, each with its rung's tokens plus the template reserve, 64 output tokens.
    assert plan["prompt_tokens"] == 2 * (1000 + 96) + 2 * (2000 + 96) and plan["output_tokens"] == 4 * 64
    expected = (2.5 * plan["prompt_tokens"] + 10 * plan["output_tokens"]) / 1e6
    assert plan["currency"] == "EUR" and abs(float(plan["cost"]) - expected) < 1e-4
    assert json.loads(no_price.stdout.splitlines()[0])["plan"]["cost"] is None
    assert len(fake.ledger) == 0


# ---- streamed rungs --------------------------------------------------------------------------


def _chunked(script: Any, size: int = 7) -> Any:
    """``script``'s answers in ``size``-character deltas: every marker straddles several chunks."""

    def run(r: Any) -> Scripted:
        answer = script(r)
        answer.chunks = [answer.content[i : i + size] for i in range(0, len(answer.content), size)]
        return answer

    return run


def test_streamed_ladder_joins_deltas_reads_the_final_usage_and_finds_the_incident() -> None:
    """With ladder.stream the answers come as SSE with the usage in the last event: markers split
    across deltas are joined, and the incident shows the same way as in whole answers."""
    fake = _incident()
    fake.script = _chunked(fake.script)
    with serve(fake.app, lifespan="off") as server:
        report = _climb(_upstream(server.url), LadderSettings(rungs=[512, 2048, 4096], stream=True))
    bodies = fake.ledger.bodies()
    assert all(b["stream"] is True and b["stream_options"] == {"include_usage": True} for b in bodies)
    assert [r.passed for r in report.rungs] == [True, True, False]
    assert set(report.rungs[2].reasons) == {"crossed", "echo_missing", "prompt_tokens_low"}
    assert all(q.reported_tokens is not None for r in report.rungs for q in r.requests)


def test_a_cut_stream_fails_its_rung_and_still_counts_what_it_leaked() -> None:
    leak = _incident(limit=100)  # its script leaks every rung here; the fake below serves it cut

    def script(r: Any) -> Scripted:
        answer = _chunked(leak.script)(r)
        answer.cut_after_chunks = len(answer.chunks or ()) + 1  # every delta, then no [DONE]
        return answer

    fake = FakeUpstream(name="vendor", script=script)
    with serve(fake.app, lifespan="off") as server:
        report = _climb(_upstream(server.url), LadderSettings(rungs=[512, 1024], stream=True, concurrency=1))
    second = report.rungs[1]
    assert {q.error for q in second.requests} == {"IncompleteStream"}
    assert set(second.reasons) == {"crossed", "error"}  # an earlier request's marker came before the cut
