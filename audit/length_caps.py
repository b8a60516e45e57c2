"""Probe-lowered safe lengths: an upstream's prompt-token limit cut below a failed ladder rung.

One row per lowering in ``upstream_length_caps``; an admin's restore sets ``restored_us`` (the row
is kept: the table is also the history). While a row is active, every replica limits that
upstream's prompts to ``max_prompt_tokens`` (the smallest active one wins), whatever
``safe_prompt_tokens`` the config says. Each change is also an audit event
(``safe_length_lowered`` / ``safe_length_restored``): the table is the state replicas poll, the
events are the evidence. Data functions take the store and own one short transaction each.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import BigInteger, Index, Integer, String, Text, insert, select, update
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.orm import Mapped, mapped_column

from audit.db import inserted_id, write_transaction
from audit.errors import AuditError
from audit.models import Base
from audit.timeutil import from_us, to_us

__all__ = ["LOWERED", "RESTORED", "LengthCap", "LengthCapError", "UpstreamLengthCap", "active_caps",
           "lower_safe_length", "restore_safe_length"]  # fmt: skip

LOWERED, RESTORED = "safe_length_lowered", "safe_length_restored"


class LengthCapError(AuditError):
    """A restore that cannot be done as asked (the message says why)."""


class UpstreamLengthCap(Base):
    """One lowering of an upstream's safe prompt length; active while ``restored_us`` is NULL."""

    __tablename__ = "upstream_length_caps"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    upstream: Mapped[str] = mapped_column(String(200), nullable=False)
    max_prompt_tokens: Mapped[int] = mapped_column(BigInteger, nullable=False)
    failed_rung_tokens: Mapped[int | None] = mapped_column(BigInteger)
    reason: Mapped[str] = mapped_column(Text, nullable=False)
    actor: Mapped[str] = mapped_column(String(200), nullable=False)
    created_us: Mapped[int] = mapped_column(BigInteger, nullable=False)
    restored_us: Mapped[int | None] = mapped_column(BigInteger)
    restored_by: Mapped[str | None] = mapped_column(String(200))
    restore_reason: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (Index("ix_upstream_length_caps_restored_us", "restored_us"),)


_C = UpstreamLengthCap.__table__


@dataclass(frozen=True, slots=True)
class LengthCap:
    id: int
    upstream: str
    max_prompt_tokens: int
    failed_rung_tokens: int | None
    reason: str
    actor: str
    since: datetime

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "upstream": self.upstream, "max_prompt_tokens": self.max_prompt_tokens,
                "failed_rung_tokens": self.failed_rung_tokens, "reason": self.reason, "actor": self.actor,
                "since": self.since.isoformat()}  # fmt: skip


def _cap(r: Any) -> LengthCap:
    return LengthCap(int(r.id), r.upstream, int(r.max_prompt_tokens),
                     None if r.failed_rung_tokens is None else int(r.failed_rung_tokens), r.reason, r.actor,
                     from_us(r.created_us))  # fmt: skip


def _text(value: str, field: str, limit: int) -> str:
    if not value or not value.strip() or len(value) > limit or not value.isprintable():
        raise LengthCapError(f"{field}: 1 to {limit} printable characters required")
    return value.strip()


async def active_caps(engine: AsyncEngine) -> tuple[LengthCap, ...]:
    """Every lowering in force, oldest first (what each replica polls)."""
    stmt = select(_C).where(_C.c.restored_us.is_(None)).order_by(_C.c.id)
    async with engine.connect() as conn:
        return tuple(_cap(r) for r in (await conn.execute(stmt)).all())


async def lower_safe_length(store: Any, *, upstream: str, max_prompt_tokens: int, reason: str, actor: str,
                            failed_rung_tokens: int | None = None,
                            now: datetime | None = None) -> LengthCap | None:  # fmt: skip
    """Limit ``upstream`` to ``max_prompt_tokens``; None (nothing written) when a lowering in
    force already limits it as far or further: a limit is only ever lowered automatically."""
    if max_prompt_tokens < 0:
        raise LengthCapError("max_prompt_tokens must be >= 0")
    upstream, reason, actor = (
        _text(upstream, "upstream", 200),
        _text(reason, "reason", 2000),
        _text(actor, "actor", 200),
    )
    at = to_us(now or datetime.now(UTC))
    async with write_transaction(store.engine) as conn:
        lowest = (await conn.execute(select(_C.c.max_prompt_tokens).where(
            _C.c.upstream == upstream, _C.c.restored_us.is_(None)).order_by(_C.c.max_prompt_tokens).limit(1))).scalar()  # fmt: skip
        if lowest is not None and int(lowest) <= max_prompt_tokens:
            return None
        result = await conn.execute(insert(_C).values(
            upstream=upstream, max_prompt_tokens=max_prompt_tokens, failed_rung_tokens=failed_rung_tokens,
            reason=reason, actor=actor, created_us=at))  # fmt: skip
        cap = LengthCap(inserted_id(result), upstream, max_prompt_tokens, failed_rung_tokens,
                        reason, actor, from_us(at))  # fmt: skip
    await store.record_event(LOWERED, cap.as_dict())
    return cap


async def restore_safe_length(store: Any, *, upstream: str, reason: str, actor: str,
                              now: datetime | None = None) -> tuple[LengthCap, ...]:  # fmt: skip
    """End every lowering in force for ``upstream``: the configured safe length applies again."""
    upstream, reason, actor = (
        _text(upstream, "upstream", 200),
        _text(reason, "reason", 2000),
        _text(actor, "actor", 200),
    )
    at = to_us(now or datetime.now(UTC))
    async with write_transaction(store.engine) as conn:
        rows = (await conn.execute(select(_C).where(_C.c.upstream == upstream, _C.c.restored_us.is_(None))
                                   .order_by(_C.c.id))).all()  # fmt: skip
        if not rows:
            raise LengthCapError(f"the safe length of {upstream!r} is not lowered")
        await conn.execute(update(_C).where(_C.c.id.in_([r.id for r in rows]), _C.c.restored_us.is_(None))
                           .values(restored_us=at, restored_by=actor, restore_reason=reason))  # fmt: skip
    caps = tuple(_cap(r) for r in rows)
    await store.record_event(RESTORED, {"upstream": upstream, "ids": [c.id for c in caps], "reason": reason,
                                        "actor": actor})  # fmt: skip
    return caps
