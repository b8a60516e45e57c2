"""Test transports for the split tests: vLLM's example shared-storage connector, made to misbehave.

``FaultyConnector`` is ``ExampleConnector`` (prefill saves each layer's prompt KV to files in a
shared directory, decode loads it into its own blocks) whose loads can be told, per process, to
go wrong the way the 2026 incident's transports did:

- ``short``: claim the whole aligned prompt, write only its first block ("transfer complete"
  for one page of several); the other reserved blocks keep whatever they held;
- ``flip``: write everything, then flip one bit (the lowest exponent bit) in every value of the
  last loaded slot: that token's K and V doubled or halved;
- ``none``: behave (the control).

The mode is a module global (``FAULT``): the probe runs the engine in-process
(``VLLM_ENABLE_V1_MULTIPROCESSING=0``), so the worker sees what the driver set.
"""

from __future__ import annotations

from typing import Any

import safetensors.torch
import torch
from vllm.distributed.kv_transfer.kv_connector.v1.example_connector import (
    ExampleConnector,
    ExampleConnectorMetadata,
)

FAULT = {"mode": "none", "loads": 0}


class FaultyConnector(ExampleConnector):
    def start_load_kv(self, forward_context: Any, **kwargs: Any) -> None:
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
