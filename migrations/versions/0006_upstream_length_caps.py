"""Probe-lowered safe lengths: the shared state every replica polls (``audit.length_caps``).

Revision ID: 0006_upstream_length_caps
Revises: 0005_upstream_quarantine
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006_upstream_length_caps"
down_revision = "0005_upstream_quarantine"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "upstream_length_caps",
        sa.Column("id", sa.Integer, autoincrement=True, nullable=False),
        sa.Column("upstream", sa.String(200), nullable=False),
        sa.Column("max_prompt_tokens", sa.BigInteger, nullable=False),
        sa.Column("failed_rung_tokens", sa.BigInteger),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("actor", sa.String(200), nullable=False),
        sa.Column("created_us", sa.BigInteger, nullable=False),
        sa.Column("restored_us", sa.BigInteger),
        sa.Column("restored_by", sa.String(200)),
        sa.Column("restore_reason", sa.Text),
        sa.PrimaryKeyConstraint("id", name="pk_upstream_length_caps"),
    )
    op.create_index("ix_upstream_length_caps_restored_us", "upstream_length_caps", ["restored_us"])


def downgrade() -> None:
    op.drop_index("ix_upstream_length_caps_restored_us", table_name="upstream_length_caps")
    op.drop_table("upstream_length_caps")
