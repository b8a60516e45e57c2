"""The guard's settings, as they travel inside vLLM's ``--kv-transfer-config``.

``kv_connector_extra_config.tiergate`` holds them; unknown keys are rejected (a misspelt timeout
must not silently become the default). ``guard_transfer_config`` builds the whole JSON value the
launcher passes to vLLM, so that the engine config is the only place a split is configured.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = [
    "GUARD_CONNECTOR",
    "GUARD_MODULE",
    "GUARD_VERSION",
    "PROTECTIONS",
    "TRANSFER_ID_KEY",
    "GuardSettings",
    "guard_transfer_config",
]

GUARD_CONNECTOR = "TiergateKVGuard"
GUARD_MODULE = "engine.pd.guard"
GUARD_VERSION = "0.1.0"
TRANSFER_ID_KEY = "tiergate_transfer_id"
# What the guard enforces, as the manifest names it.
PROTECTIONS = ("kv_boundary_check", "kv_deferred_release", "kv_checksums")


class GuardSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    inner: dict[str, Any]
    """The wrapped connector's own KV transfer config (``kv_connector``, optional
    ``kv_connector_module_path`` and ``kv_connector_extra_config``); role and failure policy are
    the guard's."""
    record_dir: str = Field(min_length=1)
    """The directory both instances share for transfer records and acknowledgements."""
    release_timeout_s: float = Field(default=30.0, gt=0)
    """How long blocks of a request finished mid-transfer wait for the peer before being zeroed
    and released. Must exceed the transport's longest in-flight time."""
    peer_ranks: int | None = Field(default=None, gt=0)
    """Tensor-parallel ranks of the other side; None = the same as this side."""
    state_dir: str | None = None
    """Where the per-process evidence goes; None = ``TIERGATE_ENGINE_STATE_DIR``."""

    @classmethod
    def from_extra(cls, extra: dict[str, Any] | None) -> GuardSettings:
        raw = (extra or {}).get("tiergate")
        if not isinstance(raw, dict):
            raise ValueError("kv_connector_extra_config.tiergate is missing: the KV guard has no settings")
        try:
            settings = cls.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ValueError(f"kv_connector_extra_config.tiergate.{where}: {first['msg']}") from exc
        if not isinstance(settings.inner.get("kv_connector"), str):
            raise ValueError("kv_connector_extra_config.tiergate.inner.kv_connector is missing")
        if settings.inner.get("kv_connector") == GUARD_CONNECTOR:
            raise ValueError("the KV guard cannot wrap itself")
        unknown = set(settings.inner) - {"kv_connector", "kv_connector_module_path", "kv_connector_extra_config",
                                         "kv_buffer_device", "kv_ip", "kv_port"}  # fmt: skip
        if unknown:
            raise ValueError(f"kv_connector_extra_config.tiergate.inner: unsupported keys {sorted(unknown)}")
        return settings


def guard_transfer_config(role: Literal["kv_producer", "kv_consumer"], settings: GuardSettings) -> str:
    """The ``--kv-transfer-config`` JSON for a guarded instance of ``role``."""
    return json.dumps(
        {
            "kv_connector": GUARD_CONNECTOR,
            "kv_connector_module_path": GUARD_MODULE,
            "kv_role": role,
            "kv_load_failure_policy": "fail",
            "kv_connector_extra_config": {"tiergate": settings.model_dump(exclude_none=True)},
        }
    )
