"""Test transports for the split tests: vLLM's example shared-storage connector, made to misbehave.

``FaultyConnector`` is ``ExampleConnector`` (prefill saves each layer's prompt KV to files in a
shared directory, decode loads it into its own blocks) whose loads can be told, per process, to
go wrong the way the 2026 incident's transports did:

- ``short``: claim the whole aligned prompt, write only its first block ("transfer complete"
  for one page of several); the other reserved blocks keep whatever they held;
- ``flip``: write everything, then flip one bit (the lowest exponent bit) in every value of the
  last loaded slot: that token's K and V doubled or halved;
- ``late``: load asynchronously, and land the write ``LATE["after"]`` engine steps later; a
  request aborted before that is reported finished at once (as NIXL frees an aborted request's
  blocks) while its write is still pending, so the write lands in blocks vLLM has handed on.
  With ``LATE["ack"]`` the transport, playing the pushing sender, acknowledges the transfer in
  the guard's record directory once its write has landed;
- ``none``: behave (the control).

A consumer never saves KV here (the example connector would store what a decode computes, and a
decode's own later prompts would then load it as "external" KV).

The mode is a module global (``FAULT``): the probe runs the engine in-process
(``VLLM_ENABLE_V1_MULTIPROCESSING=0``), so the worker sees what the driver set.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import safetensors.torch
import torch
from vllm.distributed.kv_transfer.kv_connector.v1.example_connector import (
    ExampleConnector,
    ExampleConnectorMetadata,
    ReqMeta,
)

FAULT = {"mode": "none", "loads": 0}
LATE: dict[str, Any] = {"after": 4, "ack": None, "records": None, "step": 0, "landed": 0, "pending": []}


class FaultyConnector(ExampleConnector):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._late_loads: dict[str, tuple[list[int], list[int], str | None]] = {}
        self._kv: dict[str, torch.Tensor] = {}

    def register_kv_caches(self, kv_caches: dict[str, torch.Tensor]) -> None:
        self._kv = kv_caches

    # ---- scheduler side: the async ("late") loads -------------------------------------------

    def get_num_new_matched_tokens(self, request: Any, num_computed_tokens: int) -> tuple[int | None, bool]:
        count, load_async = super().get_num_new_matched_tokens(request, num_computed_tokens)
        return count, bool(count) and FAULT["mode"] == "late"

    def update_state_after_alloc(self, request: Any, blocks: Any, num_external_tokens: int) -> None:
        if FAULT["mode"] == "late" and num_external_tokens > 0:
            tid = (request.kv_transfer_params or {}).get("tiergate_transfer_id")
            prompt = list(request.prompt_token_ids)[: num_external_tokens + 1]
            self._late_loads[request.request_id] = (prompt, list(blocks.get_block_ids()[0]), tid)
            return
        super().update_state_after_alloc(request, blocks, num_external_tokens)

    def build_connector_meta(self, scheduler_output: Any) -> Any:
        meta = super().build_connector_meta(scheduler_output)
        if not self._kv_transfer_config.is_kv_producer:
            meta.requests = [r for r in meta.requests if not r.is_store]
        meta.late = [(rid, ReqMeta.make_meta(p, b, self._block_size, False, []), tid)
                     for rid, (p, b, tid) in self._late_loads.items()]  # fmt: skip
        self._late_loads.clear()
        return meta

    # ---- worker side ------------------------------------------------------------------------

    def _write(self, request: Any) -> None:
        bs = self._block_size
        slots = request.slot_mapping
        for name, kv in self._kv.items():
            path = self._generate_filename_debug(name, request.token_ids, request.mm_hashes)
            kv[slots // bs, :, slots % bs] = safetensors.torch.load_file(path)["kv_cache"].to(kv.device)

    def get_finished(self, finished_req_ids: set[str]) -> tuple[set[str] | None, set[str] | None]:
        LATE["step"] += 1
        done: set[str] = set()
        for job in list(LATE["pending"]):
            if job["rid"] in finished_req_ids and not job["reported"]:
                job["reported"] = True  # aborted: "finished" at once, the write still in flight
                done.add(job["rid"])
            if LATE["step"] >= job["due"]:
                self._write(job["req"])
                LATE["landed"] += 1
                LATE["pending"].remove(job)
                if LATE["ack"] and job["tid"]:
                    from engine.pd.records import RecordStore

                    RecordStore(Path(LATE["records"])).ack(job["tid"], "producer", 0)
                if not job["reported"]:
                    done.add(job["rid"])
        return None, done or None

    def start_load_kv(self, forward_context: Any, **kwargs: Any) -> None:
        meta = self._get_connector_metadata()
        for rid, request, tid in getattr(meta, "late", []):
            FAULT["loads"] += 1
            LATE["pending"].append({"rid": rid, "req": request, "tid": tid, "reported": False,
                                    "due": LATE["step"] + LATE["after"]})  # fmt: skip
        mode = FAULT["mode"]
        if mode == "none":
            super().start_load_kv(forward_context, **kwargs)
            return
        meta = self._get_connector_metadata()
        assert isinstance(meta, ExampleConnectorMetadata)
        bs = self._block_size
        for request in meta.requests:
            if request.is_store:
                continue
            FAULT["loads"] += 1
            keep = bs if mode == "short" else len(request.slot_mapping)
            slots = request.slot_mapping[:keep]
            for name, layer in forward_context.no_compile_layers.items():
                kv = getattr(layer, "kv_cache", None)
                if kv is None:
                    continue
                path = self._generate_filename_debug(name, request.token_ids, request.mm_hashes)
                src = safetensors.torch.load_file(path)["kv_cache"][:keep].to(kv.device)
                kv[slots // bs, :, slots % bs] = src
            if mode == "flip":
                kv = next(m.kv_cache for m in forward_context.no_compile_layers.values()
                          if getattr(m, "kv_cache", None) is not None)  # fmt: skip
                block, slot = int(slots[-1]) // bs, int(slots[-1]) % bs
                word = kv[block, :, slot].view(torch.int16)
                word ^= 0x0080
