"""One half of a real prefill/decode split: ``python -m tests.engine.pd_probe ROLE MODEL SPEC``.

Runs an in-process vLLM (``LLM``, one engine core and worker in this process) with a KV
connector, and prints one JSON line. ``SPEC`` is a JSON file:

    {"store": dir, "records": dir, "guard": bool, "state_dir": dir, "producer_done": path,
     "jobs": [{"tid": str, "prompt": [ids], "max_tokens": n, "fault": "none|short|flip", "vouch_blocks": n | null,
               "foreign": [ids] | null}]}

All three processes (producer, stock consumer, guarded consumer) start at once; a consumer
waits for ``producer_done`` before its first request. The producer (``kv_producer``) runs each job's prompt alone, greedy, to ``max_tokens``: its
output is the reference (what a single node answers) and its prompt KV goes to the store. The
consumer (``kv_consumer``) first runs the job's ``foreign`` prompt (another tenant's request,
leaving its KV in the blocks it frees), then the job's prompt with the producer's transfer id:
its KV should come from the producer. Each job reports the tokens, the first tokens' logprobs
and the finish reason. The transport is ``tests.engine.pd_faults.FaultyConnector``, wrapped in
``engine.pd.guard.TiergateKVGuard`` when ``guard`` is true.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

BLOCK = 128
USABLE_BLOCKS = 16
KV_BYTES_PER_TOKEN = 256  # the tiny model


def _transfer_config(role: str, spec: dict) -> object:
    from vllm.config import KVTransferConfig

    inner = {
        "kv_connector": "FaultyConnector",
        "kv_connector_module_path": "tests.engine.pd_faults",
        "kv_connector_extra_config": {"shared_storage_path": spec["store"]},
    }
    if not spec["guard"]:
        return KVTransferConfig(kv_role=role, **inner)
    from engine.pd.settings import GuardSettings, guard_transfer_config

    settings = GuardSettings(inner=inner, record_dir=spec["records"], state_dir=spec["state_dir"],
                             release_timeout_s=spec.get("release_timeout_s", 30.0))  # fmt: skip
    return KVTransferConfig(**json.loads(guard_transfer_config(role, settings)))  # type: ignore[arg-type]  # the JSON vLLM parses from the command line, same keys


def _vouch_only(records: str, tid: str, blocks: int) -> None:
    """Rewrite the sender's record to cover its first ``blocks`` blocks only: a sender whose
    transfer said "complete" for fewer pages than the receiver reserved."""
    from engine.pd.records import RecordStore, TransferRecord

    store = RecordStore(Path(records))
    full = store.get_record(tid, 0)
    assert full is not None
    store.put_record(tid, 0, TransferRecord(full.block_size, blocks * full.block_size, full.checksums[:blocks]))


def main(role: str, model: str, spec_path: str) -> None:
    from vllm import LLM, SamplingParams

    from tests.engine import pd_faults

    spec = json.loads(Path(spec_path).read_text())
    llm = LLM(
        model=model,
        max_model_len=USABLE_BLOCKS * BLOCK,
        kv_cache_memory_bytes=(USABLE_BLOCKS + 1) * BLOCK * KV_BYTES_PER_TOKEN,
        block_size=BLOCK,
        enforce_eager=True,
        seed=0,
        enable_prefix_caching=False,
        kv_transfer_config=_transfer_config(role, spec),
    )

    def run(prompt: list[int], max_tokens: int, tid: str | None) -> dict:
        extra = {"kv_transfer_params": {"tiergate_transfer_id": tid}} if tid else None
        params = SamplingParams(max_tokens=max_tokens, temperature=0.0, ignore_eos=True, logprobs=3,
                                extra_args=extra)  # fmt: skip
        out = llm.generate([{"prompt_token_ids": prompt}], params, use_tqdm=False)[0].outputs[0]
        firsts = [sorted(d.values(), key=lambda lp: -lp.logprob)[0].logprob for d in (out.logprobs or [])]
        return {"tokens": list(out.token_ids), "logprobs": firsts, "finish": out.finish_reason}

    if role == "kv_consumer":
        # Started together with the producer to overlap the engine starts; its KV must be there.
        deadline = time.monotonic() + 600
        while not Path(spec["producer_done"]).exists():
            if time.monotonic() > deadline:
                raise SystemExit("producer never finished")
            time.sleep(0.2)

    def late_run(job: dict) -> dict:
        """A split request aborted while its (late) load is in flight, then another tenant's
        request that needs the blocks: its answer must equal its answer alone."""
        engine = llm.llm_engine
        alone = run(job["victim"], job["victim_tokens"], None)
        pd_faults.FAULT["mode"] = "late"
        # Only a guarded consumer's transport acknowledges: the stock one shares the directory,
        # and its acks would speak for the guarded consumer's transfer of the same id.
        pd_faults.LATE.update(ack=job["late_ack"] and spec["guard"], records=spec["records"])
        landed = pd_faults.LATE["landed"]
        split = SamplingParams(max_tokens=4, temperature=0.0, extra_args={"kv_transfer_params": {
            "tiergate_transfer_id": job["tid"]}})  # fmt: skip
        engine.add_request(f"late-{job['tid']}", {"prompt_token_ids": job["prompt"]}, split)
        engine.step()  # its blocks are allocated and the transfer starts
        engine.abort_request([f"late-{job['tid']}"])
        engine.step()  # the abort reaches the transport
        pd_faults.FAULT["mode"] = "none"
        params = SamplingParams(max_tokens=job["victim_tokens"], temperature=0.0, ignore_eos=True, logprobs=3)
        engine.add_request(f"victim-{job['tid']}", {"prompt_token_ids": job["victim"]}, params)
        final = None
        deadline = time.monotonic() + 120
        while engine.has_unfinished_requests() and time.monotonic() < deadline:
            for out in engine.step():
                if out.request_id.startswith("victim-") and out.finished:
                    final = out.outputs[0]
        assert final is not None, "the victim did not finish"
        firsts = [sorted(d.values(), key=lambda lp: -lp.logprob)[0].logprob for d in (final.logprobs or [])]
        return {"alone": alone, "tokens": list(final.token_ids), "logprobs": firsts, "finish": final.finish_reason,
                "late_writes_landed": pd_faults.LATE["landed"] - landed}  # fmt: skip

    results = []
    for job in spec["jobs"]:
        if role == "kv_consumer" and job.get("late_ack") is not None:
            results.append(late_run(job))
            continue
        pd_faults.FAULT["mode"] = "none"
        if role == "kv_consumer" and job.get("foreign"):
            run(job["foreign"], 4, None)
        pd_faults.FAULT["mode"] = job.get("fault", "none") if role == "kv_consumer" else "none"
        loads = pd_faults.FAULT["loads"]
        result = run(job["prompt"], job["max_tokens"], job["tid"])
        if role == "kv_producer" and job.get("vouch_blocks") is not None:
            _vouch_only(spec["records"], job["tid"], job["vouch_blocks"])
        result["faulty_loads"] = pd_faults.FAULT["loads"] - loads
        results.append(result)
    if role == "kv_producer":
        from engine.pd.records import RecordStore

        for job in spec["jobs"]:
            if job.get("late_ack") is not None:
                # A pushing sender acknowledges when its writes are done; here the transport
                # plays that sender (pd_faults.LATE), so this process's own ack must not count.
                RecordStore(Path(spec["records"])).root.joinpath(f"{job['tid']}.producer.r0.ack").unlink(
                    missing_ok=True
                )
        Path(spec["producer_done"]).write_text("done")
    print(json.dumps({"role": role, "guard": spec["guard"], "jobs": results}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])
