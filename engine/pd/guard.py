"""``TiergateKVGuard``: a vLLM v1 KV connector that wraps any other and hardens its transfers.

Enabled with ``--kv-transfer-config`` (``engine.pd.settings.guard_transfer_config`` builds it)::

    {"kv_connector": "TiergateKVGuard", "kv_connector_module_path": "engine.pd.guard",
     "kv_role": "kv_consumer", "kv_load_failure_policy": "fail",
     "kv_connector_extra_config": {"tiergate": {
         "inner": {"kv_connector": "NixlConnector", ...},     # the real transport
         "record_dir": "/shared/kv-records", "release_timeout_s": 30}}}

Every call vLLM makes goes to the inner connector; around it the guard adds, per request that
carries ``kv_transfer_params.tiergate_transfer_id`` (set by ``engine.pd.router``):

- sender (producer) workers hash each prompt block after the step that computed it and publish
  the checksums (``engine.pd.records``) inside that step, before vLLM can answer;
- receiver (consumer) workers judge each load (``engine.pd.verify``): the boundary check (no
  token counted as computed unless the sender vouched for it) and the checksums; a failed load
  is reported through ``get_block_ids_with_load_errors`` / ``failed_recving``, and vLLM's ``fail``
  policy (required: the guard refuses to start under ``recompute``) finishes the request with an
  error instead of decoding over the blocks. A request without a transfer id for which the inner
  connector offers external KV is refused the same way: nothing vouched for it;
- a request finished while its transfer is in flight (aborted mid-load, or aborted on the sender
  before the receiver acknowledged its read) keeps its blocks (``request_finished`` returns
  ``delay_free_blocks=True`` whatever the inner said) until the other side acknowledged or
  ``release_timeout_s`` passed; timed-out blocks are zeroed first (``engine.pd.release``). The
  inner connector's own "finished" for such a request is swallowed, so it cannot free them early.

Steps without work for the guard (no load or save of a transfer, nothing held, no acknowledgement
due: most decode steps) go straight to the inner connector: each method tests one or two
emptiness flags first, and the per-layer hooks are the inner connector's own bound methods.

Supported layouts: one KV cache group (no hybrid allocator), the standardized per-layer view
``[blocks, heads, block_size, channels]``, synchronous loads that complete in ``start_load_kv``
or asynchronous loads reported through ``get_finished``. Layer-pipelined synchronous loaders
would be judged before their data arrived, which fails closed (every such load is refused).
"""

from __future__ import annotations

import copy
import os
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from vllm.config.kv_transfer import KVTransferConfig
from vllm.distributed.kv_transfer.kv_connector.factory import KVConnectorFactory
from vllm.distributed.kv_transfer.kv_connector.v1.base import (
    KVConnectorBase_V1,
    KVConnectorMetadata,
    KVConnectorRole,
    KVConnectorTransferResults,
)
from vllm.v1.core.sched.output import SchedulerOutput
from vllm.v1.request import RequestStatus

from engine.pd.checksum import block_checksums, check_layout
from engine.pd.counters import GuardCounters
from engine.pd.records import RecordStore, TransferRecord, valid_transfer_id
from engine.pd.release import Deferral, DeferredReleases
from engine.pd.settings import GUARD_VERSION, PROTECTIONS, TRANSFER_ID_KEY, GuardSettings
from engine.pd.verify import LoadClaim, judge_load

if TYPE_CHECKING:
    from vllm.config import VllmConfig
    from vllm.forward_context import ForwardContext
    from vllm.v1.attention.backend import AttentionMetadata
    from vllm.v1.core.kv_cache_manager import KVCacheBlocks
    from vllm.v1.kv_cache_interface import KVCacheConfig
    from vllm.v1.outputs import KVConnectorOutput
    from vllm.v1.request import Request

__all__ = ["GuardMetadata", "GuardRefused", "TiergateKVGuard"]

_SWALLOW_MEMORY = 65536  # released ids whose late "finished" from the inner must still be dropped


class GuardRefused(RuntimeError):
    """The guard cannot protect this configuration; vLLM must not start with it."""


@dataclass(frozen=True, slots=True)
class _Produce:
    req_id: str
    transfer_id: str
    block_ids: tuple[int, ...]
    start: int  # prompt tokens computed before this step
    end: int  # prompt tokens computed after it


@dataclass(frozen=True, slots=True)
class _Hold:
    req_id: str
    transfer_id: str
    peer_role: str
    own_role: str
    zero_block_ids: tuple[int, ...]
    timeout_s: float
    inner_reports: bool  # the inner connector will still say "finished" for it (to be dropped)


@dataclass(frozen=True, slots=True)
class _Ack:
    req_id: str
    transfer_id: str
    role: str
    after_inner: bool  # wait until the inner connector reports the request finished


@dataclass
class GuardMetadata(KVConnectorMetadata):
    """Scheduler -> worker, per step: the inner connector's metadata plus the guard's jobs."""

    inner: KVConnectorMetadata
    produce: Sequence[_Produce] = ()
    claims: Sequence[tuple[LoadClaim, bool]] = ()  # (claim, loads async)
    holds: Sequence[_Hold] = ()
    acks: Sequence[_Ack] = ()


def _inner_config(vllm_config: VllmConfig, settings: GuardSettings) -> VllmConfig:
    outer = vllm_config.kv_transfer_config
    assert outer is not None
    inner = copy.copy(vllm_config)
    inner.kv_transfer_config = KVTransferConfig(
        **settings.inner,
        kv_role=outer.kv_role,
        engine_id=outer.engine_id,
        kv_load_failure_policy=outer.kv_load_failure_policy,
    )
    return inner


class TiergateKVGuard(KVConnectorBase_V1):
    """See the module docstring; the inner connector does every transfer."""

    def __init__(self, vllm_config: VllmConfig, role: KVConnectorRole, kv_cache_config: KVCacheConfig) -> None:
        super().__init__(vllm_config=vllm_config, role=role, kv_cache_config=kv_cache_config)
        ktc = self._kv_transfer_config
        self._settings = GuardSettings.from_extra(ktc.kv_connector_extra_config)
        if ktc.kv_load_failure_policy != "fail":
            raise GuardRefused("the KV guard needs kv_load_failure_policy 'fail': a refused load must fail the request")
        if len(kv_cache_config.kv_cache_groups) > 1:
            raise GuardRefused("the KV guard supports one KV cache group only (no hybrid allocator)")
        inner_config = _inner_config(vllm_config, self._settings)
        assert inner_config.kv_transfer_config is not None
        inner_cls = KVConnectorFactory.get_connector_class(inner_config.kv_transfer_config)
        self._inner: KVConnectorBase_V1 = inner_cls(inner_config, role, kv_cache_config)
        self._block_size = vllm_config.cache_config.block_size
        self._producer = bool(ktc.is_kv_producer)
        self._consumer = bool(ktc.is_kv_consumer)
        self._peer_ranks = self._settings.peer_ranks or vllm_config.parallel_config.tensor_parallel_size
        self._store = RecordStore(Path(self._settings.record_dir))
        state_dir = self._settings.state_dir or os.environ.get("TIERGATE_ENGINE_STATE_DIR")
        self._counters = GuardCounters(
            Path(state_dir) if state_dir else None,
            {
                "role": ("scheduler" if role == KVConnectorRole.SCHEDULER else "worker") + f":{ktc.kv_role}",
                "inner": str(self._settings.inner.get("kv_connector")),
                "protections": list(PROTECTIONS),
                "version": GUARD_VERSION,
            },
        )
        # scheduler side
        self._tids: dict[str, str] = {}
        self._local: dict[str, int] = {}
        self._async: dict[str, bool] = {}
        self._prompt_len: dict[str, int] = {}
        self._blocks: dict[str, list[int]] = {}
        self._claimed: dict[str, LoadClaim] = {}
        self._loading: set[str] = set()  # async loads not yet reported finished
        self._produced: set[str] = set()
        self._deferred: dict[str, bool] = {}  # held req_id -> the inner also delayed it
        # jobs for the next step's metadata; all empty on most steps (the fast path)
        self._q_claims: list[tuple[LoadClaim, bool]] = []
        self._q_holds: list[_Hold] = []
        self._q_acks: list[_Ack] = []
        # worker side
        self._layers: list[torch.Tensor] = []
        self._rank = 0
        self._records: dict[str, dict[int, int]] = {}
        self._record_tokens: dict[str, int] = {}
        self._pending_claims: dict[str, LoadClaim] = {}
        self._load_errors: set[int] = set()
        self._acks_waiting: dict[str, _Ack] = {}
        self._hold_info: dict[str, _Hold] = {}
        self._swallow: set[str] = set()
        self._swallow_order: deque[str] = deque()
        self._acked: set[tuple[str, str]] = set()  # (transfer id, role) this rank acknowledged
        self._acked_order: deque[tuple[str, str]] = deque()
        self._releases = DeferredReleases(
            acked=lambda tid, peer: self._store.acked(tid, peer, self._peer_ranks), zero=self._zero
        )
        # The guard never acts per layer (loads are judged whole, saves hashed after the step), so
        # vLLM's per-layer calls go to the inner connector without a frame of the guard's.
        self.wait_for_layer_load = self._inner.wait_for_layer_load  # type: ignore[method-assign]  # a bound pass-through, same signature
        self.save_kv_layer = self._inner.save_kv_layer  # type: ignore[method-assign]  # a bound pass-through, same signature

    @property
    def inner(self) -> KVConnectorBase_V1:
        return self._inner

    # ---- worker side ------------------------------------------------------------------------

    def register_kv_caches(self, kv_caches: dict[str, torch.Tensor]) -> None:
        self._inner.register_kv_caches(kv_caches)
        self._layers = [kv_caches[name] for name in sorted(kv_caches)]
        check_layout(self._layers, self._block_size)
        try:
            from vllm.distributed import get_tensor_model_parallel_rank

            self._rank = get_tensor_model_parallel_rank()
        except (AssertionError, RuntimeError):
            self._rank = 0

    def bind_connector_metadata(self, connector_metadata: KVConnectorMetadata) -> None:
        super().bind_connector_metadata(connector_metadata)
        meta = connector_metadata
        if not isinstance(meta, GuardMetadata):
            raise GuardRefused("KV guard worker got metadata it did not build")
        self._inner.bind_connector_metadata(meta.inner)
        if meta.claims or meta.holds or meta.acks:
            self._take_jobs(meta)

    def _take_jobs(self, meta: GuardMetadata) -> None:
        for claim, _ in meta.claims:
            self._pending_claims[claim.req_id] = claim
        for hold in meta.holds:
            self._hold_info[hold.req_id] = hold
            self._releases.hold(
                Deferral(
                    hold.req_id,
                    hold.transfer_id,
                    hold.peer_role,
                    hold.zero_block_ids,
                    self._releases.now() + hold.timeout_s,
                )  # fmt: skip
            )
            self._remember_swallow(hold.req_id)
        for ack in meta.acks:
            if ack.after_inner:
                self._acks_waiting[ack.req_id] = ack
            else:
                self._ack(ack.transfer_id, ack.role)

    def clear_connector_metadata(self) -> None:
        self._inner.clear_connector_metadata()
        super().clear_connector_metadata()

    def _ack(self, tid: str, role: str) -> None:
        """Acknowledge once: a judged load is acknowledged then, and again when its request ends."""
        key = (tid, role)
        if key in self._acked:
            return
        self._store.ack(tid, role, self._rank)
        self._acked.add(key)
        self._acked_order.append(key)
        while len(self._acked_order) > _SWALLOW_MEMORY:
            self._acked.discard(self._acked_order.popleft())

    def _checksum(self, block_ids: Iterable[int], counts: Iterable[int]) -> list[int]:
        return block_checksums(self._layers, list(block_ids), list(counts))

    def _zero(self, block_ids: tuple[int, ...]) -> None:
        if not block_ids:
            return
        for layer in self._layers:
            index = torch.tensor(block_ids, dtype=torch.long, device=layer.device)
            layer.index_fill_(0, index, 0)

    def _judge(self, claim: LoadClaim) -> bool:
        record = self._store.get_record(claim.transfer_id, self._rank) if claim.transfer_id else None
        verdict = judge_load(claim, record, self._checksum)
        if verdict.ok:
            self._counters.add("verified")
        elif verdict.outcome == "checksum":
            self._counters.add("checksum_mismatch")
        else:
            self._counters.add("boundary_refused")
        return verdict.ok

    def start_load_kv(self, forward_context: ForwardContext, **kwargs: Any) -> None:
        self._inner.start_load_kv(forward_context, **kwargs)
        meta = self._get_connector_metadata()
        assert isinstance(meta, GuardMetadata)
        if not meta.claims:
            return
        for claim, loads_async in meta.claims:
            if loads_async:
                continue  # judged when the inner connector reports the load finished
            self._pending_claims.pop(claim.req_id, None)
            if not self._judge(claim):
                self._load_errors.update(claim.loaded)
                # Never attend over them, not even in this step whose output vLLM discards.
                self._zero(claim.loaded)
            if claim.transfer_id:
                self._ack(claim.transfer_id, "consumer")

    # The two per-layer hooks: shadowed per instance by the inner's bound methods (see __init__).
    def wait_for_layer_load(self, layer_name: str) -> None:
        self._inner.wait_for_layer_load(layer_name)

    def save_kv_layer(self, layer_name: str, kv_layer: torch.Tensor, attn_metadata: AttentionMetadata,
                      **kwargs: Any) -> None:  # fmt: skip
        self._inner.save_kv_layer(layer_name, kv_layer, attn_metadata, **kwargs)

    def wait_for_save(self) -> None:
        self._inner.wait_for_save()  # type: ignore[no-untyped-call]  # vLLM leaves it unannotated
        meta = self._connector_metadata
        if not isinstance(meta, GuardMetadata) or not meta.produce:
            return
        bs = self._block_size
        spans: list[list[int]] = []
        for job in meta.produce:
            first, last = job.start // bs, -(-job.end // bs)
            spans.append(list(range(first, min(last, len(job.block_ids)))))
        # One call for the whole step: blocks of equal coverage are hashed in one gather per layer.
        every = [(job.block_ids[j], min(bs, job.end - j * bs)) for job, span in zip(meta.produce, spans) for j in span]
        all_sums = iter(self._checksum([b for b, _ in every], [n for _, n in every]))
        for job, indices in zip(meta.produce, spans, strict=True):
            last = -(-job.end // bs)
            sums = [next(all_sums) for _ in indices]
            book = self._records.setdefault(job.transfer_id, {})
            book.update(zip(indices, sums, strict=True))
            tokens = job.end if all(j in book for j in range(last)) else 0
            self._record_tokens[job.transfer_id] = tokens
            record = TransferRecord(bs, tokens, tuple(book[j] for j in range(last) if j in book))
            self._store.put_record(job.transfer_id, self._rank, record)
            self._counters.add("records_written")

    def get_finished(self, finished_req_ids: set[str]) -> tuple[set[str] | None, set[str] | None]:
        results = self.get_transfer_results(finished_req_ids)
        return results.finished_sending or None, results.finished_recving or None

    def get_transfer_results(self, finished_req_ids: set[str]) -> KVConnectorTransferResults:
        inner = self._inner.get_transfer_results(finished_req_ids)
        if not (inner.finished_sending or inner.finished_recving or self._pending_claims or self._acks_waiting
                or self._releases):  # fmt: skip
            return inner  # nothing finished, nothing to judge, acknowledge or release
        sending, recving, failed = set(inner.finished_sending), set(inner.finished_recving), set(inner.failed_recving)
        # The inner connector may not free what the guard holds, early or late; a held request's
        # load is not judged either (its "finished" may come before the data).
        swallowed = (sending | recving) & self._swallow
        sending -= swallowed
        recving -= swallowed
        failed -= swallowed
        for rid in recving:
            claim = self._pending_claims.pop(rid, None)
            if claim is None:
                continue
            if rid not in failed and not self._judge(claim):
                failed.add(rid)
                self._zero(claim.loaded)
            if claim.transfer_id:
                self._ack(claim.transfer_id, "consumer")
        for rid in sending | recving:
            ack = self._acks_waiting.pop(rid, None)
            if ack is not None:
                self._ack(ack.transfer_id, ack.role)
        for rid, outcome in self._releases.poll():
            self._counters.add(f"deferred_{outcome}")
            hold = self._hold_info.pop(rid)
            self._ack(hold.transfer_id, hold.own_role)
            self._pending_claims.pop(rid, None)
            sending.add(rid)
        return KVConnectorTransferResults(finished_sending=sending, finished_recving=recving, failed_recving=failed)

    def _remember_swallow(self, rid: str) -> None:
        self._swallow.add(rid)
        self._swallow_order.append(rid)
        while len(self._swallow_order) > _SWALLOW_MEMORY:
            self._swallow.discard(self._swallow_order.popleft())

    def get_block_ids_with_load_errors(self) -> set[int]:
        errors = self._inner.get_block_ids_with_load_errors()
        if not self._load_errors:
            return errors
        errors = errors | self._load_errors
        self._load_errors = set()
        return errors

    # ---- scheduler side ---------------------------------------------------------------------

    def bind_kv_cache_manager(self, kv_cache_manager: Any) -> None:
        super().bind_kv_cache_manager(kv_cache_manager)
        self._inner.bind_kv_cache_manager(kv_cache_manager)

    def bind_gpu_block_pool(self, gpu_block_pool: Any) -> None:
        self._inner.bind_gpu_block_pool(gpu_block_pool)

    def get_num_new_matched_tokens(self, request: Request, num_computed_tokens: int) -> tuple[int | None, bool]:
        rid = request.request_id
        tid = (request.kv_transfer_params or {}).get(TRANSFER_ID_KEY)
        if isinstance(tid, str) and valid_transfer_id(tid):
            self._tids[rid] = tid
        self._prompt_len[rid] = request.num_prompt_tokens
        self._local[rid] = num_computed_tokens
        count, load_async = self._inner.get_num_new_matched_tokens(request, num_computed_tokens)
        self._async[rid] = load_async
        return count, load_async

    def update_state_after_alloc(self, request: Request, blocks: KVCacheBlocks, num_external_tokens: int) -> None:
        self._inner.update_state_after_alloc(request, blocks, num_external_tokens)
        rid = request.request_id
        if num_external_tokens <= 0 or rid in self._claimed:
            return
        local = self._local.get(rid, 0)
        claim = LoadClaim(
            req_id=rid,
            transfer_id=self._tids.get(rid),
            block_ids=tuple(blocks.get_block_ids()[0]),
            first_block=local // self._block_size,
            claimed_tokens=local + num_external_tokens,
            block_size=self._block_size,
        )
        self._claimed[rid] = claim
        loads_async = self._async.get(rid, False)
        if loads_async:
            self._loading.add(rid)
        self._q_claims.append((claim, loads_async))

    def build_connector_meta(self, scheduler_output: SchedulerOutput) -> KVConnectorMetadata:
        inner = self._inner.build_connector_meta(scheduler_output)
        produce = self._produce_jobs(scheduler_output) if self._producer and self._tids else ()
        if not (produce or self._q_claims or self._q_holds or self._q_acks):
            return GuardMetadata(inner)
        meta = GuardMetadata(inner, produce, self._q_claims, self._q_holds, self._q_acks)
        self._q_claims, self._q_holds, self._q_acks = [], [], []
        return meta

    def _produce_jobs(self, so: SchedulerOutput) -> list[_Produce]:
        jobs: list[_Produce] = []

        def job(rid: str, start: int) -> None:
            tid, end = (
                self._tids.get(rid),
                min(start + so.num_scheduled_tokens.get(rid, 0), self._prompt_len.get(rid, 0)),
            )
            if tid is not None and end > start:
                jobs.append(_Produce(rid, tid, tuple(self._blocks[rid]), start, end))
                self._produced.add(rid)

        for new in so.scheduled_new_reqs:
            if new.req_id in self._tids:
                self._blocks[new.req_id] = list(new.block_ids[0])
                job(new.req_id, new.num_computed_tokens)
        cached = so.scheduled_cached_reqs
        for i, rid in enumerate(cached.req_ids):
            if rid not in self._tids or rid not in self._blocks:
                continue
            added = cached.new_block_ids[i]
            if added is not None:
                if rid in cached.resumed_req_ids:
                    self._blocks[rid] = list(added[0])
                else:
                    self._blocks[rid].extend(added[0])
            job(rid, cached.num_computed_tokens[i])
        return jobs

    def request_finished(self, request: Request, block_ids: list[int]) -> tuple[bool, dict[str, Any] | None]:
        inner_delay, params = self._inner.request_finished(request, block_ids)
        rid = request.request_id
        tid = self._tids.pop(rid, None)
        claim = self._claimed.pop(rid, None)
        produced = rid in self._produced
        loading = rid in self._loading
        for book in (self._local, self._async, self._prompt_len, self._blocks):
            book.pop(rid, None)
        self._produced.discard(rid)
        self._loading.discard(rid)
        if tid is None:
            return inner_delay, params
        aborted = request.status == RequestStatus.FINISHED_ABORTED
        if claim is not None:
            own, peer = "consumer", "producer"
            in_flight = loading or (aborted and not self._store.acked(tid, peer, self._peer_ranks))
            zero_from = claim.first_block
        elif produced:
            own, peer = "producer", "consumer"
            in_flight = aborted and not self._store.acked(tid, peer, self._peer_ranks)
            zero_from = 0
        else:
            return inner_delay, params
        if not in_flight:
            self._q_acks.append(_Ack(rid, tid, own, after_inner=inner_delay))
            return inner_delay, params
        # A receiver's transfer targets the blocks it claimed, which vLLM's list (blocks of computed
        # tokens) may not cover yet while the load is in flight.
        at_risk = list(dict.fromkeys([*block_ids[zero_from:], *(claim.loaded if claim is not None else ())]))
        exclusive = tuple(at_risk) if self._kv_cache_manager is None else self._exclusive(at_risk)
        if self._kv_cache_manager is not None:
            # Their contents may be rewritten by the stale transfer: never a prefix-cache hit again.
            self._kv_cache_manager.evict_blocks(set(exclusive))
        self._deferred[rid] = inner_delay or loading
        self._q_holds.append(
            _Hold(
                rid, tid, peer, own, exclusive, self._settings.release_timeout_s, inner_reports=inner_delay or loading
            )
        )
        return True, params

    def _exclusive(self, block_ids: list[int]) -> tuple[int, ...]:
        """Blocks only this request holds; shared (prefix-cached in use) ones are not zeroed."""
        assert self._kv_cache_manager is not None
        blocks = self._kv_cache_manager.block_pool.blocks
        return tuple(b for b in block_ids if blocks[b].ref_cnt <= 1)

    def update_connector_output(self, connector_output: KVConnectorOutput) -> None:
        if not (connector_output.finished_sending or connector_output.finished_recving):
            self._inner.update_connector_output(connector_output)
            return
        done = set(connector_output.finished_sending or ()) | set(connector_output.finished_recving or ())
        self._loading -= set(connector_output.finished_recving or ())
        ours = {rid for rid in done if rid in self._deferred and not self._deferred[rid]}
        for rid in done:
            self._deferred.pop(rid, None)
        if ours and connector_output.finished_sending:
            # The inner connector never delayed these: it must not hear of their release.
            filtered = copy.copy(connector_output)
            filtered.finished_sending = set(connector_output.finished_sending) - ours
            connector_output = filtered
        self._inner.update_connector_output(connector_output)

    def has_pending_push_work(self) -> bool:
        # Held requests are finished: without this vLLM would stop stepping and never release them.
        return bool(self._deferred) or bool(self._q_holds) or self._inner.has_pending_push_work()

    # ---- everything else goes to the inner connector ----------------------------------------

    @property
    def requires_kv_delivery(self) -> bool:
        return self._inner.requires_kv_delivery

    def get_mem_pool_context(self) -> Any:
        return self._inner.get_mem_pool_context()

    def set_host_xfer_buffer_ops(self, copy_operation: Any) -> None:
        self._inner.set_host_xfer_buffer_ops(copy_operation)

    def finish_forward(self) -> None:
        self._inner.finish_forward()

    def reset_capture_state(self) -> None:
        self._inner.reset_capture_state()

    def handle_preemptions(self, kv_connector_metadata: KVConnectorMetadata) -> None:
        inner = (
            kv_connector_metadata.inner if isinstance(kv_connector_metadata, GuardMetadata) else kv_connector_metadata
        )
        self._inner.handle_preemptions(inner)

    def shutdown(self) -> None:
        self._inner.shutdown()  # type: ignore[no-untyped-call]  # vLLM leaves it unannotated

    def get_kv_connector_stats(self) -> Any:
        return self._inner.get_kv_connector_stats()

    def get_kv_connector_kv_cache_events(self) -> Any:
        return self._inner.get_kv_connector_kv_cache_events()

    def get_handshake_metadata(self) -> Any:
        return self._inner.get_handshake_metadata()

    def build_connector_worker_meta(self) -> Any:
        return self._inner.build_connector_worker_meta()

    def get_loaded_kv_cache_group_ids(self, request: Request) -> tuple[int, ...]:
        return self._inner.get_loaded_kv_cache_group_ids(request)

    def get_external_cache_hit_sources(self, request: Request, num_external_tokens: int) -> Any:
        return self._inner.get_external_cache_hit_sources(request, num_external_tokens)

    def on_new_request(self, request: Request) -> None:
        self._inner.on_new_request(request)

    def register_finished_partial_tail(self, request: Request, block_ids: Any, partial_tail_offloads: Any) -> bool:
        return self._inner.register_finished_partial_tail(request, block_ids, partial_tail_offloads)

    def take_events(self) -> Iterable[Any]:
        return self._inner.take_events()

    def has_pending_block_frees(self) -> bool:
        return self._inner.has_pending_block_frees()

    def get_finished_count(self) -> int | None:
        return self._inner.get_finished_count()

    def set_xfer_handshake_metadata(self, metadata: Any) -> None:
        self._inner.set_xfer_handshake_metadata(metadata)

    def set_xfer_handshake_metadata_pp_aware(self, metadata: Any) -> None:
        self._inner.set_xfer_handshake_metadata_pp_aware(metadata)

    def reset_cache(self) -> bool | None:
        return self._inner.reset_cache()

    @classmethod
    def _inner_class(cls, extra_config: dict[str, Any]) -> type[KVConnectorBase_V1]:
        settings = GuardSettings.from_extra(extra_config)
        probe = KVTransferConfig(**settings.inner, kv_role="kv_both")  # the role does not pick the class
        return KVConnectorFactory.get_connector_class(probe)

    @classmethod
    def get_required_kvcache_layout(cls, vllm_config: VllmConfig) -> str | None:
        ktc = vllm_config.kv_transfer_config
        assert ktc is not None
        return cls._inner_class(ktc.kv_connector_extra_config).get_required_kvcache_layout(vllm_config)

    @classmethod
    def requires_piecewise_for_cudagraph(cls, extra_config: dict[str, Any]) -> bool:
        inner = GuardSettings.from_extra(extra_config).inner
        return cls._inner_class(extra_config).requires_piecewise_for_cudagraph(
            inner.get("kv_connector_extra_config", {})
        )
