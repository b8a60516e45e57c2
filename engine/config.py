"""The engine's typed configuration (``engine.yaml``): unknown keys are rejected, paths checked.

Example::

    model: /models/llama-3.1-8b-instruct     # a local HF directory; nothing is downloaded
    served_model_name: llama-3.1-8b
    max_model_len: 32768
    kv_cache_memory_bytes: 34359738368        # KV pool memory per device
    block_size: 16                            # GPU; the CPU backend uses 128
    port: 8000                                # the hardened front; vLLM itself listens on loopback
    cache_salt:
      require: true                           # 400 for any generation request without cache_salt

Only settings whose hardening can be proved are exposed: there is deliberately no passthrough of
arbitrary vLLM flags (one ``--max-model-len auto`` would silently shrink the context).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from formats.yaml_model import YamlModelError, load_model_file

__all__ = ["CacheSaltConfig", "DisaggregationConfig", "EngineConfig", "EngineConfigError", "load_engine_config"]


class EngineConfigError(Exception):
    """The engine config file is missing, not YAML, or invalid; the message names the key."""


class CacheSaltConfig(BaseModel):
    """How the front treats ``cache_salt`` (vLLM's per-request prefix-cache namespace)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    require: bool = True
    """Reject (400) every generation request that carries no ``cache_salt``."""
    secret_file: Path | None = None
    """When set, the front derives the salt itself from the ``X-Tiergate-Tenant`` header with this
    key (same derivation as the gateway) and overwrites any salt in the body."""


class DisaggregationConfig(BaseModel):
    """This engine is one half of a prefill/decode split behind ``engine.pd.router``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: Literal["prefill", "decode"]
    """Prefill instances produce KV (``kv_producer``), decode instances consume it."""
    connector: dict[str, Any]
    """The KV transport's own vLLM transfer config: ``kv_connector`` (e.g. ``NixlConnector``),
    optional ``kv_connector_module_path`` and ``kv_connector_extra_config``."""
    record_dir: Path
    """A directory both halves share: the guard's transfer records and acknowledgements."""
    guard: bool = True
    """Wrap the transport in ``engine.pd.guard.TiergateKVGuard``. Off, the manifest reports no
    split protections and the gateway keeps Tier 3 away from the deployment."""
    release_timeout_s: float = Field(default=30.0, gt=0)
    """How long blocks of a request finished mid-transfer wait for the peer before being zeroed."""


class EngineConfig(BaseModel):
    """Everything ``tiergate engine serve`` needs; see the module docstring for an example."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: Path
    """A local Hugging Face model directory (config.json, weights, tokenizer)."""
    served_model_name: str = Field(min_length=1)
    """The model name clients send and /v1/models lists."""
    max_model_len: int = Field(gt=0)
    """The context length (prompt + output tokens) the engine must be able to hold."""
    kv_cache_memory_bytes: int = Field(gt=0)
    """Memory for the KV pool, per device; the pool in tokens is computed from it."""
    block_size: int = Field(default=16, gt=0)
    """Tokens per KV block; always passed to vLLM explicitly (CPU backend: 128)."""
    dtype: Literal["auto", "bfloat16", "float16", "float32"] = "auto"
    """Model and KV dtype; "auto" takes the model's config (bf16/fp16 models only)."""
    tensor_parallel_size: int = Field(default=1, gt=0)
    """Devices the model is split over; KV heads are divided across them."""
    host: str = "127.0.0.1"
    """Where the hardened front listens."""
    port: int = Field(default=8000, gt=0, lt=65536)
    """The front's port: the only one clients may use."""
    vllm_port: int | None = Field(default=None, gt=0, lt=65536)
    """vLLM's own port on 127.0.0.1; None picks a free one."""
    prefix_caching: bool = True
    """vLLM's prefix cache; with it on, ``cache_salt`` keeps tenants apart."""
    cache_salt: CacheSaltConfig = CacheSaltConfig()
    """Salting policy, see ``CacheSaltConfig``."""
    enforce_eager: bool = False
    """No CUDA graphs / compilation (faster start; needed on the CPU backend)."""
    allow_untested_vllm: bool = False
    """Let the KV hygiene plugin run on a vLLM version it was not tested with (reported in the
    manifest as ``version_override``)."""
    state_dir: Path | None = None
    """Where the plugin's per-process evidence and vLLM's log go; None = a new temp dir."""
    startup_timeout_s: float = Field(default=900.0, gt=0)
    """How long vLLM may take to become healthy before the start is abandoned."""
    upstream_timeout_s: float = Field(default=600.0, gt=0)
    """The front's read timeout towards vLLM, per request."""
    disaggregation: DisaggregationConfig | None = None
    """Prefill/decode split: this instance's half and its KV transport; None = single node."""
    stop_grace_s: float = Field(default=15.0, gt=0)
    """How long vLLM gets to exit after SIGTERM before SIGKILL: on a normal stop, and when the
    orphan watchdog ends a vLLM whose supervisor died."""

    @field_validator("model")
    @classmethod
    def _model_dir_exists(cls, value: Path) -> Path:
        if not (value / "config.json").is_file():
            raise ValueError(f"{value} is not a model directory (no config.json)")
        return value

    @field_validator("cache_salt")
    @classmethod
    def _secret_file_exists(cls, value: CacheSaltConfig) -> CacheSaltConfig:
        if value.secret_file is not None and not value.secret_file.is_file():
            raise ValueError(f"cache_salt.secret_file {value.secret_file} does not exist")
        return value


def load_engine_config(path: Path) -> EngineConfig:
    """Read and validate ``path`` (formats.yaml_model: duplicate keys refused); raise
    ``EngineConfigError`` naming the file, the line and the offending key."""

    def resolve(raw: Any) -> Any:
        if not isinstance(raw, dict):
            raise EngineConfigError(f"engine config {path} must be a mapping")
        out = dict(raw)
        for key in ("model", "state_dir"):  # relative to the file, not to the working directory
            if isinstance(out.get(key), str) and not Path(out[key]).is_absolute():
                out[key] = str((path.parent / out[key]).resolve())
        return out

    try:
        return load_model_file(EngineConfig, path, prepare=resolve)
    except YamlModelError as exc:
        raise EngineConfigError("invalid engine config:\n  " + str(exc).replace("\n", "\n  ")) from None
