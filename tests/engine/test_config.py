"""The engine config: typed, unknown keys rejected, errors name the key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.config import EngineConfigError, load_engine_config


def _write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "m").mkdir(exist_ok=True)
    (tmp_path / "m" / "config.json").write_text(json.dumps({}))
    path = tmp_path / "engine.yaml"
    path.write_text(text)
    return path


BASE = "model: m\nserved_model_name: tiny\nmax_model_len: 2048\nkv_cache_memory_bytes: 1048576\n"


def test_valid_config_loads_with_relative_model_path(tmp_path: Path) -> None:
    """A minimal config loads; the model path is resolved next to the config file."""
    cfg = load_engine_config(_write(tmp_path, BASE))
    assert cfg.model == (tmp_path / "m").resolve()
    assert cfg.cache_salt.require and cfg.prefix_caching and cfg.block_size == 16


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ("max_model_len_auto: true\n", "max_model_len_auto"),
        ("cache_salt: {require: true, secrets: x}\n", "cache_salt.secrets"),
        ("port: 0\n", "port"),
        ("dtype: fp8\n", "dtype"),
        ("cache_salt: {secret_file: /nonexistent}\n", "cache_salt"),
    ],
)
def test_bad_keys_are_named(tmp_path: Path, extra: str, needle: str) -> None:
    """Unknown or invalid keys fail loading with the offending key in the message."""
    with pytest.raises(EngineConfigError, match=needle):
        load_engine_config(_write(tmp_path, BASE + extra))


def test_missing_model_dir_and_bad_yaml(tmp_path: Path) -> None:
    """A model path without config.json, non-YAML and non-mapping files are refused."""
    with pytest.raises(EngineConfigError, match="model"):
        load_engine_config(_write(tmp_path, BASE.replace("model: m", "model: nowhere")))
    with pytest.raises(EngineConfigError, match="not valid YAML"):
        load_engine_config(_write(tmp_path, "a: [b"))
    with pytest.raises(EngineConfigError, match="mapping"):
        load_engine_config(_write(tmp_path, "- 1\n"))


def test_preflight_command_prints_the_plan_or_refuses(tmp_path: Path) -> None:
    """`tiergate engine preflight` exits 0 with the pool, or 1 naming the shortfall."""
    from click.testing import CliRunner

    from engine.cli import engine_group

    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text(
        json.dumps(
            {
                "num_hidden_layers": 2,
                "num_attention_heads": 2,
                "num_key_value_heads": 1,
                "head_dim": 32,
                "hidden_size": 64,
                "dtype": "bfloat16",
            }
        )
    )
    good = tmp_path / "good.yaml"
    good.write_text(BASE + "block_size: 128\n")
    ok = CliRunner().invoke(engine_group, ["preflight", "--config", str(good)])
    assert ok.exit_code == 0 and "32 blocks x 128 tokens (3968 usable" in ok.output
    bad = tmp_path / "bad.yaml"
    bad.write_text(BASE.replace("2048", "4096") + "block_size: 128\n")
    refused = CliRunner().invoke(engine_group, ["preflight", "--config", str(bad)])
    assert refused.exit_code == 1 and "preflight refused: KV pool holds 3968 tokens" in refused.output
