"""Disclosures remember the tenant they were stored for (NULL: platform-wide).

Revision ID: 0003_disclosure_tenant
Revises: 0002_dashboard_admins
Create Date: 2026-12-01
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003_disclosure_tenant"
down_revision = "0002_dashboard_admins"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Batch mode: SQLite rebuilds the table where it cannot ALTER in place (the downgrade's drop);
    # PostgreSQL runs the same operations as plain ALTER TABLE statements.
    # Existing rows stay NULL: everything stored before this revision came from the CLI or a
    # platform-wide assessment, and remains visible to every admin as before.
    with op.batch_alter_table("disclosures") as batch:
        batch.add_column(sa.Column("tenant", sa.String(200), nullable=True))
        batch.create_index("ix_disclosures_tenant", ["tenant"])


def downgrade() -> None:
    with op.batch_alter_table("disclosures") as batch:
        batch.drop_index("ix_disclosures_tenant")
        batch.drop_column("tenant")
