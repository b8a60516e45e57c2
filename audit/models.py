"""The audit schema. Every chained table is append-only; times are UTC microseconds since the epoch.

Integers for time keep window filters and per-day grouping identical (and index-friendly) on
SQLite and PostgreSQL. ``seq`` is one global sequence across ``audit_requests``,
``audit_outcomes`` and ``audit_events``: together they form a single hash chain (see ``chain.py``),
so recording an outcome appends a row instead of updating the request row it belongs to.
"""

from __future__ import annotations

from typing import ClassVar

from sqlalchemy import (
    BigInteger,
    Boolean,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    SmallInteger,
    String,
    Table,
    Text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

__all__ = [
    "ApiKey",
    "AuditEvent",
    "AuditOutcome",
    "AuditRequest",
    "AuditSegment",
    "Base",
    "ChainHead",
    "Disclosure",
]

# SQLite only treats INTEGER PRIMARY KEY as the rowid; BIGINT would add a second b-tree.
SeqType = BigInteger().with_variant(Integer(), "sqlite")

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)
    # Every model here maps one Table (no joins, no select mappings), and Core statements are
    # built on ``Model.__table__``: say so, where SQLAlchemy can only promise a FromClause.
    __table__: ClassVar[Table]


class ChainHead(Base):
    """The last chained record: one row, locked by every writer (replicas included)."""

    __tablename__ = "audit_chain_head"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    seq: Mapped[int] = mapped_column(BigInteger, nullable=False)
    hash: Mapped[bytes] = mapped_column(LargeBinary(32), nullable=False)


class AuditRequest(Base):
    """The write-ahead row: committed before the request is forwarded (or for a refusal)."""

    __tablename__ = "audit_requests"

    seq: Mapped[int] = mapped_column(SeqType, primary_key=True, autoincrement=False)
    hash: Mapped[bytes] = mapped_column(LargeBinary(32), nullable=False)
    request_id: Mapped[str] = mapped_column(String(128), nullable=False, unique=True)
    created_us: Mapped[int] = mapped_column(BigInteger, nullable=False)
    tenant: Mapped[str | None] = mapped_column(String(200))
    key_id: Mapped[str | None] = mapped_column(String(64))
    endpoint: Mapped[str] = mapped_column(String(32), nullable=False)
    client_model: Mapped[str | None] = mapped_column(String(200))
    upstream: Mapped[str | None] = mapped_column(String(200))
    upstream_kind: Mapped[str | None] = mapped_column(String(16))
    provider: Mapped[str | None] = mapped_column(String(200))
    provider_model: Mapped[str | None] = mapped_column(String(200))
    prompt_chars: Mapped[int] = mapped_column(BigInteger, nullable=False)
    prompt_tokens: Mapped[int] = mapped_column(BigInteger, nullable=False)
    tier: Mapped[int] = mapped_column(SmallInteger, nullable=False)
    findings: Mapped[str] = mapped_column(Text, nullable=False)  # canonical JSON {type: count}
    stripped: Mapped[bool] = mapped_column(Boolean, nullable=False)
    stream: Mapped[bool] = mapped_column(Boolean, nullable=False)
    forwarded: Mapped[bool] = mapped_column(Boolean, nullable=False)  # False: refused up front
    fingerprint: Mapped[str | None] = mapped_column(String(64))
    segment_fps: Mapped[str] = mapped_column(Text, nullable=False)  # space-separated hex

    __table_args__ = (
        Index("ix_audit_requests_created", "created_us"),
        Index("ix_audit_requests_model_created", "provider_model", "created_us"),
        Index("ix_audit_requests_upstream_created", "upstream", "created_us"),
        Index("ix_audit_requests_provider_created", "provider", "created_us"),
        Index("ix_audit_requests_tenant_created", "tenant", "created_us"),
        Index("ix_audit_requests_fingerprint", "fingerprint"),
    )


class AuditSegment(Base):
    """Lookup from a segment fingerprint to its request. Derived from ``segment_fps`` (chained).

    Keyed by the fingerprint's first 60 bits (``audit.batch.segment_key``), not its 64 characters:
    a segment row is written for every message of every request (an agent re-sends its whole
    conversation each turn), and a small key is most of what makes it cheap. A match re-checks the
    full fingerprint in ``segment_fps``, so two fingerprints sharing a key cost one more row read.
    On SQLite the primary key is the table (no rowid): one B-tree fewer per row."""

    __tablename__ = "audit_segments"

    fp_key: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    request_seq: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)

    __table_args__ = (Index("ix_audit_segments_request_seq", "request_seq"), {"sqlite_with_rowid": False})


class AuditOutcome(Base):
    """What happened after forwarding; appended, never an UPDATE of the request row."""

    __tablename__ = "audit_outcomes"

    seq: Mapped[int] = mapped_column(SeqType, primary_key=True, autoincrement=False)
    hash: Mapped[bytes] = mapped_column(LargeBinary(32), nullable=False)
    request_id: Mapped[str] = mapped_column(String(128), nullable=False, index=True)
    created_us: Mapped[int] = mapped_column(BigInteger, nullable=False)
    status: Mapped[str] = mapped_column(String(32), nullable=False)
    http_status: Mapped[int] = mapped_column(Integer, nullable=False)
    upstream_status: Mapped[int | None] = mapped_column(Integer)
    usage_prompt_tokens: Mapped[int | None] = mapped_column(BigInteger)
    usage_completion_tokens: Mapped[int | None] = mapped_column(BigInteger)
    latency_us: Mapped[int | None] = mapped_column(BigInteger)
    error_class: Mapped[str | None] = mapped_column(String(100))
    integrity_flag: Mapped[bool] = mapped_column(Boolean, nullable=False)


class AuditEvent(Base):
    """Operational events (purge, probe, key changes, integrity alarms). ``detail`` is JSON."""

    __tablename__ = "audit_events"

    seq: Mapped[int] = mapped_column(SeqType, primary_key=True, autoincrement=False)
    hash: Mapped[bytes] = mapped_column(LargeBinary(32), nullable=False)
    created_us: Mapped[int] = mapped_column(BigInteger, nullable=False)
    kind: Mapped[str] = mapped_column(String(64), nullable=False, index=True)
    detail: Mapped[str] = mapped_column(Text, nullable=False)


class ApiKey(Base):
    """Client keys. Only a SHA-256 of the 256-bit random secret is kept."""

    __tablename__ = "api_keys"

    key_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    tenant: Mapped[str] = mapped_column(String(200), nullable=False, index=True)
    name: Mapped[str] = mapped_column(String(200), nullable=False)
    max_tier: Mapped[int] = mapped_column(SmallInteger, nullable=False)
    models: Mapped[str | None] = mapped_column(Text)  # JSON list, NULL: every model
    secret_hash: Mapped[bytes] = mapped_column(LargeBinary(32), nullable=False)
    created_us: Mapped[int] = mapped_column(BigInteger, nullable=False)
    revoked_us: Mapped[int | None] = mapped_column(BigInteger)


class Disclosure(Base):
    """A vendor incident disclosure as loaded (validated, canonical JSON).

    ``tenant`` is the tenant of the admin who stored it; NULL means platform-wide (stored by a
    platform admin or the CLI) and is visible to every tenant's admins.
    """

    __tablename__ = "disclosures"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    reference: Mapped[str] = mapped_column(String(200), nullable=False, index=True)
    tenant: Mapped[str | None] = mapped_column(String(200), index=True)
    title: Mapped[str] = mapped_column(Text, nullable=False)
    source_sha256: Mapped[str] = mapped_column(String(64), nullable=False)
    loaded_us: Mapped[int] = mapped_column(BigInteger, nullable=False)
    body: Mapped[str] = mapped_column(Text, nullable=False)
