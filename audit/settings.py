"""``AuditSettings``: the ``audit:`` block of the gateway's YAML."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["MIN_RETENTION_DAYS", "AuditSettings"]

MIN_RETENTION_DAYS = 90


class AuditSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str = "sqlite+aiosqlite:///./var/tiergate.db"
    """SQLAlchemy async URL: ``sqlite+aiosqlite:///path`` (embedded) or ``postgresql+asyncpg://…``."""
    retention_days: int = Field(90, ge=1)
    """Audit rows older than this are purged. Below 90 only with ``force_retention_reason``."""
    force_retention_reason: str | None = None
    """Why a retention below 90 days is acceptable; recorded in every purge event."""
    checkpoint_dir: str = "./var/checkpoints"
    """Where signed chain checkpoints are written: keep it off the database's host or volume."""
    checkpoint_interval_s: float = Field(60, gt=0)
    """How often the server writes a checkpoint; rows newer than the last one are less protected."""
    checkpoint_keep: int | None = Field(1000, ge=1)
    """How many of the newest checkpoint files the server keeps (1000 at the default interval:
    about 16 hours). Older ones are deleted once they agree with the log or their rows were purged;
    one that disagrees with the log is evidence and is never deleted. None: never delete any (for
    write-once storage, where deleting fails)."""
    purge_interval_s: float | None = Field(None, gt=0)
    """Run the retention purge inside the server this often (None: only ``tiergate audit purge``)."""
    sqlite_synchronous: Literal["FULL", "NORMAL"] = "FULL"
    """SQLite ``synchronous`` in WAL mode. FULL fsyncs each (group) commit: a committed row
    survives kill -9 *and* power loss. NORMAL survives kill -9 only (the WAL is in the OS cache)."""
    max_batch: int = Field(1000, ge=1)
    """Most records one group commit carries. 1 turns group commit off (one transaction each)."""
    write_timeout_s: float = Field(10.0, gt=0)
    """A record not committed within this many seconds raises ``AuditWriteError``."""
    outcome_linger_s: float = Field(0.05, ge=0, le=5)
    """How long an outcome row may wait to share the next write-ahead transaction. The default saves
    a commit per request at low concurrency (one fsync instead of two: ≈ 0.2 ms less per request
    measured at concurrency 1) for at most 50 ms before an outcome is visible; 0 commits it right
    after the answer. Outcomes never hold up an answer, and write-ahead rows never linger."""

    @model_validator(mode="after")
    def _check_retention(self) -> AuditSettings:
        if self.retention_days < MIN_RETENTION_DAYS and not (self.force_retention_reason or "").strip():
            raise ValueError(f"retention_days below {MIN_RETENTION_DAYS} requires force_retention_reason")
        return self
