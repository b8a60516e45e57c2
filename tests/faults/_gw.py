"""Config and process helpers shared by the fault tests (not a fixture module)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.support.harness import SECRETS

__all__ = ["chat_body", "one_upstream", "write_config"]


def one_upstream(base_url: str, *, name: str = "vendor", kind: str = "shared", read_s: float = 10.0,
                 **extra: Any) -> dict[str, Any]:  # fmt: skip
    """One upstream offering the public model ``chat``."""
    up = {"name": name, "base_url": base_url, "kind": kind, "max_tier": 3 if kind == "onprem" else 2,
          "models": {"chat": f"{name}-chat"}, "context_window": 100_000,
          "timeouts": {"read": read_s, "connect": 2.0}}  # fmt: skip
    up.update(extra)
    return up


def write_config(tmp_path: Path, db_url: str, upstreams: list[dict[str, Any]], **extra: Any) -> Path:
    """A YAML config for ``tiergate serve`` in a child process."""
    cfg: dict[str, Any] = {
        "upstreams": upstreams,
        "audit": {"url": db_url, "checkpoint_dir": str(tmp_path / "checkpoints")},
        "secrets": SECRETS,
        "state_dir": str(tmp_path / "var"),
        "server": {"auto_migrate": True, "log_level": "info"},
        "limits": {"auth_cache_s": 0},
    }
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(cfg.get(key), dict):
            cfg[key] = {**cfg[key], **value}
        else:
            cfg[key] = value
    path = tmp_path / "tiergate.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def chat_body(text: str, *, model: str = "chat", stream: bool = False) -> dict[str, Any]:
    return {"model": model, "stream": stream, "messages": [{"role": "user", "content": text}]}
