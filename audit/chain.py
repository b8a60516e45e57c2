"""The hash chain: every audit record is linked to the one before it (CloudTrail's model).

``hash[n] = HMAC-SHA256(chain_key, hash[n-1] || canonical(record n))`` with ``hash[0]`` = 32 zero
bytes. The chain key is derived from the checkpoint key, so someone who can only write to the
database cannot forge a consistent chain after editing a row; the signed checkpoints written
outside the database additionally pin the head, which catches a truncated tail.

The canonical form is a JSON array of the table name and the chained columns in a fixed order.
Only integers, strings, booleans and NULL are chained, all of which read back identically from
SQLite and PostgreSQL.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from typing import Any

__all__ = ["CHAINED_COLUMNS", "GENESIS", "ChainHasher", "derive_chain_key"]

GENESIS = bytes(32)

CHAINED_COLUMNS: dict[str, tuple[str, ...]] = {
    "audit_requests": (
        "seq", "request_id", "created_us", "tenant", "key_id", "endpoint", "client_model",
        "upstream", "upstream_kind", "provider", "provider_model", "prompt_chars",
        "prompt_tokens", "tier", "findings", "stripped", "stream", "forwarded", "fingerprint",
        "segment_fps",
    ),
    "audit_outcomes": (
        "seq", "request_id", "created_us", "status", "http_status", "upstream_status",
        "usage_prompt_tokens", "usage_completion_tokens", "latency_us", "error_class",
        "integrity_flag",
    ),
    "audit_events": ("seq", "created_us", "kind", "detail"),
}  # fmt: skip


def derive_chain_key(checkpoint_key: bytes) -> bytes:
    """A separate key for the chain, so chain hashes and checkpoint signatures never collide."""
    if not checkpoint_key:
        raise ValueError("checkpoint key must not be empty")
    return hmac.new(checkpoint_key, b"tiergate/audit-chain/v1", hashlib.sha256).digest()


class ChainHasher:
    """Computes record hashes; pure and cheap (one HMAC per record)."""

    __slots__ = ("_key",)

    def __init__(self, chain_key: bytes) -> None:
        self._key = chain_key

    def canonical(self, table: str, row: Mapping[str, Any]) -> bytes:
        values: list[Any] = [table]
        for col in CHAINED_COLUMNS[table]:
            value = row[col]
            if col in _BOOLEAN_COLUMNS and value is not None:
                value = bool(value)
            values.append(value)
        return _ENCODE(values).encode("utf-8")

    def link(self, prev: bytes, table: str, row: Mapping[str, Any]) -> bytes:
        return hmac.new(self._key, prev + self.canonical(table, row), hashlib.sha256).digest()


_ENCODE = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
_BOOLEAN_COLUMNS = frozenset({"stripped", "stream", "forwarded", "integrity_flag"})
