"""Audit log, chain head, API keys and disclosures.

Revision ID: 0001_audit_initial
Revises:
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001_audit_initial"
down_revision = None
branch_labels = None
depends_on = None

SEQ = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    head = op.create_table(
        "audit_chain_head",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("seq", sa.BigInteger, nullable=False),
        sa.Column("hash", sa.LargeBinary(32), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_audit_chain_head"),
    )
    op.bulk_insert(head, [{"id": 1, "seq": 0, "hash": bytes(32)}])

    op.create_table(
        "audit_requests",
        sa.Column("seq", SEQ, autoincrement=False, nullable=False),
        sa.Column("hash", sa.LargeBinary(32), nullable=False),
        sa.Column("request_id", sa.String(128), nullable=False),
        sa.Column("created_us", sa.BigInteger, nullable=False),
        sa.Column("tenant", sa.String(200)),
        sa.Column("key_id", sa.String(64)),
        sa.Column("endpoint", sa.String(32), nullable=False),
        sa.Column("client_model", sa.String(200)),
        sa.Column("upstream", sa.String(200)),
        sa.Column("upstream_kind", sa.String(16)),
        sa.Column("provider", sa.String(200)),
        sa.Column("provider_model", sa.String(200)),
        sa.Column("prompt_chars", sa.BigInteger, nullable=False),
        sa.Column("prompt_tokens", sa.BigInteger, nullable=False),
        sa.Column("tier", sa.SmallInteger, nullable=False),
        sa.Column("findings", sa.Text, nullable=False),
        sa.Column("stripped", sa.Boolean, nullable=False),
        sa.Column("stream", sa.Boolean, nullable=False),
        sa.Column("forwarded", sa.Boolean, nullable=False),
        sa.Column("fingerprint", sa.String(64)),
        sa.Column("segment_fps", sa.Text, nullable=False),
        sa.PrimaryKeyConstraint("seq", name="pk_audit_requests"),
        sa.UniqueConstraint("request_id", name="uq_audit_requests_request_id"),
    )
    for name, cols in (
        ("ix_audit_requests_created", ["created_us"]),
        ("ix_audit_requests_model_created", ["provider_model", "created_us"]),
        ("ix_audit_requests_upstream_created", ["upstream", "created_us"]),
        ("ix_audit_requests_provider_created", ["provider", "created_us"]),
        ("ix_audit_requests_tenant_created", ["tenant", "created_us"]),
        ("ix_audit_requests_fingerprint", ["fingerprint"]),
    ):
        op.create_index(name, "audit_requests", cols)

    op.create_table(
        "audit_segments",
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("request_seq", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("fingerprint", "request_seq", name="pk_audit_segments"),
    )
    op.create_index("ix_audit_segments_request_seq", "audit_segments", ["request_seq"])

    op.create_table(
        "audit_outcomes",
        sa.Column("seq", SEQ, autoincrement=False, nullable=False),
        sa.Column("hash", sa.LargeBinary(32), nullable=False),
        sa.Column("request_id", sa.String(128), nullable=False),
        sa.Column("created_us", sa.BigInteger, nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("http_status", sa.Integer, nullable=False),
        sa.Column("upstream_status", sa.Integer),
        sa.Column("usage_prompt_tokens", sa.BigInteger),
        sa.Column("usage_completion_tokens", sa.BigInteger),
        sa.Column("latency_us", sa.BigInteger),
        sa.Column("error_class", sa.String(100)),
        sa.Column("integrity_flag", sa.Boolean, nullable=False),
        sa.PrimaryKeyConstraint("seq", name="pk_audit_outcomes"),
    )
    op.create_index("ix_audit_outcomes_request_id", "audit_outcomes", ["request_id"])

    op.create_table(
        "audit_events",
        sa.Column("seq", SEQ, autoincrement=False, nullable=False),
        sa.Column("hash", sa.LargeBinary(32), nullable=False),
        sa.Column("created_us", sa.BigInteger, nullable=False),
        sa.Column("kind", sa.String(64), nullable=False),
        sa.Column("detail", sa.Text, nullable=False),
        sa.PrimaryKeyConstraint("seq", name="pk_audit_events"),
    )
    op.create_index("ix_audit_events_kind", "audit_events", ["kind"])

    op.create_table(
        "api_keys",
        sa.Column("key_id", sa.String(64), nullable=False),
        sa.Column("tenant", sa.String(200), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("max_tier", sa.SmallInteger, nullable=False),
        sa.Column("models", sa.Text),
        sa.Column("secret_hash", sa.LargeBinary(32), nullable=False),
        sa.Column("created_us", sa.BigInteger, nullable=False),
        sa.Column("revoked_us", sa.BigInteger),
        sa.PrimaryKeyConstraint("key_id", name="pk_api_keys"),
    )
    op.create_index("ix_api_keys_tenant", "api_keys", ["tenant"])

    op.create_table(
        "disclosures",
        sa.Column("id", sa.Integer, autoincrement=True, nullable=False),
        sa.Column("reference", sa.String(200), nullable=False),
        sa.Column("title", sa.Text, nullable=False),
        sa.Column("source_sha256", sa.String(64), nullable=False),
        sa.Column("loaded_us", sa.BigInteger, nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_disclosures"),
    )
    op.create_index("ix_disclosures_reference", "disclosures", ["reference"])


def downgrade() -> None:
    for table in (
        "disclosures",
        "api_keys",
        "audit_events",
        "audit_outcomes",
        "audit_segments",
        "audit_requests",
        "audit_chain_head",
    ):
        op.drop_table(table)
