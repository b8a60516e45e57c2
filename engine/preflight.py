"""KV pool capacity against context length: before vLLM starts, and read back after.

The 2026 leak needed a KV pool smaller than the context window. Stock vLLM refuses to start when
the memory cannot hold ``max_model_len`` tokens, but it counts the reserved null block as usable:
with memory for exactly ``max_model_len`` tokens it starts, and one request of full length can
never get its blocks. Here the pool in tokens is ``(num_blocks - 1) * block_size``, and the engine
refuses to start unless that holds ``max_model_len``.

After start, the real numbers are read back from vLLM (``vllm:cache_config_info`` on ``/metrics``,
``max_model_len`` on ``/v1/models``); any disagreement with the plan stops the engine.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from engine.config import EngineConfig

__all__ = [
    "KvGeometry",
    "PoolPlan",
    "PreflightError",
    "ReadBack",
    "describe",
    "parse_readback",
    "plan_pool",
    "read_geometry",
    "readback_problems",
]

_DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "half": 2, "float32": 4, "float": 4}


class PreflightError(Exception):
    """The engine must not start (or must stop): its KV pool would not hold its context."""

    status_code = 503


@dataclass(frozen=True, slots=True)
class KvGeometry:
    """What one token costs in the KV cache, from the model's config.json."""

    layers: int
    kv_heads: int  # per device, after tensor-parallel division
    head_dim: int
    dtype_bytes: int

    @property
    def bytes_per_token(self) -> int:
        return 2 * self.layers * self.kv_heads * self.head_dim * self.dtype_bytes  # K and V


@dataclass(frozen=True, slots=True)
class PoolPlan:
    """The pool that ``kv_cache_memory_bytes`` buys, in blocks and usable tokens."""

    geometry: KvGeometry
    block_size: int
    num_blocks: int
    max_model_len: int

    @property
    def usable_tokens(self) -> int:
        return max(0, self.num_blocks - 1) * self.block_size  # one block is vLLM's null block


@dataclass(frozen=True, slots=True)
class ReadBack:
    """What the running vLLM reports about itself."""

    num_blocks: int
    block_size: int
    prefix_caching: bool
    max_model_len: int
    model: str

    @property
    def usable_tokens(self) -> int:
        return max(0, self.num_blocks - 1) * self.block_size


def _text_config(raw: dict[str, Any]) -> dict[str, Any]:
    nested = raw.get("text_config")
    return {**raw, **nested} if isinstance(nested, dict) else raw


def read_geometry(config: EngineConfig) -> KvGeometry:
    """KV geometry of ``config.model``; refuses architectures this arithmetic does not cover."""
    try:
        raw = _text_config(json.loads((config.model / "config.json").read_text()))
    except (OSError, ValueError) as exc:
        raise PreflightError(f"cannot read {config.model}/config.json") from exc
    if raw.get("kv_lora_rank") is not None:
        raise PreflightError("MLA models are not supported by the KV pool preflight")
    if raw.get("sliding_window") is not None or any(t != "full_attention" for t in raw.get("layer_types") or []):
        raise PreflightError("sliding-window / hybrid attention is not supported by the preflight")
    try:
        layers = int(raw["num_hidden_layers"])
        heads = int(raw["num_attention_heads"])
        kv_heads = int(raw.get("num_key_value_heads") or heads)
        head_dim = int(raw.get("head_dim") or int(raw["hidden_size"]) // heads)
    except (KeyError, TypeError, ValueError) as exc:
        raise PreflightError(f"model config lacks the KV shape ({exc})") from exc
    dtype: str = config.dtype
    if dtype == "auto":
        dtype = str(raw.get("dtype") or raw.get("torch_dtype") or "")
        if dtype not in ("bfloat16", "float16"):
            raise PreflightError(f"model dtype {dtype or 'unknown'!r}: set dtype explicitly")
    tp = config.tensor_parallel_size
    if kv_heads % tp:
        raise PreflightError(f"{kv_heads} KV heads do not divide over {tp} devices")
    return KvGeometry(layers, kv_heads // tp, head_dim, _DTYPE_BYTES[dtype])


def plan_pool(config: EngineConfig, geometry: KvGeometry | None = None) -> PoolPlan:
    """The pool for ``config``; raises ``PreflightError`` when it cannot hold max_model_len."""
    geometry = geometry or read_geometry(config)
    per_block = geometry.bytes_per_token * config.block_size
    plan = PoolPlan(
        geometry=geometry,
        block_size=config.block_size,
        num_blocks=config.kv_cache_memory_bytes // per_block,
        max_model_len=config.max_model_len,
    )
    if plan.usable_tokens < config.max_model_len:
        needed = (-(-config.max_model_len // config.block_size) + 1) * per_block
        raise PreflightError(
            f"KV pool holds {plan.usable_tokens} tokens ({plan.num_blocks} blocks of "
            f"{config.block_size}, one reserved) but max_model_len is {config.max_model_len}: "
            f"give kv_cache_memory_bytes at least {needed} or lower max_model_len"
        )
    return plan


def parse_readback(metrics_text: str, models: dict[str, Any]) -> ReadBack:
    """Pull the pool and context numbers out of vLLM's /metrics text and /v1/models JSON."""
    labels: dict[str, str] | None = None
    for family in text_string_to_metric_families(metrics_text):
        if family.name in ("vllm:cache_config_info", "vllm_cache_config_info"):
            labels = dict(family.samples[0].labels) if family.samples else None
    if labels is None:
        raise PreflightError("vLLM /metrics has no vllm:cache_config_info")
    try:
        entry = models["data"][0]
        return ReadBack(
            num_blocks=int(labels["num_gpu_blocks"]),
            block_size=int(labels["block_size"]),
            prefix_caching=labels.get("enable_prefix_caching") == "True",
            max_model_len=int(entry["max_model_len"]),
            model=str(entry["id"]),
        )
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise PreflightError(f"vLLM read-back is incomplete ({exc!r})") from exc


def readback_problems(plan: PoolPlan, config: EngineConfig, got: ReadBack) -> list[str]:
    """Every disagreement between what was asked and what runs; empty = consistent."""
    problems: list[str] = []
    if got.block_size != plan.block_size:
        problems.append(f"block_size {got.block_size} != planned {plan.block_size}")
    if got.num_blocks != plan.num_blocks:
        problems.append(f"KV blocks {got.num_blocks} != planned {plan.num_blocks}")
    if got.max_model_len != config.max_model_len:
        problems.append(f"max_model_len {got.max_model_len} != configured {config.max_model_len}")
    if got.usable_tokens < got.max_model_len:
        problems.append(f"KV pool {got.usable_tokens} tokens < max_model_len {got.max_model_len}")
    if got.prefix_caching != config.prefix_caching:
        problems.append(f"prefix caching {got.prefix_caching} != configured {config.prefix_caching}")
    if got.model != config.served_model_name:
        problems.append(f"served model {got.model!r} != configured {config.served_model_name!r}")
    return problems


def describe(plan: PoolPlan) -> str:
    """One log line: the pool in blocks, tokens and bytes per token."""
    return (
        f"KV pool: {plan.num_blocks} blocks x {plan.block_size} tokens "
        f"({plan.usable_tokens} usable, {plan.geometry.bytes_per_token} B/token) "
        f"for max_model_len {plan.max_model_len}"
    )
