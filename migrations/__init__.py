"""Alembic migrations for the audit schema (run with ``tiergate db upgrade``).

:mod:`migrations.runner` runs them over an audit store's engine; ``env.py`` and ``versions/``
are Alembic's.
"""

from migrations.runner import current_revision, downgrade, head_revision, upgrade

__all__ = ["current_revision", "downgrade", "head_revision", "upgrade"]
