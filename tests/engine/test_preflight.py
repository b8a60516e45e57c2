"""KV pool arithmetic before start and the read-back comparison after start (no vLLM needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.config import EngineConfig
from engine.preflight import (
    PreflightError,
    ReadBack,
    parse_readback,
    plan_pool,
    read_geometry,
    readback_problems,
)

LLAMA_8B = {
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "hidden_size": 4096,
    "dtype": "bfloat16",
}


def _model(tmp_path: Path, **cfg: object) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    return tmp_path


def _config(model: Path, **kw: object) -> EngineConfig:
    base = {
        "model": model,
        "served_model_name": "m",
        "max_model_len": 2048,
        "kv_cache_memory_bytes": 1 << 20,
        "block_size": 128,
    }
    return EngineConfig(**{**base, **kw})


def test_geometry_of_a_real_model_size(tmp_path: Path) -> None:
    """Llama-3.1-8B shapes: 128 KiB of KV per token in bf16, 64 KiB per device at TP 2."""
    model = _model(tmp_path, **LLAMA_8B)
    assert read_geometry(_config(model)).bytes_per_token == 131072
    assert read_geometry(_config(model, tensor_parallel_size=2)).bytes_per_token == 65536


def test_pool_counts_the_null_block(tmp_path: Path) -> None:
    """Memory for exactly max_model_len tokens is refused: one block is vLLM's null block."""
    model = _model(
        tmp_path,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=32,
        hidden_size=64,
        dtype="bfloat16",
    )
    # 256 B/token: 2048 tokens = 16 blocks of 128 = 524,288 bytes -> 15 usable blocks.
    with pytest.raises(PreflightError, match="holds 1920 tokens .* max_model_len is 2048") as info:
        plan_pool(_config(model, kv_cache_memory_bytes=16 * 128 * 256))
    assert "at least 557056" in str(info.value)
    plan = plan_pool(_config(model, kv_cache_memory_bytes=557056))
    assert (plan.num_blocks, plan.usable_tokens) == (17, 2048)


@pytest.mark.parametrize(
    ("cfg", "needle"),
    [
        ({**LLAMA_8B, "kv_lora_rank": 512}, "MLA"),
        ({**LLAMA_8B, "sliding_window": 4096}, "sliding-window"),
        (
            {**LLAMA_8B, "layer_types": ["full_attention", "sliding_attention"]},
            "sliding-window",
        ),
        ({**LLAMA_8B, "dtype": "float32"}, "set dtype explicitly"),
        ({"num_attention_heads": 8}, "lacks the KV shape"),
    ],
)
def test_unsupported_models_are_refused(tmp_path: Path, cfg: dict, needle: str) -> None:
    """Architectures whose KV size this arithmetic would get wrong are refused, not guessed."""
    with pytest.raises(PreflightError, match=needle):
        read_geometry(_config(_model(tmp_path, **cfg)))


def test_kv_heads_must_divide_over_devices(tmp_path: Path) -> None:
    """8 KV heads cannot be split over 3 devices."""
    with pytest.raises(PreflightError, match="do not divide"):
        read_geometry(_config(_model(tmp_path, **LLAMA_8B), tensor_parallel_size=3))


METRICS = """# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig
# TYPE vllm:cache_config_info gauge
vllm:cache_config_info{block_size="128",enable_prefix_caching="True",engine="0",num_gpu_blocks="32"} 1.0
"""
MODELS = {"object": "list", "data": [{"id": "m", "max_model_len": 2048}]}


def test_read_back_agrees_with_plan(tmp_path: Path) -> None:
    """vLLM's metrics and /v1/models parse to the planned pool; no problems."""
    model = _model(
        tmp_path,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=32,
        hidden_size=64,
        dtype="bfloat16",
    )
    config = _config(model)
    got = parse_readback(METRICS, MODELS)
    assert got == ReadBack(
        num_blocks=32,
        block_size=128,
        prefix_caching=True,
        max_model_len=2048,
        model="m",
    )
    assert readback_problems(plan_pool(config), config, got) == []


def test_read_back_disagreements_are_each_reported(tmp_path: Path) -> None:
    """A shrunken context, other block counts and a missing metric are all caught."""
    model = _model(
        tmp_path,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=32,
        hidden_size=64,
        dtype="bfloat16",
    )
    config = _config(model)
    shrunk = parse_readback(METRICS.replace('"32"', '"16"'), {"data": [{"id": "x", "max_model_len": 1024}]})
    problems = readback_problems(plan_pool(config), config, shrunk)
    assert any("KV blocks 16 != planned 32" in p for p in problems)
    assert any("max_model_len 1024 != configured 2048" in p for p in problems)
    assert any("served model 'x'" in p for p in problems)
    with pytest.raises(PreflightError, match="no vllm:cache_config_info"):
        parse_readback("# nothing\n", MODELS)
    with pytest.raises(PreflightError, match="incomplete"):
        parse_readback(METRICS, {"data": []})
