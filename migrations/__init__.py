"""Alembic migrations for the audit schema (run with ``tiergate db upgrade``)."""
