"""Cost of the KV zeroing plugin: throughput and time-to-first-token, stock vs plugin, one run.

Each measurement runs in a fresh process (the plugin patches vLLM process-wide) with an in-process
vLLM engine (``LLM``, one thread, ``VLLM_ENABLE_V1_MULTIPROCESSING=0``) on the tiny random-weight
model: a batch of requests with distinct prompts, so every block is newly allocated (and, with the
plugin, zeroed). Rounds alternate stock/plugin (ABBA) so drift on a shared machine hits both.
TTFT is vLLM's own per-request ``first_token_latency``.

    .venv/bin/python bench/engine.py [--rounds 2] [--requests 32]
    .venv/bin/python bench/engine.py --split [--rounds 2] [--requests 16]

``--split`` measures the prefill/decode guard instead (``engine.pd.guard``): per round and mode
(stock transport, guarded transport; ABBA) a prefill process computes the batch's prompts
(``max_tokens`` 1) and saves their KV, then a decode process loads it and decodes. The transport
is vLLM's example shared-storage connector (``tests.engine.pd_faults``, no fault): slow file I/O,
so the guard's share here is a ratio against a slow transport, not against NIXL on a GPU.
Each process then runs one more batch (its own prompts) with every connector method wrapped in a
CPU timer: the guard's own CPU share of that process (its methods' time less the inner
connector's) is measured inside one process, free of the drift between processes that the
paired ratios carry on a loaded machine.

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

    def timed(self, block_ids):  # type: ignore[no-untyped-def]  # wraps vLLM's untyped method
        t0 = time.thread_time()
        inner(self, block_ids)
        spent[0] += time.thread_time() - t0

    CPUModelRunner._zero_block_ids = timed  # type: ignore[method-assign]  # the bench times vLLM's own method by patching it
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
            {"prompt_token_ids": [(salt * 31 + i * 7 + j * 13) % 250 for j in range(200 + 20 * i)]}
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


class _ConnectorTimer:
    """Exclusive CPU time of the guard's and the inner connector's methods (nested calls apart).

    Installed on the classes for one batch and removed after it, so the timed batch alone pays
    for the timers. A timer costs a few microseconds per call (``thread_time`` is a system call),
    part of which lands in the caller's exclusive time: ``calibrate`` measures that share on
    empty methods in the same process, and ``corrected`` subtracts it per call counted.
    """

    def __init__(self) -> None:
        self.own = {"guard": 0.0, "inner": 0.0, "cal": 0.0}
        self.calls = dict.fromkeys(self.own, 0)
        self.children = dict.fromkeys(self.own, 0)  # timed calls made directly inside one of this kind
        self._stack: list[list] = []  # per active call: [start, time in timed callees, kind]
        self._saved: list[tuple[type, str, object]] = []
        self._per_call = 0.0
        self._per_child = 0.0

    def _wrap(self, kind: str, fn):  # type: ignore[no-untyped-def]  # wraps any connector method
        def timed(*args, **kwargs):  # type: ignore[no-untyped-def]  # same signature as fn
            self.calls[kind] += 1
            if self._stack:
                self.children[self._stack[-1][2]] += 1
            frame = [time.thread_time(), 0.0, kind]
            self._stack.append(frame)
            try:
                return fn(*args, **kwargs)
            finally:
                self._stack.pop()
                spent = time.thread_time() - frame[0]
                self.own[kind] += spent - frame[1]
                if self._stack:
                    self._stack[-1][1] += spent

        return timed

    def install(self, kind: str, cls: type) -> None:
        for name in dir(cls):
            if name.startswith("_"):
                continue
            static = next((k.__dict__[name] for k in cls.__mro__ if name in k.__dict__), None)
            if not callable(static) or isinstance(static, (classmethod, staticmethod, type)):
                continue
            self._saved.append((cls, name, cls.__dict__.get(name)))
            setattr(cls, name, self._wrap(kind, static))

    def remove(self) -> None:
        for cls, name, original in reversed(self._saved):
            if original is None:
                delattr(cls, name)
            else:
                setattr(cls, name, original)
        self._saved.clear()

    def calibrate(self, n: int = 5000, repeats: int = 7) -> None:
        class Probe:
            def leaf(self) -> None:
                pass

            def outer(self) -> None:
                self.leaf()

        probe = Probe()

        def charged(method: str) -> float:
            before = self.own["cal"]
            call = getattr(probe, method)
            for _ in range(n):
                call()
            return (self.own["cal"] - before) / n

        def true_cost(method: str) -> float:
            call = getattr(probe, method)
            t0 = time.thread_time()
            for _ in range(n):
                call()
            return (time.thread_time() - t0) / n

        bare_leaf = statistics.median(true_cost("leaf") for _ in range(repeats))
        bare_outer = statistics.median(true_cost("outer") for _ in range(repeats))
        self.install("cal", Probe)
        leaf = statistics.median(charged("leaf") for _ in range(repeats))
        outer = statistics.median(charged("outer") for _ in range(repeats))
        self.remove()
        self._per_call = max(0.0, leaf - bare_leaf)
        self._per_child = max(0.0, outer - self._per_call - (bare_outer - bare_leaf))

    def corrected(self, kind: str) -> float:
        return max(0.0, self.own[kind] - self.calls[kind] * self._per_call - self.children[kind] * self._per_child)


def split_worker(role: str, model: str, store: str, records: str, guarded: bool, requests: int,
                 max_tokens: int, salt: int) -> None:  # fmt: skip
    from vllm import LLM, SamplingParams
    from vllm.config import KVTransferConfig

    from engine.pd.guard import TiergateKVGuard
    from engine.pd.settings import GuardSettings, guard_transfer_config
    from tests.engine.pd_faults import FaultyConnector

    inner = {"kv_connector": "FaultyConnector", "kv_connector_module_path": "tests.engine.pd_faults",
             "kv_connector_extra_config": {"shared_storage_path": store}}  # fmt: skip
    ktc = (KVTransferConfig(**json.loads(guard_transfer_config(role, GuardSettings(inner=inner, record_dir=records))))
           if guarded else KVTransferConfig(kv_role=role, **inner))  # fmt: skip
    llm = LLM(model=model, max_model_len=2048, kv_cache_memory_bytes=8 << 20, block_size=128, enforce_eager=True,
              seed=0, disable_log_stats=False, enable_prefix_caching=False, kv_transfer_config=ktc,
              max_num_batched_tokens=16384)  # the example connector saves only unchunked prefills  # fmt: skip
    out_tokens = 1 if role == "kv_producer" else max_tokens

    def batch(s: int) -> list[tuple[dict, SamplingParams]]:
        items = []
        for i in range(requests):
            ids = [(s * 1009 + i * 7 + j * 13) % 250 for j in range(600 + 40 * i)]  # distinct per s < 250
            extra = {"kv_transfer_params": {"tiergate_transfer_id": f"bench-{s}-{i:04d}"}}
            items.append(
                (
                    {"prompt_token_ids": ids},
                    SamplingParams(max_tokens=out_tokens, temperature=0.0, ignore_eos=True, extra_args=extra),
                )
            )
        return items

    def go(s: int) -> tuple[list, float, float]:
        items = batch(s)
        start, cpu_start = time.perf_counter(), time.process_time()
        outs = llm.generate([p for p, _ in items], [q for _, q in items], use_tqdm=False)
        return outs, time.perf_counter() - start, time.process_time() - cpu_start

    go(salt + 100)  # warm-up on its own prompts (salts stay below 100)
    outputs, wall, cpu = go(salt)
    timer = _ConnectorTimer()
    timer.install("inner", FaultyConnector)
    if guarded:
        timer.install("guard", TiergateKVGuard)
    timed_outputs, _, timed_cpu = go(salt + 200)  # the attribution batch, on prompts of its own
    timer.remove()
    timer.calibrate()
    failed = sum(1 for o in [*outputs, *timed_outputs] if o.outputs[0].finish_reason == "error")
    tokens = sum(len(o.outputs[0].token_ids) for o in outputs) if role == "kv_consumer" else sum(
        len(o.prompt_token_ids or []) for o in outputs)  # fmt: skip
    ttft = [o.metrics.first_token_latency for o in outputs if o.metrics is not None]
    print(json.dumps({"tokens_per_s": tokens / wall, "tokens_per_cpu_s": tokens / cpu, "failed": failed,
                      "ttft_median_ms": 1000 * statistics.median(ttft) if ttft else None, "cpu_s": cpu,
                      "guard_cpu_share": timer.corrected("guard") / timed_cpu,
                      "guard_cpu_share_raw": timer.own["guard"] / timed_cpu, "guard_calls": timer.calls["guard"],
                      "transport_cpu_share": timer.corrected("inner") / timed_cpu}))  # fmt: skip


def run_split(mode: str, model: Path, tmp: Path, requests: int, max_tokens: int, salt: int) -> dict[str, dict]:
    env = {**os.environ, "VLLM_ENABLE_V1_MULTIPROCESSING": "0", "OMP_NUM_THREADS": "1", "VLLM_PLUGINS": "",
           "VLLM_CACHE_ROOT": str(tmp / "vllm"), "TMPDIR": str(tmp), "HF_HUB_OFFLINE": "1",
           "VLLM_NO_USAGE_STATS": "1", "PYTHONPATH": str(ROOT)}  # fmt: skip
    store, records = tmp / f"store-{mode}-{salt}", tmp / f"records-{mode}-{salt}"
    store.mkdir()
    result = {}
    for role in ("kv_producer", "kv_consumer"):
        out = subprocess.run([sys.executable, __file__, "--split-worker", role, str(model), str(store), str(records),
                              mode, "--requests", str(requests), "--max-tokens", str(max_tokens), "--salt", str(salt)],
                             env=env, capture_output=True, text=True, check=False)  # fmt: skip
        if out.returncode != 0:
            raise SystemExit(f"{role} ({mode}) failed:\n{out.stderr[-3000:]}")
        result[role] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def split_main(rounds: int, requests: int, max_tokens: int) -> None:
    from tests.support.tiny_model import build_tiny_model

    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        model = build_tiny_model(tmp / "model")
        results: dict[str, list[dict[str, dict]]] = {"stock": [], "guard": []}
        for r in range(rounds):
            for mode in ("stock", "guard") if r % 2 == 0 else ("guard", "stock"):
                results[mode].append(
                    run_split(mode, model, tmp, requests, max_tokens, salt=10 * r + len(results[mode]))
                )
                print(mode, results[mode][-1], flush=True)
    assert all(x[role]["failed"] == 0 for v in results.values() for x in v for role in x), "a clean run failed"
    pairs = list(zip(results["stock"], results["guard"], strict=True))
    print(f"load average at the end: {os.getloadavg()[0]:.1f} (1 min)")
    for role, label in (("kv_producer", "prefill (prompt tokens/s)"), ("kv_consumer", "decode (output tokens/s)")):
        for key in ("tokens_per_s", "tokens_per_cpu_s", "ttft_median_ms"):
            ratios = [g[role][key] / s[role][key] for s, g in pairs]
            print(f"{label} guard/stock {key}: {statistics.median(ratios):.3f} (median of {len(pairs)} paired "
                  f"rounds; per round {', '.join(f'{r:.3f}' for r in ratios)})")  # fmt: skip
        shares = [g[role]["guard_cpu_share"] for g in results["guard"]]
        raw = statistics.median(g[role]["guard_cpu_share_raw"] for g in results["guard"])
        transport = [x[role]["transport_cpu_share"] for v in results.values() for x in v]
        print(f"{label} guard's own CPU share: {100 * statistics.median(shares):.3f} % (per process "
              f"{', '.join(f'{100 * x:.3f}' for x in shares)}; {100 * raw:.3f} % before taking out the timers' "
              f"own cost); the transport's: {100 * statistics.median(transport):.1f} %")  # fmt: skip


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
    ap.add_argument("--split", action="store_true", help="measure the prefill/decode KV guard")
    ap.add_argument("--split-worker", nargs=5, metavar=("ROLE", "MODEL", "STORE", "RECORDS", "MODE"))
    ap.add_argument("--salt", type=int, default=0)
    args = ap.parse_args()
    if args.split_worker:
        role, model, store, records, mode = args.split_worker
        split_worker(role, model, store, records, mode == "guard", args.requests, args.max_tokens, args.salt)
        return
    if args.split:
        split_main(args.rounds, args.requests, args.max_tokens)
        return
    if args.worker:
        worker(args.worker, args.requests, args.max_tokens)
        return
    from tests.support.tiny_model import build_tiny_model

    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        model = build_tiny_model(tmp / "model")
        results: dict[str, list[dict]] = {"stock": [], "plugin": []}
        for r in range(args.rounds):
            order = ("stock", "plugin") if r % 2 == 0 else ("plugin", "stock")
            for mode in order:
                results[mode].append(run(mode, model, tmp, args.requests, args.max_tokens))
                print(mode, results[mode][-1], flush=True)
    tput = {m: statistics.median(x["tokens_per_s"] for x in v) for m, v in results.items()}
    ttft = {m: statistics.median(x["ttft_median_ms"] for x in v) for m, v in results.items()}
    cpu = {m: statistics.median(x["tokens_per_cpu_s"] for x in v) for m, v in results.items()}
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
    print("\nbytes zeroed per token (each token's KV slot is zeroed once, when its block is new):")
    for name, layers, heads, dim, nbytes in REAL_MODELS:
        per_token = 2 * layers * heads * dim * nbytes
        print(f"  {name}: {per_token // 1024} KiB/token, {16 * per_token // (1 << 20)} MiB per 16-token block")


if __name__ == "__main__":
    main()
