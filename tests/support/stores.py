"""Fakes at the audit store's seam (``gateway.seams``): the real store, wrapped, with the calls a
test makes fail. Each implements ``gateway.seams.AuditStore`` member by member, so mypy checks it
against the protocol (``tests/gateway/test_seams.py``); what the dashboard reads beyond the seam is
passed through to the real store."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

    from audit.store import AuditStore
    from audit.types import KeyInfo, Outcome, RequestRecord

__all__ = ["FailingWrites", "WrappedStore"]


class WrappedStore:
    """Every member of the seam delegated to the real store; subclasses override what fails."""

    def __init__(self, inner: AuditStore) -> None:
        self.inner = inner

    @property
    def engine(self) -> AsyncEngine:
        return self.inner.engine

    async def record_request(self, rec: RequestRecord) -> int:
        return await self.inner.record_request(rec)

    async def record_outcome(self, out: Outcome, *, lazy: bool = False) -> int:
        return await self.inner.record_outcome(out, lazy=lazy)

    async def record_refusal(self, rec: RequestRecord, out: Outcome) -> tuple[int, int]:
        return await self.inner.record_refusal(rec, out)

    async def authenticate(self, presented: str) -> KeyInfo | None:
        return await self.inner.authenticate(presented)

    async def ping(self, timeout_s: float = 5.0) -> None:
        await self.inner.ping(timeout_s)

    async def record_event(self, kind: str, detail: dict[str, Any]) -> int:
        return await self.inner.record_event(kind, detail)

    async def active_quarantines(self) -> tuple[Any, ...]:
        return await self.inner.active_quarantines()

    async def active_length_caps(self) -> tuple[Any, ...]:
        return await self.inner.active_length_caps()

    async def close(self) -> None:
        await self.inner.close()

    def __getattr__(self, name: str) -> Any:  # the dashboard's reads beyond the seam (keys, quarantine)
        return getattr(self.inner, name)


class FailingWrites(WrappedStore):
    """Every write-ahead commit fails as if the database were gone (``ping`` too, unless told).
    ``failing`` may be switched off and on while the gateway runs."""

    def __init__(self, inner: AuditStore, *, ping_fails: bool = True) -> None:
        super().__init__(inner)
        self.failing = True
        self.ping_fails = ping_fails

    async def record_request(self, rec: RequestRecord) -> int:
        if self.failing:
            raise OSError("database is down")
        return await super().record_request(rec)

    async def ping(self, timeout_s: float = 5.0) -> None:
        if self.failing and self.ping_fails:
            raise OSError("database is down")
        await super().ping(timeout_s)
