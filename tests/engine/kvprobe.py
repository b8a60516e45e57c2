"""Stale-KV probe: does a block handed to a new request still hold an earlier request's K/V?

Run as ``python -m tests.engine.kvprobe MODEL_DIR [--refuse-first]`` in a fresh process (the plugin patches vLLM
process-wide, so stock and plugin runs need separate processes); prints one JSON line.

The pool is sized so that request A (2,000 prompt tokens) occupies every usable block; request B
(10 tokens) must then get one of A's freed blocks. After B, the slots of B's block beyond B's own
10 tokens are either zero (the block was zeroed on allocation) or still hold A's K/V.

``--refuse-first`` (the stock run) first asks the same vLLM for a context longer than its pool,
which it must refuse, and afterwards checks the plugin's version pin in that stock process
(two engine starts saved against separate test processes).
"""

from __future__ import annotations

import json
import os
import sys

BLOCK = 128
USABLE_BLOCKS = 16  # max_model_len 2048 / 128; plus vLLM's reserved null block
A_TOKENS = 2000
B_TOKENS = 10


def _snapshot(worker):  # runs inside the worker via collective_rpc
    return [t.detach().clone() for t in worker.model_runner.kv_caches]


def _refusal(model_dir: str) -> str | None:
    """Stock vLLM's own check: max_model_len 8192 on a 4,096-token pool must fail to start."""
    from vllm import LLM

    try:
        LLM(
            model=model_dir,
            max_model_len=8192,
            kv_cache_memory_bytes=1 << 20,
            block_size=BLOCK,
            enforce_eager=True,
        )
    except ValueError as exc:
        return str(exc)[:400]
    return None


def _pin_check() -> dict[str, object]:
    """After the stock measurement: the plugin refuses an untested vLLM unless overridden."""
    import vllm
    from vllm.v1.kv_cache_interface import KVCacheConfig

    from engine.plugin import ENV_ALLOW_UNTESTED
    from engine.plugin.zeroing import PluginRefused, install

    empty = KVCacheConfig(num_blocks=1, kv_cache_tensors=[], kv_cache_groups=[])
    out: dict[str, object] = {"stock": empty.needs_kv_cache_zeroing}
    real, vllm.__version__ = vllm.__version__, "0.33.0"
    try:
        install()
        out["untested"] = "loaded"
    except PluginRefused as exc:
        out["untested"] = str(exc)
    out["after_refusal"] = empty.needs_kv_cache_zeroing
    os.environ[ENV_ALLOW_UNTESTED] = "1"
    install()
    out["overridden"] = empty.needs_kv_cache_zeroing
    vllm.__version__ = real
    return out


def main(model_dir: str, refuse_first: bool) -> None:
    import torch
    from vllm import LLM, SamplingParams

    refusal = _refusal(model_dir) if refuse_first else None
    kv_bytes_per_token = 256  # the tiny model: 2 layers x 1 KV head x 32 x (K,V) x 2 bytes
    llm = LLM(
        model=model_dir,
        max_model_len=USABLE_BLOCKS * BLOCK,
        kv_cache_memory_bytes=(USABLE_BLOCKS + 1) * BLOCK * kv_bytes_per_token,
        block_size=BLOCK,
        enforce_eager=True,
        seed=0,
    )
    params = SamplingParams(max_tokens=1, temperature=0.0)
    # A's tokens are 64..127 and B's 160..191: no position holds the same token in both.
    a_ids = [64 + (i * 7) % 64 for i in range(A_TOKENS)]
    b_ids = [160 + (i * 5) % 32 for i in range(B_TOKENS)]
    llm.generate([{"prompt_token_ids": a_ids}], params, use_tqdm=False)
    before = llm.collective_rpc(_snapshot)[0]
    llm.generate([{"prompt_token_ids": b_ids}], params, use_tqdm=False)
    after = llm.collective_rpc(_snapshot)[0]

    # The CPU kernels pack a block's slots in their own order, so instead of locating B's slots
    # this counts values: B's 10 tokens can fill at most 10 slots' worth of a block; any nonzero
    # value beyond that count in B's block was left there by someone else.
    nonzero = excess = equal_to_a = 0
    b_blocks: set[int] = set()
    for old, new in zip(before, after, strict=True):
        block_dim = list(new.shape).index(USABLE_BLOCKS + 1)
        old_v, new_v = old.movedim(block_dim, 0), new.movedim(block_dim, 0)
        per_slot = new_v[0].numel() // BLOCK
        changed = (old_v != new_v).flatten(1).any(dim=1).nonzero().flatten().tolist()
        b_blocks.update(changed)
        for block in changed:
            count = int((new_v[block] != 0).sum())
            nonzero += count
            excess += max(0, count - B_TOKENS * per_slot)
            equal_to_a += int(((new_v[block] == old_v[block]) & (old_v[block] != 0)).sum())

    from engine.plugin import zeroing

    counter = zeroing.counter()
    blocks_zeroed = counter.blocks if counter else 0
    pin = _pin_check() if refuse_first else None
    print(
        json.dumps(
            {
                "plugins_env": os.environ.get("VLLM_PLUGINS"),
                "plugin_active": counter is not None,
                "blocks_zeroed": blocks_zeroed,
                "b_blocks": sorted(b_blocks),
                "nonzero_values": nonzero,
                "values_beyond_b": excess,
                "values_equal_to_a": equal_to_a,
                "torch_threads": torch.get_num_threads(),
                "refusal": refusal,
                "pin": pin,
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1], "--refuse-first" in sys.argv[2:])
