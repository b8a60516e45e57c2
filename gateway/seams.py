"""What the gateway needs from the audit store, as protocols: the seams tests fill with fakes.

``audit.store.AuditStore`` satisfies all of them (checked by mypy in ``tests/gateway/
test_seams.py``); a test's fake or wrapper implements the one its consumer takes. Each consumer
asks for the narrowest one: the pipeline writes the audit log, the authenticator looks keys up,
``create_app`` wires the whole server to one store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

    from audit.types import KeyInfo, Outcome, RequestRecord

__all__ = ["AuditStore", "KeyStore", "WriteAheadLog"]


class WriteAheadLog(Protocol):
    """The request path's writes (``Pipeline.store``)."""

    async def record_request(self, rec: RequestRecord) -> int:
        """Commit the write-ahead row; return only once it is COMMITTED (its chain seq)."""
        ...

    async def record_outcome(self, out: Outcome, *, lazy: bool = False) -> int:
        """Append an outcome; ``lazy``: it may wait to share the next write-ahead transaction."""
        ...

    async def record_refusal(self, rec: RequestRecord, out: Outcome) -> tuple[int, int]:
        """A request refused before forwarding: its row (not forwarded) and outcome, together."""
        ...


class KeyStore(Protocol):
    """Client keys, as the authenticator looks them up (``gateway.auth.Authenticator``)."""

    async def authenticate(self, presented: str) -> KeyInfo | None:
        """The key's info for a presented ``tg_<id>_<secret>``; None when unknown (constant time)."""
        ...


class AuditStore(WriteAheadLog, KeyStore, Protocol):
    """The whole store as the running server uses it (``create_app(store=...)``): the request
    path, readiness, events, the shared routing state replicas poll, and the engine the dashboard,
    SIEM stream and alerts read through."""

    @property
    def engine(self) -> AsyncEngine: ...

    async def ping(self, timeout_s: float = 5.0) -> None:
        """Raise unless the database answers and the writer is running (``/readyz``)."""
        ...

    async def record_event(self, kind: str, detail: dict[str, Any]) -> int: ...

    async def active_quarantines(self) -> tuple[Any, ...]: ...

    async def active_length_caps(self) -> tuple[Any, ...]: ...
