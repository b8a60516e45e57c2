"""Stored disclosures: who stored them is kept, and each tenant lists its own and platform-wide ones."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from audit.disclosures import list_disclosures, parse_disclosure, save_disclosure
from audit.errors import DisclosureError
from tests.audit.conftest import T0, make_settings, open_store

SOURCE = """title: {title}
reference: {reference}
providers: [examplecloud]
window:
  start: 2026-08-27T00:00:00Z
  end: 2026-09-09T23:59:59+02:00
"""


def _spec(reference: str, title: str = "KV cross-talk"):
    return parse_disclosure(SOURCE.format(reference=reference, title=title))


def test_tenants_see_their_own_and_platform_wide_disclosures(db_url, tmp_path):
    """acme lists acme's and NULL-tenant rows, never globex's; no filter lists all, newest first."""

    async def body() -> None:
        store = await open_store(make_settings(db_url, tmp_path))
        try:
            stored = {}
            for i, (ref, tenant) in enumerate([("P-1", None), ("A-1", "acme"), ("G-1", "globex"),
                                               ("A-2", "acme")]):  # fmt: skip
                stored[ref] = await save_disclosure(store.engine, _spec(ref), f"{i:064d}",
                                                    T0 + timedelta(minutes=i), tenant=tenant)  # fmt: skip
            acme = await list_disclosures(store.engine, visible_to="acme")
            assert [(d.reference, d.tenant) for d in acme] == [("A-2", "acme"), ("A-1", "acme"), ("P-1", None)]
            globex = await list_disclosures(store.engine, visible_to="globex")
            assert [d.reference for d in globex] == ["G-1", "P-1"]
            assert [d.reference for d in await list_disclosures(store.engine, visible_to="initech")] == ["P-1"]
            everything = await list_disclosures(store.engine)
            assert [d.reference for d in everything] == ["A-2", "G-1", "A-1", "P-1"]
            assert [d.reference for d in await list_disclosures(store.engine, limit=2)] == ["A-2", "G-1"]
            newest = everything[0]
            assert newest.id == stored["A-2"] and newest.loaded_at == T0 + timedelta(minutes=3)
            assert newest.window_start == datetime(2026, 8, 27, tzinfo=UTC)
            assert newest.window_end == datetime(2026, 9, 9, 21, 59, 59, tzinfo=UTC)
            assert newest.source_sha256 == f"{3:064d}"
            assert newest.as_dict()["tenant"] == "acme" and everything[-1].as_dict()["tenant"] is None
        finally:
            await store.close()

    asyncio.run(body())


@pytest.mark.parametrize("tenant", ["", "x" * 201])
def test_a_disclosure_tenant_must_be_a_name(sqlite_db, tmp_path, tenant):
    """An empty or over-long tenant is refused before anything is stored."""

    async def body() -> None:
        store = await open_store(make_settings(sqlite_db, tmp_path))
        try:
            with pytest.raises(DisclosureError, match="tenant"):
                await save_disclosure(store.engine, _spec("R"), "0" * 64, tenant=tenant)
            assert await list_disclosures(store.engine) == []
        finally:
            await store.close()

    asyncio.run(body())
