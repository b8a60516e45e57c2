"""The guard's fast path: steps with nothing to check pass straight through, the others never do.

``TiergateKVGuard`` is driven here at vLLM's connector seam, as the scheduler and the model runner
call it, around a fake inner connector that records what it was asked and reports what a test
tells it to. A step that carries a load, a save or a held block must still be judged, hashed or
held: each test below fails if the pass-through were taken for such a step.
"""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest
import torch
from vllm.config import KVTransferConfig
from vllm.distributed.kv_transfer.kv_connector.v1.base import (
    KVConnectorBase_V1,
    KVConnectorMetadata,
    KVConnectorRole,
    KVConnectorTransferResults,
)
from vllm.v1.request import RequestStatus

from engine.pd.checksum import block_checksums
from engine.pd.guard import GuardMetadata, TiergateKVGuard
from engine.pd.records import RecordStore, TransferRecord
from engine.pd.settings import GuardSettings, guard_transfer_config

BS = 8
TID = "fastpath-transfer-0001"


class FakeInner(KVConnectorBase_V1):
    """Offers ``offer`` external tokens per request; reports what ``report`` holds once."""

    def __init__(self, vllm_config: Any, role: KVConnectorRole, kv_cache_config: Any) -> None:
        super().__init__(vllm_config=vllm_config, role=role, kv_cache_config=kv_cache_config)
        self.offer = (0, False)
        self.report = KVConnectorTransferResults()
        self.layer_calls: list[str] = []

    def get_num_new_matched_tokens(self, request: Any, num_computed_tokens: int) -> tuple[int, bool]:
        return self.offer

    def update_state_after_alloc(self, request: Any, blocks: Any, num_external_tokens: int) -> None:
        pass

    def build_connector_meta(self, scheduler_output: Any) -> KVConnectorMetadata:
        return KVConnectorMetadata()

    def start_load_kv(self, forward_context: Any, **kwargs: Any) -> None:
        pass

    def wait_for_layer_load(self, layer_name: str) -> None:
        self.layer_calls.append(f"load:{layer_name}")

    def save_kv_layer(self, layer_name: str, kv_layer: Any, attn_metadata: Any, **kwargs: Any) -> None:
        self.layer_calls.append(f"save:{layer_name}")

    def wait_for_save(self) -> None:
        pass

    def get_transfer_results(self, finished_req_ids: set[str]) -> KVConnectorTransferResults:
        out, self.report = self.report, KVConnectorTransferResults()
        return out


def _guard(tmp_path, role: str, side: KVConnectorRole) -> TiergateKVGuard:
    inner = {"kv_connector": "FakeInner", "kv_connector_module_path": __name__}
    settings = GuardSettings(inner=inner, record_dir=str(tmp_path / "records"))
    ktc = KVTransferConfig(**json.loads(guard_transfer_config(role, settings)))  # type: ignore[arg-type]  # a Literal role from a str
    config = SimpleNamespace(kv_transfer_config=ktc, cache_config=SimpleNamespace(block_size=BS),
                             parallel_config=SimpleNamespace(tensor_parallel_size=1))  # fmt: skip
    return TiergateKVGuard(config, side, SimpleNamespace(kv_cache_groups=[object()]))  # type: ignore[arg-type]  # the guard reads these fields only


def _pair(tmp_path, role: str) -> tuple[TiergateKVGuard, TiergateKVGuard, list[torch.Tensor]]:
    sched = _guard(tmp_path, role, KVConnectorRole.SCHEDULER)
    worker = _guard(tmp_path, role, KVConnectorRole.WORKER)
    gen = torch.Generator().manual_seed(7)
    layers = {f"layer.{i}": torch.randn(6, 1, BS, 8, generator=gen).to(torch.bfloat16) for i in range(2)}
    worker.register_kv_caches(layers)
    return sched, worker, [layers[k] for k in sorted(layers)]


def _request(rid: str, prompt: int, tid: str | None = TID) -> SimpleNamespace:
    params = {"tiergate_transfer_id": tid} if tid else None
    return SimpleNamespace(request_id=rid, kv_transfer_params=params, num_prompt_tokens=prompt,
                           status=RequestStatus.RUNNING)  # fmt: skip


def _blocks(ids: list[int]) -> SimpleNamespace:
    return SimpleNamespace(get_block_ids=lambda: (ids,))


def _output(new: list[SimpleNamespace] | None = None, scheduled: dict[str, int] | None = None) -> SimpleNamespace:
    cached = SimpleNamespace(req_ids=[], new_block_ids=[], resumed_req_ids=set(), num_computed_tokens=[])
    return SimpleNamespace(scheduled_new_reqs=new or [], scheduled_cached_reqs=cached,
                           num_scheduled_tokens=scheduled or {})  # fmt: skip


def _step(worker: TiergateKVGuard, meta: KVConnectorMetadata) -> KVConnectorTransferResults:
    """One model-runner step: bind, load, the per-layer hooks, save, collect, clear."""
    worker.bind_connector_metadata(meta)
    worker.start_load_kv(SimpleNamespace())
    for name in ("layer.0", "layer.1"):
        worker.wait_for_layer_load(name)
        worker.save_kv_layer(name, None, None)  # type: ignore[arg-type]  # the fake inner ignores them
    worker.wait_for_save()
    results = worker.get_transfer_results(set())
    worker.clear_connector_metadata()
    return results


def test_an_empty_step_passes_through_and_per_layer_hooks_are_the_inners(tmp_path) -> None:
    sched, worker, _ = _pair(tmp_path, "kv_consumer")
    meta = sched.build_connector_meta(_output())
    assert isinstance(meta, GuardMetadata) and not (meta.produce or meta.claims or meta.holds or meta.acks)
    reported = KVConnectorTransferResults()
    worker.inner.report = reported  # type: ignore[attr-defined]  # the fake inner's knob
    assert _step(worker, meta) is reported  # the inner's own object: the pass-through
    worker.inner.report = KVConnectorTransferResults(finished_sending={"x"})  # type: ignore[attr-defined]  # the fake inner's knob
    assert _step(worker, meta).finished_sending == {"x"}  # nothing held: passed on as it came
    assert worker.inner.layer_calls == ["load:layer.0", "save:layer.0", "load:layer.1", "save:layer.1"] * 2  # type: ignore[attr-defined]  # the fake inner's record
    assert worker.save_kv_layer == worker.inner.save_kv_layer  # no frame of the guard's per layer
    assert worker.get_block_ids_with_load_errors() == set()


@pytest.mark.parametrize("vouched", [False, True])
def test_a_step_with_a_load_is_judged(tmp_path, vouched: bool) -> None:
    """A claimed load is judged in the step that carries it: refused blocks reported and zeroed."""
    sched, worker, layers = _pair(tmp_path, "kv_consumer")
    sched.inner.offer = (2 * BS, False)  # type: ignore[attr-defined]  # the fake inner's knob
    request = _request("r1", 2 * BS + 1)
    assert sched.get_num_new_matched_tokens(request, 0) == (2 * BS, False)
    sched.update_state_after_alloc(request, _blocks([4, 2, 5]), 2 * BS)  # type: ignore[arg-type]  # a fake with the one method used
    if vouched:
        sums = block_checksums(layers, [4, 2], [BS, BS])
        RecordStore(tmp_path / "records").put_record(TID, 0, TransferRecord(BS, 2 * BS, tuple(sums)))
    before = [layer.clone() for layer in layers]
    meta = sched.build_connector_meta(_output())
    assert isinstance(meta, GuardMetadata) and len(meta.claims) == 1
    _step(worker, meta)
    errors = worker.get_block_ids_with_load_errors()
    assert errors == (set() if vouched else {4, 2})
    for layer, old in zip(layers, before, strict=True):
        zeroed = bool((layer[[4, 2]] == 0).all())
        assert zeroed != vouched
        assert torch.equal(layer[5], old[5])  # the block past the claim is never touched
    assert RecordStore(tmp_path / "records").acked(TID, "consumer", 1)
    # The next step carries nothing: nothing is judged again.
    _step(worker, sched.build_connector_meta(_output()))
    assert worker.get_block_ids_with_load_errors() == set()


def test_a_step_with_a_save_publishes_checksums(tmp_path) -> None:
    """The sender's step that computed prompt blocks writes their record before vLLM answers."""
    sched, worker, layers = _pair(tmp_path, "kv_producer")
    request = _request("p1", 12)
    sched.get_num_new_matched_tokens(request, 0)
    new = SimpleNamespace(req_id="p1", block_ids=([3, 1],), num_computed_tokens=0)
    meta = sched.build_connector_meta(_output([new], {"p1": 12}))
    assert isinstance(meta, GuardMetadata) and len(meta.produce) == 1
    store = RecordStore(tmp_path / "records")
    assert store.get_record(TID, 0) is None
    _step(worker, meta)
    assert store.get_record(TID, 0) == TransferRecord(BS, 12, tuple(block_checksums(layers, [3, 1], [BS, 4])))
    # A request without a transfer id is never hashed: the producer's steps pass through.
    sched.get_num_new_matched_tokens(_request("p2", 12, tid=None), 0)
    other = SimpleNamespace(req_id="p2", block_ids=([0],), num_computed_tokens=0)
    empty = sched.build_connector_meta(_output([other], {"p2": 12}))
    assert isinstance(empty, GuardMetadata) and not empty.produce


def test_held_blocks_are_held_while_the_inner_reports_nothing(tmp_path) -> None:
    """A request aborted mid-load keeps its blocks; released (reported) only after the peer acked,
    polled on steps where the inner connector itself reports nothing."""
    sched, worker, _ = _pair(tmp_path, "kv_consumer")
    sched.inner.offer = (BS, True)  # type: ignore[attr-defined]  # the fake inner's knob: an async load
    request = _request("r1", BS + 1)
    sched.get_num_new_matched_tokens(request, 0)
    sched.update_state_after_alloc(request, _blocks([1, 2]), BS)  # type: ignore[arg-type]  # a fake with the one method used
    _step(worker, sched.build_connector_meta(_output()))
    request.status = RequestStatus.FINISHED_ABORTED
    delay, _ = sched.request_finished(request, [])  # type: ignore[arg-type]  # the fake request has the fields read
    assert delay and sched.has_pending_push_work()
    meta = sched.build_connector_meta(_output())
    assert isinstance(meta, GuardMetadata) and len(meta.holds) == 1
    worker.inner.report = KVConnectorTransferResults(finished_recving={"r1"})  # type: ignore[attr-defined]  # the inner's early "finished"
    assert _step(worker, meta) == KVConnectorTransferResults()  # swallowed: the guard holds r1
    assert _step(worker, sched.build_connector_meta(_output())) == KVConnectorTransferResults()  # still held
    RecordStore(tmp_path / "records").ack(TID, "producer", 0)  # the sender is done with the transfer
    released = _step(worker, sched.build_connector_meta(_output()))
    assert released.finished_sending == {"r1"}
    assert RecordStore(tmp_path / "records").acked(TID, "consumer", 1)
    sched.update_connector_output(SimpleNamespace(finished_sending={"r1"}, finished_recving=None))  # type: ignore[arg-type]  # the two fields read
    assert not sched.has_pending_push_work()
