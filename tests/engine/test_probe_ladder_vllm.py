"""The ladder and prefix-cache probes against the real hardened engine (session server, CPU vLLM).

The tiny model has random weights: it cannot repeat markers, so the ladder runs with
``require_echo: false`` (usage against our count through the model's own tokenizer, cross-talk
and empty answers are still judged), and its greedy choice is often a byte that decodes to
nothing: ``ignore_eos`` and a ``logit_bias`` towards "a" give every answer text. The engine
must serve every rung in its window and refuse the one over it with 400, a pass; its prefix cache
must not carry one tenant's prefix to another (per-tenant salt), and the probe must see that it
does once every tenant gets the same salt.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from gateway.probes.ladder import LadderReport
from gateway.probes.plan import ladder_plan, prefix_cache_plan
from gateway.probes.prefix_cache import PrefixCacheReport
from gateway.probes.runner import run_ladder, run_prefix_cache
from gateway.probes.settings import LadderSettings, PrefixCacheSettings, ProbeSettings
from gateway.settings import UpstreamSettings
from gateway.upstream import UpstreamClient
from tests.engine.conftest import MAX_MODEL_LEN, SALT_KEY, EngineServer

pytestmark = [pytest.mark.vllm, pytest.mark.timeout(900)]


def _upstream(engine: EngineServer, tiny_model: Path) -> UpstreamSettings:
    return UpstreamSettings(name="engine", base_url=engine.url + "/v1", kind="onprem", max_tier=3,
                            models={"chat": "tiny"}, context_window=MAX_MODEL_LEN,
                            tokenizer_file=tiny_model / "tokenizer.json", timeouts={"read": 300})  # fmt: skip


def _speaks(tiny_model: Path) -> dict[str, object]:
    vocab = json.loads((tiny_model / "tokenizer.json").read_text())["model"]["vocab"]
    return {"ignore_eos": True, "logit_bias": {str(vocab["a"]): 100}}


def test_ladder_passes_up_to_the_context_and_the_rung_over_it_is_refused(
    engine_server: EngineServer, tiny_model: Path
) -> None:
    cfg = LadderSettings(require_echo=False, max_tokens=16, request_extra=_speaks(tiny_model), concurrency=4)
    up = _upstream(engine_server, tiny_model)

    async def run() -> LadderReport:
        client = UpstreamClient(up)
        try:
            plan = ladder_plan(upstream="engine", model="tiny", context_window=MAX_MODEL_LEN, safe_prompt_tokens=None,
                               cfg=cfg, budget=100_000)  # fmt: skip
            return await run_ladder(client, plan, ProbeSettings(ladder=cfg), salt_key=SALT_KEY)
        finally:
            await client.aclose()

    report = asyncio.run(run())
    assert report.passed, [(r.rung.tokens, [(q.reasons, q.own_tokens, q.reported_tokens, q.status, q.error)
                                          for q in r.requests]) for r in report.rungs if not r.passed]  # fmt: skip
    tokens = [r.rung.tokens for r in report.rungs]
    assert tokens == [256, 512, 1024, MAX_MODEL_LEN - 16 - 96, MAX_MODEL_LEN + 64]
    for rung in report.rungs[:-1]:
        assert not rung.refused
        for q in rung.requests:
            # The engine counted the whole prompt: ours plus its chat template's few tokens.
            assert q.reported_tokens is not None and 0 < q.reported_tokens - q.own_tokens <= 32
    over = report.rungs[-1]
    assert over.rung.label == "over_context" and over.refused
    assert {(q.status, q.error) for q in over.requests} == {(400, "context_length_exceeded")}
    assert report.last_good_tokens == MAX_MODEL_LEN - 16 - 96


def _prefix(engine: EngineServer, tiny_model: Path, salting: str) -> PrefixCacheReport:
    # Timing on a shared 2-core machine is noisy: this test judges the cache by its content.
    cfg = PrefixCacheSettings(prefix_tokens=1024, rounds=2, salting=salting, ttft_noise_s=5.0,  # type: ignore[arg-type]  # salting is one of the literals, passed as a str
                              request_extra=_speaks(tiny_model))  # fmt: skip
    up = _upstream(engine, tiny_model)

    async def run() -> PrefixCacheReport:
        client = UpstreamClient(up)
        try:
            plan = prefix_cache_plan(upstream="engine", model="tiny", cfg=cfg, budget=100_000)
            return await run_prefix_cache(client, plan, ProbeSettings(prefix_cache=cfg), salt_key=SALT_KEY)
        finally:
            await client.aclose()

    return asyncio.run(run())


def test_prefix_cache_probe_passes_with_the_tenant_salt_and_fails_without(
    engine_server: EngineServer, tiny_model: Path
) -> None:
    salted = _prefix(engine_server, tiny_model, "tenant")
    assert salted.passed, salted.detail()
    assert salted.warm_cached_tokens >= 2 * 768  # whole 128-token blocks, both rounds: the cache is on
    assert salted.cross_cached_tokens == 0
    shared = _prefix(engine_server, tiny_model, "shared")
    assert "cross_cached" in shared.reasons and shared.cross_cached_tokens >= 2 * 768
