"""The cross-tenant prefix-cache probe against fake engines with a prefix cache on 127.0.0.1.

A cache isolated by the per-tenant salt passes; the same cache probed with one salt for every
tenant (salting turned off) fails, as does an engine that ignores the salt; an engine that hides
cached tokens still shows the second tenant's head start in time to first token.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from engine import derive_cache_salt
from gateway.cli import main
from gateway.probes.plan import prefix_cache_plan
from gateway.probes.prefix_cache import PrefixCacheReport
from gateway.probes.runner import run_prefix_cache
from gateway.probes.settings import PrefixCacheSettings, ProbeSettings
from gateway.settings import UpstreamSettings
from gateway.upstream import UpstreamClient
from tests.support import FakeUpstream, serve
from tests.support.harness import SECRETS, fetch_rows
from tests.support.prefix_cache import PrefixCache

SALT_KEY = SECRETS["cache_salt_key"].encode()


def _engine(**kw: Any) -> tuple[FakeUpstream, PrefixCache]:
    fake = FakeUpstream(name="local", kind="onprem")
    cache = PrefixCache(lambda body: fake.prompt_tokens("/v1/chat/completions", body), **kw)
    fake.script = cache
    return fake, cache


def _probe(url: str, cfg: PrefixCacheSettings, kind: str = "onprem") -> PrefixCacheReport:
    up = UpstreamSettings(name="local", base_url=url + "/v1", kind=kind, max_tier=3 if kind == "onprem" else 2,
                          models={"chat": "local-chat"})  # fmt: skip

    async def run() -> PrefixCacheReport:
        client = UpstreamClient(up)
        try:
            plan = prefix_cache_plan(upstream="local", model="local-chat", cfg=cfg, budget=10**6)
            return await run_prefix_cache(client, plan, ProbeSettings(prefix_cache=cfg), salt_key=SALT_KEY)
        finally:
            await client.aclose()

    return asyncio.run(run())


def test_per_tenant_salt_passes() -> None:
    """Warm requests of the same tenant hit (the control), the other tenant's never does."""
    fake, cache = _engine()
    with serve(fake.app, lifespan="off") as server:
        report = _probe(server.url, PrefixCacheSettings(rounds=2, prefix_tokens=512))
    assert report.passed, report.detail()
    assert report.warm_cached_tokens >= 2 * 512 - 32 and report.cross_cached_tokens == 0
    assert report.reports_cached_tokens
    roles = [s.role for s in report.samples]
    assert roles == ["cold", "warm", "cross", "cold"] * 2
    a, b = derive_cache_salt(SALT_KEY, "tiergate-prefix-a"), derive_cache_salt(SALT_KEY, "tiergate-prefix-b")
    assert cache.salts == [a, a, b, b] * 2
    assert all(b["stream"] is True for b in fake.ledger.bodies())
    detail = json.dumps(report.detail())
    assert "TGPROBE" not in detail and "filler" not in detail


def test_salting_turned_off_fails() -> None:
    """With one salt for both tenants the second one reads the first one's cache: cross_cached,
    and its first token comes as soon as a warm one's."""
    fake, _cache = _engine()
    with serve(fake.app, lifespan="off") as server:
        report = _probe(server.url, PrefixCacheSettings(rounds=2, prefix_tokens=512, salting="shared"))
    assert not report.passed
    assert set(report.reasons) == {"cross_cached", "ttft_advantage"}
    assert report.cross_cached_tokens > 0 and report.ttft_advantage_s is not None and report.ttft_advantage_s > 0.1


def test_an_engine_ignoring_the_salt_fails() -> None:
    fake, _cache = _engine(isolate=False)
    with serve(fake.app, lifespan="off") as server:
        report = _probe(server.url, PrefixCacheSettings(rounds=1, prefix_tokens=256))
    assert "cross_cached" in report.reasons


def test_hidden_cache_still_shows_in_time_to_first_token() -> None:
    """A vendor that reports no cached tokens cannot be judged by content (so said), and a shared
    cache still shows as the second tenant's head start."""
    fake, _cache = _engine(isolate=False, report=False)
    with serve(fake.app, lifespan="off") as server:
        report = _probe(server.url, PrefixCacheSettings(rounds=2, prefix_tokens=256), kind="shared")
    assert set(report.reasons) == {"cached_tokens_unreported", "ttft_advantage"}
    assert all("cache_salt" not in b for b in fake.ledger.bodies())  # a vendor gets no salt


def test_prefix_cache_command_records_and_guards_the_budget(tmp_path: Path) -> None:
    fake, _cache = _engine()
    with serve(fake.app, lifespan="off") as server:
        cfg = {"upstreams": [{"name": "local", "base_url": server.url + "/v1", "kind": "onprem", "max_tier": 3,
                              "models": {"chat": "local-chat"}}],
               "audit": {"url": f"sqlite+aiosqlite:///{tmp_path / 'audit.db'}", "checkpoint_dir": str(tmp_path / "cp")},
               "secrets": SECRETS, "state_dir": str(tmp_path / "var"),
               "probes": {"prefix_cache": {"rounds": 1, "prefix_tokens": 256}}}  # fmt: skip
        path = tmp_path / "tiergate.yaml"
        path.write_text(yaml.safe_dump(cfg))
        runner = CliRunner()
        ok = runner.invoke(main, ["probe", "--config", str(path), "--upstream", "local", "--prefix-cache"])
        bad = runner.invoke(main, ["probe", "--config", str(path), "--upstream", "local", "--prefix-cache",
                                   "--salting", "shared"])  # fmt: skip
        sent = len(fake.ledger)
        over = runner.invoke(main, ["probe", "--config", str(path), "--upstream", "local", "--prefix-cache",
                                    "--max-tokens-per-run", "100"])  # fmt: skip
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout.splitlines()[0])["plan"]["requests"] == 4
    assert bad.exit_code == 1 and "cross_cached" in json.loads(bad.stdout.splitlines()[1])["reasons"]
    assert over.exit_code == 2 and len(fake.ledger) == sent == 8
    rows = fetch_rows(f"sqlite+aiosqlite:///{tmp_path / 'audit.db'}",
                      "SELECT detail FROM audit_events WHERE kind = 'prefix_cache_probe' ORDER BY seq")  # fmt: skip
    assert [json.loads(r["detail"])["passed"] for r in rows] == [True, False]
