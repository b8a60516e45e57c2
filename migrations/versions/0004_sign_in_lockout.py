"""Sign-in lockout per (username, client address) instead of per account.

The per-account counter on ``admin_users`` let anyone lock any admin out; failures now live in
``admin_sign_in_failures`` keyed by a SHA-256 of the username and the client's address. Counts on
the old columns are dropped, not carried over (they cannot be assigned to a client): at worst a
lock in force during the upgrade ends early.

Revision ID: 0004_sign_in_lockout
Revises: 0003_disclosure_tenant
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004_sign_in_lockout"
down_revision = "0003_disclosure_tenant"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "admin_sign_in_failures",
        sa.Column("username_hash", sa.LargeBinary(32), nullable=False),
        sa.Column("client", sa.String(100), nullable=False),
        sa.Column("failed_count", sa.Integer, nullable=False),
        sa.Column("locked_until_us", sa.BigInteger),
        sa.Column("last_failed_us", sa.BigInteger, nullable=False),
        sa.PrimaryKeyConstraint("username_hash", "client", name="pk_admin_sign_in_failures"),
    )
    op.create_index("ix_admin_sign_in_failures_last_failed_us", "admin_sign_in_failures", ["last_failed_us"])
    # Batch mode: SQLite rebuilds the table where it cannot drop a column in place.
    with op.batch_alter_table("admin_users") as batch:
        batch.drop_column("failed_count")
        batch.drop_column("locked_until_us")


def downgrade() -> None:
    with op.batch_alter_table("admin_users") as batch:
        batch.add_column(sa.Column("failed_count", sa.Integer, nullable=False, server_default="0"))
        batch.add_column(sa.Column("locked_until_us", sa.BigInteger))
    op.drop_index("ix_admin_sign_in_failures_last_failed_us", table_name="admin_sign_in_failures")
    op.drop_table("admin_sign_in_failures")
