"""Dashboard administrators and their sign-in sessions.

Revision ID: 0002_dashboard_admins
Revises: 0001_audit_initial
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002_dashboard_admins"
down_revision = "0001_audit_initial"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "admin_users",
        sa.Column("username", sa.String(200), nullable=False),
        sa.Column("tenant", sa.String(200)),
        sa.Column("password_hash", sa.Text, nullable=False),
        sa.Column("created_us", sa.BigInteger, nullable=False),
        sa.Column("disabled_us", sa.BigInteger),
        sa.Column("failed_count", sa.Integer, nullable=False),
        sa.Column("locked_until_us", sa.BigInteger),
        sa.PrimaryKeyConstraint("username", name="pk_admin_users"),
    )
    op.create_table(
        "admin_sessions",
        sa.Column("token_hash", sa.LargeBinary(32), nullable=False),
        sa.Column("username", sa.String(200), nullable=False),
        sa.Column("csrf_token", sa.String(64), nullable=False),
        sa.Column("created_us", sa.BigInteger, nullable=False),
        sa.Column("expires_us", sa.BigInteger, nullable=False),
        sa.Column("last_seen_us", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("token_hash", name="pk_admin_sessions"),
    )
    op.create_index("ix_admin_sessions_username", "admin_sessions", ["username"])


def downgrade() -> None:
    op.drop_index("ix_admin_sessions_username", table_name="admin_sessions")
    op.drop_table("admin_sessions")
    op.drop_table("admin_users")
