"""Quarantine: upstreams, vendors or vendor models taken out of routing, shared by every replica.

One row per quarantine in ``upstream_quarantines``; a release sets ``released_us`` on it (the row
is kept, so the table is also the history). Each change is appended to the chained audit events
too (``upstream_quarantined`` / ``upstream_released``, with actor and reason): the table is the
state replicas poll, the events are the evidence.

A quarantine names exactly one of an upstream (our name) or a provider (the vendor, as upstreams
declare it; case ignored), optionally narrowed to one vendor model id (``provider_model``, exact).
Data functions take the store and own one short transaction each.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import BigInteger, Index, Integer, String, Text, and_, insert, select, update
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.orm import Mapped, mapped_column

from audit.db import inserted_id, write_transaction
from audit.errors import AuditError
from audit.models import Base
from audit.timeutil import from_us, to_us

__all__ = ["QuarantineEntry", "QuarantineError", "UpstreamQuarantine", "active_quarantines",
           "list_quarantines", "quarantine", "release"]  # fmt: skip

QUARANTINED, RELEASED = "upstream_quarantined", "upstream_released"


class QuarantineError(AuditError):
    """A quarantine or release that cannot be done as asked (the message says why)."""


class UpstreamQuarantine(Base):
    """One quarantine; active while ``released_us`` is NULL."""

    __tablename__ = "upstream_quarantines"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    upstream: Mapped[str | None] = mapped_column(String(200))
    provider: Mapped[str | None] = mapped_column(String(200))  # stored lowercase
    model: Mapped[str | None] = mapped_column(String(200))  # a vendor model id; NULL: all
    reason: Mapped[str] = mapped_column(Text, nullable=False)
    actor: Mapped[str] = mapped_column(String(200), nullable=False)
    created_us: Mapped[int] = mapped_column(BigInteger, nullable=False)
    released_us: Mapped[int | None] = mapped_column(BigInteger)
    released_by: Mapped[str | None] = mapped_column(String(200))
    release_reason: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (Index("ix_upstream_quarantines_released_us", "released_us"),)


_Q = UpstreamQuarantine.__table__


@dataclass(frozen=True, slots=True)
class QuarantineEntry:
    id: int
    upstream: str | None
    provider: str | None
    model: str | None
    reason: str
    actor: str
    since: datetime
    released_at: datetime | None = None
    released_by: str | None = None
    release_reason: str | None = None

    def covers(self, upstream: str, provider: str | None, provider_model: str) -> bool:
        """Does this quarantine take (``upstream``, ``provider_model``) out of routing?"""
        if self.upstream is not None and self.upstream != upstream:
            return False
        if self.provider is not None and (provider is None or self.provider != provider.lower()):
            return False
        return self.model is None or self.model == provider_model

    @property
    def target(self) -> str:
        """What it names, for messages: ``upstream cf`` or ``provider examplecloud, model m``."""
        who = f"upstream {self.upstream}" if self.upstream is not None else f"provider {self.provider}"
        return who + (f", model {self.model}" if self.model is not None else "")

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "upstream": self.upstream, "provider": self.provider, "model": self.model,
                "reason": self.reason, "actor": self.actor, "since": self.since.isoformat(),
                "released_at": self.released_at.isoformat() if self.released_at else None,
                "released_by": self.released_by, "release_reason": self.release_reason}  # fmt: skip


def _entry(r: Any) -> QuarantineEntry:
    return QuarantineEntry(int(r.id), r.upstream, r.provider, r.model, r.reason, r.actor,
                           from_us(r.created_us), from_us(r.released_us) if r.released_us else None,
                           r.released_by, r.release_reason)  # fmt: skip


def _text(value: str | None, field: str, limit: int) -> str:
    if value is None or not value.strip() or len(value) > limit or not value.isprintable():
        raise QuarantineError(f"{field}: 1 to {limit} printable characters required")
    return value.strip()


def _target(upstream: str | None, provider: str | None, model: str | None) -> tuple[str | None, str | None, str | None]:
    if (upstream is None) == (provider is None):
        raise QuarantineError("name exactly one of an upstream or a provider")
    return (_text(upstream, "upstream", 200) if upstream is not None else None,
            _text(provider, "provider", 200).lower() if provider is not None else None,
            _text(model, "model", 200) if model is not None else None)  # fmt: skip


def _same_target(upstream: str | None, provider: str | None, model: str | None) -> Any:
    def eq(col: Any, value: str | None) -> Any:
        return col.is_(None) if value is None else col == value

    return and_(eq(_Q.c.upstream, upstream), eq(_Q.c.provider, provider), eq(_Q.c.model, model))


async def active_quarantines(engine: AsyncEngine) -> tuple[QuarantineEntry, ...]:
    """Every quarantine in force, oldest first (what each replica polls)."""
    stmt = select(_Q).where(_Q.c.released_us.is_(None)).order_by(_Q.c.id)
    async with engine.connect() as conn:
        return tuple(_entry(r) for r in (await conn.execute(stmt)).all())


async def list_quarantines(engine: AsyncEngine, *, include_released: bool = False,
                           limit: int = 200) -> tuple[QuarantineEntry, ...]:  # fmt: skip
    """Quarantines, newest first; released ones too when asked (the history)."""
    stmt = select(_Q).order_by(_Q.c.id.desc()).limit(limit)
    if not include_released:
        stmt = stmt.where(_Q.c.released_us.is_(None))
    async with engine.connect() as conn:
        return tuple(_entry(r) for r in (await conn.execute(stmt)).all())


async def quarantine(store: Any, *, upstream: str | None = None, provider: str | None = None,
                     model: str | None = None, reason: str, actor: str,
                     now: datetime | None = None) -> QuarantineEntry:  # fmt: skip
    """Take the target out of routing; refuses a target already quarantined (its id is named)."""
    target = _target(upstream, provider, model)
    reason, actor = _text(reason, "reason", 2000), _text(actor, "actor", 200)
    at = to_us(now or datetime.now(UTC))
    async with write_transaction(store.engine) as conn:
        existing = (await conn.execute(
            select(_Q.c.id).where(_Q.c.released_us.is_(None), _same_target(*target)))).scalar()  # fmt: skip
        if existing is not None:
            raise QuarantineError(f"already quarantined (quarantine #{existing}); release it first")
        result = await conn.execute(insert(_Q).values(
            upstream=target[0], provider=target[1], model=target[2], reason=reason, actor=actor,
            created_us=at))  # fmt: skip
        qid = inserted_id(result)
    entry = QuarantineEntry(qid, *target, reason, actor, from_us(at))
    await store.record_event(QUARANTINED, {k: v for k, v in entry.as_dict().items()
                                           if not k.startswith("release")})  # fmt: skip
    return entry


async def release(store: Any, quarantine_id: int | None = None, *, upstream: str | None = None,
                  provider: str | None = None, model: str | None = None, reason: str, actor: str,
                  now: datetime | None = None) -> QuarantineEntry:  # fmt: skip
    """Put a quarantined target back into routing, by id or by the target it named."""
    reason, actor = _text(reason, "reason", 2000), _text(actor, "actor", 200)
    if quarantine_id is not None:
        if upstream is not None or provider is not None or model is not None:
            raise QuarantineError("name the quarantine by id or by its target, not both")
        where = _Q.c.id == quarantine_id
    else:
        where = _same_target(*_target(upstream, provider, model))
    at = to_us(now or datetime.now(UTC))
    async with write_transaction(store.engine) as conn:
        row = (await conn.execute(select(_Q).where(where, _Q.c.released_us.is_(None)))).first()
        if row is None:
            raise QuarantineError("no quarantine in force matches")
        # The released_us guard makes two concurrent releases release once.
        done = await conn.execute(update(_Q).where(_Q.c.id == row.id, _Q.c.released_us.is_(None))
                                  .values(released_us=at, released_by=actor, release_reason=reason))  # fmt: skip
        if done.rowcount != 1:
            raise QuarantineError("no quarantine in force matches")
    entry = _entry(row)
    await store.record_event(RELEASED, {"id": entry.id, "upstream": entry.upstream,
                                        "provider": entry.provider, "model": entry.model,
                                        "reason": reason, "actor": actor})  # fmt: skip
    return QuarantineEntry(entry.id, entry.upstream, entry.provider, entry.model, entry.reason,
                           entry.actor, entry.since, from_us(at), actor, reason)  # fmt: skip
