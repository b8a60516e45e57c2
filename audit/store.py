"""``AuditStore``: the audit log's one entry point for the gateway, the CLI and the dashboard.

The store never keeps a transaction open between calls: every method opens a short transaction
(or hands its rows to the group-commit writer) and is done when it returns.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from audit import keys as _keys
from audit.chain import ChainHasher, derive_chain_key
from audit.checkpoint_pruning import PruneResult, prune_checkpoints
from audit.checkpoints import Checkpoint, CheckpointSigner, write_checkpoint
from audit.db import make_engine
from audit.errors import AuditUnavailable, AuditWriteError
from audit.fingerprint import fingerprint as _fingerprint
from audit.records import event_row, outcome_row, request_row
from audit.retention import PurgeResult, purge
from audit.settings import AuditSettings
from audit.timeutil import to_us
from audit.types import KeyInfo, Outcome, RequestRecord
from audit.verify import VerifyReport, verify_chain
from audit.writer import ChainWriter

__all__ = ["AuditStore"]

log = logging.getLogger("tiergate.audit")

Clock = Callable[[], datetime]


def _utcnow() -> datetime:
    return datetime.now(UTC)


class AuditStore:
    """Open with :meth:`open`; close with :meth:`close`."""

    def __init__(
        self,
        settings: AuditSettings,
        engine: AsyncEngine,
        *,
        fingerprint_key: bytes,
        checkpoint_key: bytes,
        clock: Clock = _utcnow,
    ) -> None:
        if not fingerprint_key or not checkpoint_key:
            raise ValueError("fingerprint_key and checkpoint_key are required")
        self.settings = settings
        self.engine = engine
        self._fp_key = bytes(fingerprint_key)
        self._hasher = ChainHasher(derive_chain_key(checkpoint_key))
        self._signer = CheckpointSigner(checkpoint_key)
        self._clock = clock
        self._writer = ChainWriter(engine, self._hasher, max_batch=settings.max_batch,
                                   timeout_s=settings.write_timeout_s, linger_s=settings.outcome_linger_s,
                                   sqlite_synchronous=settings.sqlite_synchronous)  # fmt: skip

    @classmethod
    async def open(
        cls,
        settings: AuditSettings,
        *,
        fingerprint_key: bytes,
        checkpoint_key: bytes,
        clock: Clock | None = None,
    ) -> AuditStore:
        """Build the engine and start the group-commit writer. Does not touch the schema."""
        engine = make_engine(settings.url, sqlite_synchronous=settings.sqlite_synchronous)
        store = cls(settings, engine, fingerprint_key=fingerprint_key,
                    checkpoint_key=checkpoint_key, clock=clock or _utcnow)  # fmt: skip
        store._writer.start()
        return store

    async def close(self) -> None:
        await self._writer.close()
        await self.engine.dispose()

    # -- health (the schema is migrations.upgrade's: migrations import audit, never the reverse) --

    async def ping(self, timeout_s: float = 5.0) -> None:
        """Raise ``AuditUnavailable`` unless the database answers and the writer is running."""
        if not self._writer.alive:
            raise AuditUnavailable("audit writer is not running")
        try:
            async with asyncio.timeout(timeout_s):
                async with self.engine.connect() as conn:
                    await conn.execute(text("SELECT seq FROM audit_chain_head WHERE id = 1"))
        except Exception as exc:  # noqa: BLE001 -- any driver failure reads as unavailable; its message may hold the DSN
            raise AuditUnavailable(f"audit database unavailable ({type(exc).__name__})") from None

    # -- the write-ahead log -----------------------------------------------------------------

    def fingerprint(self, normalized_text: str) -> str:
        """The store's keyed fingerprint (same as ``audit.fingerprint(key, text)``)."""
        return _fingerprint(self._fp_key, normalized_text)

    def _now_us(self) -> int:
        return to_us(self._clock())

    async def record_request(self, rec: RequestRecord) -> int:
        """Commit the write-ahead row; returns its chain sequence number only after COMMIT."""
        (seq,) = await self._writer.append([request_row(rec, forwarded=True)])
        return seq

    async def record_outcome(self, out: Outcome, *, lazy: bool = False) -> int:
        """Append the outcome. ``lazy``: it may wait ``outcome_linger_s`` to share the next
        write-ahead transaction (the gateway's choice: its client already has the answer)."""
        (seq,) = await self._writer.append([outcome_row(out, self._now_us())], lazy=lazy)
        return seq

    async def record_refusal(self, rec: RequestRecord, out: Outcome) -> tuple[int, int]:
        """A request refused before forwarding: its row and its outcome, in one transaction."""
        if rec.request_id != out.request_id:
            raise AuditWriteError("refusal outcome must carry the request's id")
        rows = [request_row(rec, forwarded=False), outcome_row(out, self._now_us())]
        first, second = await self._writer.append(rows)
        return first, second

    async def record_event(self, kind: str, detail: dict[str, Any]) -> int:
        (seq,) = await self._writer.append([event_row(kind, detail, self._now_us())])
        return seq

    # -- keys -------------------------------------------------------------------------------

    async def create_key(
        self, tenant: str, name: str, max_tier: int = 3, models: list[str] | None = None
    ) -> tuple[str, KeyInfo]:
        """Create a key; the plaintext is returned here and never again."""
        async with self.engine.begin() as conn:
            plaintext, info = await _keys.create_key(conn, tenant, name, max_tier, models,
                                                     now=self._clock())  # fmt: skip
        await self.record_event("key_created", {"key_id": info.key_id, "tenant": tenant,
                                                "max_tier": max_tier})  # fmt: skip
        return plaintext, info

    async def authenticate(self, presented: str) -> KeyInfo | None:
        async with self.engine.connect() as conn:
            return await _keys.authenticate(conn, presented)

    async def list_keys(self, tenant: str | None = None) -> list[KeyInfo]:
        async with self.engine.connect() as conn:
            return await _keys.list_keys(conn, tenant)

    async def revoke_key(self, key_id: str) -> bool:
        async with self.engine.begin() as conn:
            info = await _keys.revoke_key(conn, key_id, now=self._clock())
        if info is None:
            return False
        await self.record_event("key_revoked", {"key_id": key_id, "tenant": info.tenant})
        return True

    # -- quarantine -------------------------------------------------------------------------

    async def active_quarantines(self) -> tuple[Any, ...]:
        """The quarantines in force (``audit.quarantine``): what every replica polls."""
        from audit.quarantine import active_quarantines

        return await active_quarantines(self.engine)

    async def active_length_caps(self) -> tuple[Any, ...]:
        """The safe lengths lowered by ladder probes (``audit.length_caps``), as replicas poll them."""
        from audit.length_caps import active_caps

        return await active_caps(self.engine)

    # -- integrity and retention ------------------------------------------------------------

    async def write_checkpoint(self) -> Checkpoint:
        """Sign the current chain head into ``checkpoint_dir`` (outside the database)."""
        return await write_checkpoint(self.engine, self._signer,
                                      Path(self.settings.checkpoint_dir), self._clock())  # fmt: skip

    async def prune_checkpoints(self) -> PruneResult:
        """Delete checkpoint files beyond the newest ``checkpoint_keep`` that verify no longer needs."""
        return await prune_checkpoints(self.engine, self._signer, Path(self.settings.checkpoint_dir),
                                       self.settings.checkpoint_keep)  # fmt: skip

    async def verify(self, checkpoint_dir: str | Path | None = None,
                     progress: Callable[[int], None] | None = None) -> VerifyReport:  # fmt: skip
        folder = Path(checkpoint_dir or self.settings.checkpoint_dir)
        return await verify_chain(self.engine, self._hasher, self._signer, folder, progress)

    async def purge(self, *, now: datetime | None = None, batch_size: int = 10_000,
                    on_batch: Callable[[int, int], None] | None = None) -> PurgeResult:  # fmt: skip
        """Delete chained rows older than the retention window, oldest first, in batches.

        ``on_batch(done_through, through)`` is called after each committed batch (progress)."""
        return await purge(self, now or self._clock(), batch_size=batch_size, on_batch=on_batch)

    async def run_maintenance(self) -> None:
        """Checkpoints every ``checkpoint_interval_s`` (then prunes old checkpoint files) and, if
        configured, purges; until cancelled.

        The gateway starts this as a task in its lifespan. Failures are logged and retried at the
        next tick: maintenance must never take the request path down with it.
        """
        every = self.settings.checkpoint_interval_s
        purge_every = self.settings.purge_interval_s
        loop = asyncio.get_running_loop()
        next_purge = loop.time() + purge_every if purge_every else None
        try:
            while True:
                await asyncio.sleep(every)
                try:
                    await self.write_checkpoint()
                except Exception as exc:  # noqa: BLE001 -- a background task must survive a failed checkpoint; logged and retried
                    log.error("audit checkpoint failed: %s", type(exc).__name__)
                else:
                    if self.settings.checkpoint_keep is not None:
                        await self._prune_logged()
                if next_purge is not None and loop.time() >= next_purge:
                    try:
                        await self.purge()
                    except Exception as exc:  # noqa: BLE001 -- a background task must survive a failed purge; logged and retried
                        log.error("scheduled audit purge failed: %s", type(exc).__name__)
                    next_purge = loop.time() + (purge_every or 0)
        finally:
            with contextlib.suppress(Exception):
                await asyncio.shield(self.write_checkpoint())

    async def _prune_logged(self) -> None:
        # Only after a successful write: while checkpoints cannot be written, the files already
        # there are all the protection the log has.
        try:
            result = await self.prune_checkpoints()
        except Exception as exc:  # noqa: BLE001 -- pruning is best effort; the checkpoints kept protect the log
            log.error("audit checkpoint pruning failed: %s", type(exc).__name__)
            return
        if result.evidence:
            log.warning("%d old checkpoint(s) disagree with the audit log and are kept (first at "
                        "seq %d): run `tiergate audit verify`", len(result.evidence),
                        result.evidence[0])  # fmt: skip
