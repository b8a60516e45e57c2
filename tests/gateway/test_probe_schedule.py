"""The server's ladder and prefix-cache loops (driven by an injected sleep) and the report's size."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, generate_latest

from gateway.probes.ladder import LadderReport, RequestResult, RungResult
from gateway.probes.plan import ladder_plan
from gateway.probes.schedule import scheduled_probe_tasks
from gateway.probes.settings import LadderSettings
from gateway.settings import load_settings
from gateway.upstream import UpstreamClient
from tests.support import FakeUpstream, serve
from tests.support.harness import SECRETS
from tests.support.incident import echo_markers
from tests.support.prefix_cache import PrefixCache


class _Events:
    def __init__(self) -> None:
        self.kinds: list[str] = []

    async def record_event(self, kind: str, detail: dict[str, Any]) -> int:
        json.dumps(detail)
        self.kinds.append(kind)
        return len(self.kinds)


def _run(settings: Any, rounds: int) -> tuple[_Events, str]:
    store = _Events()
    registry = CollectorRegistry()

    async def main() -> None:
        clients = {u.name: UpstreamClient(u) for u in settings.upstreams}
        ticks = 0
        done = asyncio.Event()

        async def sleep(_s: float) -> None:
            nonlocal ticks
            ticks += 1
            if ticks > rounds:
                done.set()
                await asyncio.Event().wait()  # park: the test cancels the task
            await asyncio.sleep(0)

        tasks = scheduled_probe_tasks(clients, settings, store, registry=registry, salt_key=b"k" * 32, sleep=sleep)
        await asyncio.wait_for(done.wait(), 60)
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for c in clients.values():
            await c.aclose()

    asyncio.run(main())
    return store, generate_latest(registry).decode()


def _settings(url: str, kind: str, probes: dict[str, Any]) -> Any:
    return load_settings(None, upstreams=[{"name": "u", "base_url": url + "/v1", "kind": kind,
                                           "max_tier": 3 if kind == "onprem" else 2, "models": {"chat": "c"},
                                           "context_window": 4096}],
                         probes=probes, secrets=SECRETS)  # fmt: skip


def test_scheduled_ladder_runs_every_round_and_skips_an_over_budget_plan() -> None:
    fake = FakeUpstream(name="u", script=echo_markers)
    with serve(fake.app, lifespan="off") as server:
        ok, text = _run(_settings(server.url, "shared", {"ladder": {"interval_s": 1, "rungs": [256, 1024]}}), 2)
        sent = len(fake.ledger)
        over, _ = _run(_settings(server.url, "shared", {"max_tokens_per_run": 100,
                                                         "ladder": {"interval_s": 1, "rungs": [256, 1024]}}), 2)  # fmt: skip
    assert ok.kinds == ["ladder_probe", "ladder_probe"] and sent == 8
    assert 'tiergate_ladder_runs_total{result="pass",upstream="u"} 2.0' in text
    assert over.kinds == [] and len(fake.ledger) == sent  # over budget: nothing sent, nothing recorded


def test_scheduled_prefix_cache_probes_on_prem_upstreams_by_default() -> None:
    fake = FakeUpstream(name="u", kind="onprem")
    fake.script = PrefixCache(lambda body: fake.prompt_tokens("/v1/chat/completions", body))
    with serve(fake.app, lifespan="off") as server:
        store, text = _run(_settings(server.url, "onprem", {"prefix_cache": {"interval_s": 1, "rounds": 1,
                                                                             "prefix_tokens": 128}}), 1)  # fmt: skip
    assert store.kinds == ["prefix_cache_probe"] and len(fake.ledger) == 4
    assert 'tiergate_prefix_cache_probe_last_passed{upstream="u"} 1.0' in text


def test_unknown_scheduled_upstreams_are_refused_at_start() -> None:
    with pytest.raises(Exception) as err:
        load_settings(None, upstreams=[{"name": "u", "base_url": "http://x/v1", "kind": "shared"}],
                      probes={"ladder": {"upstreams": ["nope"]}})  # fmt: skip
    assert "probes.ladder.upstreams" in str(err.value)


def test_a_large_ladder_report_fits_one_audit_event() -> None:
    """Twenty rungs of 64 failed requests each: counted whole, listed in part, under 64 kB."""
    cfg = LadderSettings(rungs=[100 * (i + 1) for i in range(20)], requests_per_rung=64)
    plan = ladder_plan(upstream="u", model="m", context_window=10**6, safe_prompt_tokens=None, cfg=cfg, budget=10**9)
    rungs = tuple(RungResult(r, tuple(RequestResult(i, j, r.tokens, "failed", ("crossed", "echo_missing",
                                                                               "prompt_tokens_low"), 1, 200)
                                      for j in range(64))) for i, r in enumerate(plan.rungs))  # fmt: skip
    crossings = tuple(((i, j), (i, (j + 1) % 64)) for i in range(20) for j in range(64))
    report = LadderReport("u", "m", datetime.now(UTC), 1.0, plan, rungs, crossings)
    body = json.dumps(report.detail(), sort_keys=True, separators=(",", ":"))
    assert len(body) < 64_000
    first = report.detail()["rungs"][0]
    assert first["sent"] == 64 and first["failed"] == 64 and len(first["requests"]) == 8


def test_config_check_warns_of_a_scheduled_ladder_over_budget(tmp_path: Any) -> None:
    import yaml
    from click.testing import CliRunner

    from gateway.cli import main

    cfg = {"upstreams": [{"name": "big", "base_url": "http://127.0.0.1:9/v1", "kind": "shared", "provider": "p",
                          "models": {"chat": "c"}, "context_window": 1_048_576}],
           "probes": {"ladder": {"interval_s": 3600}}, "secrets": SECRETS, "state_dir": str(tmp_path / "var"),
           "audit": {"url": f"sqlite+aiosqlite:///{tmp_path / 'a.db'}"}}  # fmt: skip
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    result = CliRunner().invoke(main, ["config", "check", "--config", str(path)])
    assert result.exit_code == 0, result.output
    assert "probes.ladder: the scheduled probe of big needs" in result.stderr and "never run" in result.stderr
    cfg["probes"]["max_tokens_per_run"] = 10**8
    path.write_text(yaml.safe_dump(cfg))
    assert "probes.ladder" not in CliRunner().invoke(main, ["config", "check", "--config", str(path)]).stderr
