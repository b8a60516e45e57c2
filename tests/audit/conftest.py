"""Audit fixtures: a migrated store on SQLite or PostgreSQL, record factories, a settable clock."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from audit import AuditSettings, AuditStore, Outcome, RequestRecord
from migrations import upgrade

FP_KEY = b"test-fingerprint-key-0123456789abcdef"
CP_KEY = b"test-checkpoint-key-0123456789abcdef"
T0 = datetime(2026, 9, 1, 12, 0, tzinfo=UTC)


@dataclass
class Clock:
    now: datetime = T0

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kw: float) -> None:
        self.now += timedelta(**kw)


@pytest.fixture
def clock() -> Clock:
    return Clock()


def make_settings(url: str, tmp_path: Path, **kw: object) -> AuditSettings:
    return AuditSettings(url=url, checkpoint_dir=str(tmp_path / "checkpoints"), **kw)


def write_cli_config(tmp_path: Path, db_url: str) -> str:
    """A minimal ``tiergate`` YAML config for the CLI commands over ``db_url``; returns its path."""
    cfg = {
        "audit": {"url": db_url, "checkpoint_dir": str(tmp_path / "checkpoints")},
        "secrets": {
            "fingerprint_key": FP_KEY.decode(),
            "checkpoint_key": CP_KEY.decode(),
            "cache_salt_key": "salt-key-for-tests-0123456789",
        },  # fmt: skip
        "state_dir": str(tmp_path / "state"),
    }
    path = tmp_path / "tiergate.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return str(path)


async def open_store(settings: AuditSettings, clock: Clock | None = None) -> AuditStore:
    store = await AuditStore.open(settings, fingerprint_key=FP_KEY, checkpoint_key=CP_KEY,
                                  clock=clock)  # fmt: skip
    await upgrade(store)
    return store


def request(
    *,
    request_id: str | None = None,
    at: datetime = T0,
    tenant: str | None = "acme",
    key_id: str | None = "k1",
    upstream: str | None = "openai-shared",
    kind: str | None = "shared",
    provider: str | None = "openai",
    model: str | None = "gpt-x",
    tokens: int = 100,
    tier: int = 1,
    findings: dict[str, int] | None = None,
    stripped: bool = False,
    stream: bool = False,
    fingerprint: str | None = None,
    segments: tuple[str, ...] = (),
    endpoint: str = "chat",
) -> RequestRecord:
    return RequestRecord(
        request_id=request_id or uuid.uuid4().hex,
        created_at=at,
        tenant=tenant,
        key_id=key_id,
        endpoint=endpoint,
        client_model=model,
        upstream=upstream,
        upstream_kind=kind,
        provider_model=model,
        prompt_chars=tokens * 4,
        prompt_tokens=tokens,
        tier=tier,
        findings=findings or {},
        stripped=stripped,
        stream=stream,
        fingerprint=fingerprint,
        segment_fingerprints=segments,
        provider=provider,
    )


def outcome(request_id: str, status: str = "ok", http: int = 200) -> Outcome:
    return Outcome(request_id=request_id, status=status, http_status=http, upstream_status=http,
                   usage_prompt_tokens=100, usage_completion_tokens=5, latency_ms=12.5)  # fmt: skip
