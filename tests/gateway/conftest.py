"""Fixtures for the gateway tests: fake upstreams (one shared, one on-prem) and a running gateway."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import FakeUpstream
from tests.support.harness import FakeUpstreams, GatewayHarness


@pytest.fixture(scope="session")
def classifier() -> Any:
    """One classifier for the session: building presidio's registry takes a moment."""
    from tiers import Classifier
    from tiers.config import TiersConfig

    return Classifier(TiersConfig(internal_domains=("corp.example.com",)))


@pytest.fixture
def fakes() -> Iterator[FakeUpstreams]:
    """``vendor`` (shared) and ``local`` (on-prem, serving a hardened manifest), both ledgered."""
    with FakeUpstreams(FakeUpstream(name="vendor", kind="shared"), FakeUpstream(name="local", kind="onprem")) as f:
        yield f


def upstream_config(fakes: FakeUpstreams, **per_name: dict[str, Any]) -> list[dict[str, Any]]:
    """``vendor`` then ``local``, both offering ``chat`` and ``embed``; ``local`` also ``local-only``."""
    ups = [
        {"name": "vendor", "base_url": fakes.base_url("vendor"), "kind": "shared", "max_tier": 2,
         "models": {"chat": "vendor-chat", "embed": "vendor-embed"}, "context_window": 100_000,
         "timeouts": {"read": 10}},
        {"name": "local", "base_url": fakes.base_url("local"), "kind": "onprem", "max_tier": 3,
         "models": {"chat": "local-chat", "embed": "local-embed", "local-only": "local-chat"},
         "context_window": 32_768, "timeouts": {"read": 10}},
    ]  # fmt: skip
    for up in ups:
        up.update(per_name.get(up["name"], {}))
    return ups


def base_config(fakes: FakeUpstreams, **extra: Any) -> dict[str, Any]:
    cfg: dict[str, Any] = {"upstreams": upstream_config(fakes), "limits": {"auth_cache_s": 0}}
    cfg.update(extra)
    return cfg


@pytest.fixture
def gateway(fakes: FakeUpstreams, sqlite_db: str, tmp_path: Path, classifier: Any) -> Iterator[GatewayHarness]:
    """A gateway on SQLite in front of ``vendor`` and ``local``."""
    with GatewayHarness(sqlite_db, tmp_path, base_config(fakes), classifier=classifier) as gw:
        yield gw
