"""Upstream quarantine: the shared state every replica polls (``audit.quarantine``).

Revision ID: 0005_upstream_quarantine
Revises: 0004_sign_in_lockout
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005_upstream_quarantine"
down_revision = "0004_sign_in_lockout"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "upstream_quarantines",
        sa.Column("id", sa.Integer, autoincrement=True, nullable=False),
        sa.Column("upstream", sa.String(200)),
        sa.Column("provider", sa.String(200)),
        sa.Column("model", sa.String(200)),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("actor", sa.String(200), nullable=False),
        sa.Column("created_us", sa.BigInteger, nullable=False),
        sa.Column("released_us", sa.BigInteger),
        sa.Column("released_by", sa.String(200)),
        sa.Column("release_reason", sa.Text),
        sa.PrimaryKeyConstraint("id", name="pk_upstream_quarantines"),
    )
    op.create_index("ix_upstream_quarantines_released_us", "upstream_quarantines", ["released_us"])


def downgrade() -> None:
    op.drop_index("ix_upstream_quarantines_released_us", table_name="upstream_quarantines")
    op.drop_table("upstream_quarantines")
