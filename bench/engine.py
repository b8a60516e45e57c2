"""Cost of the KV zeroing plugin: throughput and time-to-first-token, stock vs plugin, one run.

Each measurement runs in a fresh process (the plugin patches vLLM process-wide) with an in-process
vLLM engine (``LLM``, one thread, ``VLLM_ENABLE_V1_MULTIPROCESSING=0``) on the tiny random-weight
model: a batch of requests with distinct prompts, so every block is newly allocated (and, with the
plugin, zeroed). Rounds alternate stock/plugin (ABBA) so drift on a shared machine hits both.
TTFT is vLLM's own per-request ``first_token_latency``.

    .venv/bin/python bench/engine.py [--rounds 2] [--requests 32]

The tiny model's KV is 256 B/token, so this understates the memory work on a real model; the
script also prints the bytes zeroed per token for real model shapes.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# (name, layers, KV heads, head_dim, bytes per element): published shapes, bf16 KV cache.
REAL_MODELS = [
    ("Llama-3.1-8B", 32, 8, 128, 2),
    ("Llama-3.1-70B", 80, 8, 128, 2),
    ("Qwen2.5-32B", 64, 8, 128, 2),
]


def _time_zeroing() -> list[float]:
    """Accumulate the CPU time spent in the (plugin-wrapped) block zeroing of this process."""
    from vllm.v1.worker.cpu_model_runner import CPUModelRunner

    spent = [0.0]
    inner = CPUModelRunner._zero_block_ids

    def timed(self, block_ids):  # type: ignore[no-untyped-def]
        t0 = time.thread_time()
        inner(self, block_ids)
        spent[0] += time.thread_time() - t0

    CPUModelRunner._zero_block_ids = timed  # type: ignore[method-assign]
    return spent


def worker(model: str, requests: int, max_tokens: int) -> None:
    from vllm import LLM, SamplingParams

    from engine.plugin import zeroing

    llm = LLM(
        model=model,
        max_model_len=2048,
        kv_cache_memory_bytes=8 << 20,
        block_size=128,
        enforce_eager=True,
        seed=0,
        disable_log_stats=False,
    )
    zero_cpu = _time_zeroing()
    params = SamplingParams(max_tokens=max_tokens, temperature=0.0, ignore_eos=True)

    def prompts(salt: int) -> list[dict]:
        return [
            {
                "prompt_token_ids": [
                    (salt * 31 + i * 7 + j * 13) % 250 for j in range(200 + 20 * i)
                ]
            }
            for i in range(requests)
        ]

    llm.generate(prompts(999), params, use_tqdm=False)  # warm-up
    zero_cpu[0] = 0.0
    start, cpu_start = time.perf_counter(), time.process_time()
    outputs = llm.generate(prompts(1), params, use_tqdm=False)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    generated = sum(len(o.outputs[0].token_ids) for o in outputs)
    ttft = [o.metrics.first_token_latency for o in outputs if o.metrics is not None]
    counter = zeroing.counter()
    print(
        json.dumps(
            {
                "tokens_per_s": generated / wall,
                # CPU time is what the engine itself spent: far less disturbed by other
                # processes on a shared machine than wall time.
                "tokens_per_cpu_s": generated / cpu,
                "ttft_median_ms": 1000 * statistics.median(ttft) if ttft else None,
                "zeroing_cpu_fraction": zero_cpu[0] / cpu,
                "blocks_zeroed": counter.blocks if counter else 0,
            }
        )
    )


def run(mode: str, model: Path, tmp: Path, requests: int, max_tokens: int) -> dict:
    env = {
        **os.environ,
        "VLLM_ENABLE_V1_MULTIPROCESSING": "0",
        "OMP_NUM_THREADS": "1",
        "VLLM_PLUGINS": "tiergate_kv_hygiene" if mode == "plugin" else "",
        "VLLM_CACHE_ROOT": str(tmp / "vllm"),
        "TMPDIR": str(tmp),
        "HF_HUB_OFFLINE": "1",
        "VLLM_NO_USAGE_STATS": "1",
    }
    out = subprocess.run(
        [
            sys.executable,
            __file__,
            "--worker",
            str(model),
            "--requests",
            str(requests),
            "--max-tokens",
            str(max_tokens),
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--requests", type=int, default=32)
    ap.add_argument("--max-tokens", type=int, default=96)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker, args.requests, args.max_tokens)
        return
    from engine.devmodel import build_tiny_model

    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        model = build_tiny_model(tmp / "model")
        results: dict[str, list[dict]] = {"stock": [], "plugin": []}
        for r in range(args.rounds):
            order = ("stock", "plugin") if r % 2 == 0 else ("plugin", "stock")
            for mode in order:
                results[mode].append(
                    run(mode, model, tmp, args.requests, args.max_tokens)
                )
                print(mode, results[mode][-1], flush=True)
    tput = {
        m: statistics.median(x["tokens_per_s"] for x in v) for m, v in results.items()
    }
    ttft = {
        m: statistics.median(x["ttft_median_ms"] for x in v) for m, v in results.items()
    }
    cpu = {
        m: statistics.median(x["tokens_per_cpu_s"] for x in v)
        for m, v in results.items()
    }
    zero = statistics.median(x["zeroing_cpu_fraction"] for x in results["plugin"])
    # Each round ran one stock and one plugin process back to back: their ratio cancels the slow
    # drift of a shared machine that the medians per mode above still carry.
    pairs = list(zip(results["stock"], results["plugin"], strict=True))
    paired = {
        key: statistics.median(p[key] / s[key] for s, p in pairs)
        for key in ("tokens_per_s", "tokens_per_cpu_s", "ttft_median_ms")
    }
    print(
        f"\npaired per round (median of {len(pairs)}): throughput {paired['tokens_per_s']:.3f}, "
        f"per CPU-second {paired['tokens_per_cpu_s']:.3f}, TTFT {paired['ttft_median_ms']:.3f}"
    )
    print(
        f"\nthroughput plugin/stock: {tput['plugin'] / tput['stock']:.3f} "
        f"({tput['plugin']:.0f} vs {tput['stock']:.0f} output tokens/s)"
    )
    print(
        f"TTFT median plugin/stock: {ttft['plugin'] / ttft['stock']:.3f} "
        f"({ttft['plugin']:.1f} vs {ttft['stock']:.1f} ms)"
    )
    print(
        f"throughput per engine CPU-second plugin/stock: {cpu['plugin'] / cpu['stock']:.3f} "
        f"({cpu['plugin']:.0f} vs {cpu['stock']:.0f} output tokens per CPU-s)"
    )
    print(f"share of engine CPU time inside block zeroing (plugin): {100 * zero:.3f} %")
    print(f"blocks zeroed per plugin run: {results['plugin'][0]['blocks_zeroed']}")
    print(
        "\nbytes zeroed per token (each token's KV slot is zeroed once, when its block is new):"
    )
    for name, layers, heads, dim, nbytes in REAL_MODELS:
        per_token = 2 * layers * heads * dim * nbytes
        print(
            f"  {name}: {per_token // 1024} KiB/token, {16 * per_token // (1 << 20)} MiB per 16-token block"
        )


if __name__ == "__main__":
    main()
