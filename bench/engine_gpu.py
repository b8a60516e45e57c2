"""KV block zeroing against prefill on a GPU, for real model shapes (PyTorch only, no vLLM).

``bench/engine.py`` measures the plugin inside vLLM on the CPU with a tiny model, where prefill is
so cheap that zeroing weighs more than it would in production. This script measures the two
quantities that decide the real cost on a GPU, in one process:

* zeroing: the newly allocated blocks of one prompt set to zero in a paged KV cache of the
  model's shape (per layer ``[2, blocks, block_size, kv_heads, head_dim]``, bf16), the blocks
  scattered over the pool as a busy engine would hand them out. Three ways: one ``index_fill_``
  per layer (an upper bound on launch overhead), one fill over a single pool-wide tensor of the
  same layout, and one fill over a block-major pool (each block's bytes for every layer
  contiguous, the memory-bandwidth floor that vLLM's one-launch Triton zeroer approaches).
* prefill: a forward pass over the same prompt through a model of the same shape with random
  weights (``transformers`` LlamaForCausalLM built from a config: nothing is downloaded).

The ratio zeroing / prefill is the share of time to first token the zeroing adds.

    python3 bench/engine_gpu.py                 # Llama-3.1-8B shapes, prompts of 512..8192 tokens
    python3 bench/engine_gpu.py --tiny --cpu    # a smoke run of the script itself, on the CPU
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable

import torch

# (layers, hidden, intermediate, attention heads, KV heads, head_dim, vocab): Llama-3.1-8B's
# published config; --tiny shrinks every dimension for a smoke run.
SHAPES = {
    "llama-3.1-8b": (32, 4096, 14336, 32, 8, 128, 128256),
    "tiny": (2, 256, 512, 4, 2, 64, 1024),
}
BLOCK_SIZE = 16  # vLLM's default GPU block size


def _timed(fn: Callable[[], object], device: torch.device, repeats: int) -> list[float]:
    """Wall seconds of ``fn`` per call, synchronised, after two warm-up calls."""
    for _ in range(2):
        fn()
    out = []
    for _ in range(repeats):
        if device.type == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        if device.type == "cuda":
            torch.cuda.synchronize()
        out.append(time.perf_counter() - t0)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true")
    parser.add_argument("--cpu", action="store_true")
    parser.add_argument("--prompts", default="512,2048,8192")
    parser.add_argument("--pool-blocks", type=int, default=8192)
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    device = torch.device("cpu" if args.cpu else "cuda")
    dtype = torch.bfloat16
    name = "tiny" if args.tiny else "llama-3.1-8b"
    layers, hidden, inter, heads, kv_heads, head_dim, vocab = SHAPES[name]
    prompts = [int(p) for p in args.prompts.split(",")]
    pool = max(args.pool_blocks, 2 * max(prompts) // BLOCK_SIZE)

    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(num_hidden_layers=layers, hidden_size=hidden, intermediate_size=inter,
                         num_attention_heads=heads, num_key_value_heads=kv_heads, head_dim=head_dim,
                         vocab_size=vocab, max_position_embeddings=max(prompts) + 16)  # fmt: skip
    config._attn_implementation = "sdpa"
    with torch.device(device):
        model = LlamaForCausalLM(config).to(dtype).eval()
        per_layer = [torch.ones(2, pool, BLOCK_SIZE, kv_heads, head_dim, dtype=dtype) for _ in range(layers)]
        whole = torch.ones(layers, 2, pool, BLOCK_SIZE, kv_heads, head_dim, dtype=dtype)
        block_major = torch.ones(pool, layers * 2 * BLOCK_SIZE * kv_heads * head_dim, dtype=dtype)
    gen = torch.Generator().manual_seed(0)
    rows = []
    for tokens in prompts:
        n_blocks = -(-tokens // BLOCK_SIZE)
        ids = torch.randperm(pool, generator=gen)[:n_blocks].to(device)

        def zero_per_layer() -> None:
            for kv in per_layer:
                kv.index_fill_(1, ids, 0)

        def zero_whole() -> None:
            whole.index_fill_(2, ids, 0)

        def zero_block_major() -> None:
            block_major.index_fill_(0, ids, 0)

        inputs = torch.randint(0, vocab, (1, tokens), generator=gen).to(device)

        @torch.inference_mode()
        def prefill() -> None:
            model(input_ids=inputs, use_cache=False, logits_to_keep=1)

        z_layer = statistics.median(_timed(zero_per_layer, device, args.repeats))
        z_whole = statistics.median(_timed(zero_whole, device, args.repeats))
        z_bm = statistics.median(_timed(zero_block_major, device, args.repeats))
        pre = statistics.median(_timed(prefill, device, args.repeats))
        assert not per_layer[0][:, ids].any() and not whole[:, :, ids].any() and not block_major[ids].any()
        zeroed = n_blocks * BLOCK_SIZE * 2 * layers * kv_heads * head_dim * 2
        rows.append({"prompt_tokens": tokens, "blocks": n_blocks, "zeroed_MiB": zeroed / 2**20,
                     "zero_per_layer_us": z_layer * 1e6, "zero_one_fill_us": z_whole * 1e6,
                     "zero_block_major_us": z_bm * 1e6, "prefill_ms": pre * 1e3,
                     "share_per_layer_pct": 100 * z_layer / pre, "share_one_fill_pct": 100 * z_whole / pre,
                     "share_block_major_pct": 100 * z_bm / pre,
                     "one_fill_GBps": zeroed / z_whole / 1e9, "block_major_GBps": zeroed / z_bm / 1e9})  # fmt: skip
    device_name = torch.cuda.get_device_name() if device.type == "cuda" else "cpu"
    print(json.dumps({"shape": name, "device": device_name, "torch": torch.__version__, "rows": rows}, indent=1))
    print(f"\n{name} on {device_name}, block size {BLOCK_SIZE}, pool {pool} blocks, bf16, median of {args.repeats}")
    print("| prompt tokens | KV zeroed | zeroing: per layer / one fill / block-major | prefill | share of prefill |")
    print("|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['prompt_tokens']} | {r['zeroed_MiB']:.0f} MiB | {r['zero_per_layer_us']:.0f} / "
              f"{r['zero_one_fill_us']:.0f} / {r['zero_block_major_us']:.0f} us | {r['prefill_ms']:.2f} ms "
              f"| {r['share_per_layer_pct']:.2f} / {r['share_one_fill_pct']:.2f} / {r['share_block_major_pct']:.2f} % |")  # fmt: skip


if __name__ == "__main__":
    main()
