"""Alembic migrations up and down on both backends, and schema parity with the models."""

from __future__ import annotations

import asyncio

from sqlalchemy import inspect

from audit.models import Base
from migrations import current_revision, downgrade, head_revision, upgrade
from tests.audit.conftest import make_settings, open_store, request


async def _tables(engine) -> set[str]:
    async with engine.connect() as conn:
        return set(await conn.run_sync(lambda c: inspect(c).get_table_names()))


async def _indexes(engine, table: str) -> set[str]:
    async with engine.connect() as conn:
        return {i["name"] for i in await conn.run_sync(lambda c: inspect(c).get_indexes(table))}


def test_upgrade_downgrade_upgrade(db_url, tmp_path):
    """head creates every model table and index; base drops them; head again works and writes."""

    async def body() -> None:
        store = await open_store(make_settings(db_url, tmp_path))
        try:
            assert await current_revision(store.engine) == head_revision()
            expected = set(Base.metadata.tables)
            assert expected <= await _tables(store.engine)
            for name, table in Base.metadata.tables.items():
                model_ix = {ix.name for ix in table.indexes}
                assert model_ix <= await _indexes(store.engine, name), name
            await store.record_request(request())
            await downgrade(store, "base")
            assert not (expected & await _tables(store.engine))
            assert await current_revision(store.engine) is None
            await upgrade(store)
            await upgrade(store)  # idempotent
            assert await store.record_request(request()) == 1
        finally:
            await store.close()

    asyncio.run(body())


def test_cli_db_upgrade_and_current(sqlite_db, tmp_path, monkeypatch):
    """`tiergate db upgrade --db-url` migrates an empty database; `db current` reports it."""
    from click.testing import CliRunner

    from gateway.cli import main

    monkeypatch.setenv("TIERGATE_STATE_DIR", str(tmp_path / "state"))
    runner = CliRunner()
    res = runner.invoke(main, ["db", "current", "--db-url", sqlite_db])
    assert res.exit_code == 0 and res.stdout.strip() == "base"
    res = runner.invoke(main, ["db", "upgrade", "--db-url", sqlite_db])
    assert res.exit_code == 0, res.output
    assert f"revision {head_revision()}" in res.stdout
    res = runner.invoke(main, ["db", "current", "--db-url", sqlite_db])
    assert res.stdout.strip() == head_revision()
    res = runner.invoke(main, ["db", "downgrade", "base", "--db-url", sqlite_db])
    assert res.exit_code == 2  # refuses without --yes
    res = runner.invoke(main, ["db", "downgrade", "base", "--yes", "--db-url", sqlite_db])
    assert res.exit_code == 0 and "base" in res.stdout


async def _columns(engine, table: str) -> set[str]:
    async with engine.connect() as conn:
        return {c["name"] for c in await conn.run_sync(lambda c: inspect(c).get_columns(table))}


def test_disclosure_tenant_migration_up_and_down(db_url, tmp_path):
    """0003 adds disclosures.tenant with its index; down to 0002 drops both and keeps the rows."""
    from sqlalchemy import text

    from audit.disclosures import list_disclosures, parse_disclosure, save_disclosure

    spec = parse_disclosure("title: t\nreference: R-1\nupstreams: [u]\nwindow:\n"
                            "  start: 2026-01-01T00:00:00Z\n  end: 2026-02-01T00:00:00Z\n")  # fmt: skip

    async def body() -> None:
        store = await open_store(make_settings(db_url, tmp_path))
        try:
            assert "tenant" in await _columns(store.engine, "disclosures")
            assert "ix_disclosures_tenant" in await _indexes(store.engine, "disclosures")
            await save_disclosure(store.engine, spec, "0" * 64, tenant="acme")
            await save_disclosure(store.engine, spec, "1" * 64)

            await downgrade(store, "0002_dashboard_admins")
            assert await current_revision(store.engine) == "0002_dashboard_admins"
            assert "tenant" not in await _columns(store.engine, "disclosures")
            assert "ix_disclosures_tenant" not in await _indexes(store.engine, "disclosures")
            assert "ix_disclosures_reference" in await _indexes(store.engine, "disclosures")
            async with store.engine.connect() as conn:
                hashes = (await conn.execute(text(
                    "SELECT source_sha256 FROM disclosures ORDER BY id"))).scalars().all()  # fmt: skip
            assert hashes == ["0" * 64, "1" * 64]

            await upgrade(store, "0003_disclosure_tenant")
            listed = await list_disclosures(store.engine)
            assert [(d.source_sha256, d.tenant) for d in listed] == [("1" * 64, None), ("0" * 64, None)]
            assert "ix_disclosures_tenant" in await _indexes(store.engine, "disclosures")
            # A row stored after the round trip: the id sequence and the new column both work.
            assert await save_disclosure(store.engine, spec, "2" * 64, tenant="globex") == 3
        finally:
            await store.close()

    asyncio.run(body())


def test_the_head_read_from_the_scripts_is_alembics():
    """``upgrade`` skips Alembic on a database at the revision it reads from the scripts' text;
    that reading must be Alembic's own head (a new script that breaks the simple form makes it
    None, and Alembic decides again)."""
    from migrations.runner import _scripted_head

    assert _scripted_head() == head_revision()


def test_upgrade_from_an_older_revision_still_runs_the_rest(db_url, tmp_path):
    """The shortcut is taken only at the head: one revision behind, upgrade() migrates."""

    async def body() -> None:
        store = await open_store(make_settings(db_url, tmp_path))
        try:
            await downgrade(store, "-1")
            assert await current_revision(store.engine) != head_revision()
            await upgrade(store)
            assert await current_revision(store.engine) == head_revision()
        finally:
            await store.close()

    asyncio.run(body())
