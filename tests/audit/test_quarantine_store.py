"""The shared quarantine state on SQLite and PostgreSQL: quarantine, release, history, events."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from audit.quarantine import QuarantineError, active_quarantines, list_quarantines, quarantine, release
from tests.audit.conftest import Clock, make_settings, open_store


def test_quarantine_release_and_their_events(db_url: str, tmp_path: Path) -> None:
    async def body() -> None:
        clock = Clock()
        store = await open_store(make_settings(db_url, tmp_path), clock)
        try:
            a = await quarantine(store, upstream="cf", reason="vendor notice CF-1", actor="ops:ana",
                                 now=clock())  # fmt: skip
            b = await quarantine(store, provider="ExampleCloud", model="big-model-1",
                                 reason="model pulled", actor="ops:ben")  # fmt: skip
            assert b.provider == "examplecloud"  # stored as upstreams store theirs: lowercase
            assert [e.id for e in await active_quarantines(store.engine)] == [a.id, b.id]
            # The same target twice is refused, naming the quarantine in force.
            with pytest.raises(QuarantineError, match=f"#{b.id}"):
                await quarantine(store, provider="examplecloud", model="big-model-1", reason="x", actor="y")
            # ... but the whole provider is another target.
            c = await quarantine(store, provider="examplecloud", reason="all of it", actor="ops:ben")
            for bad in ({}, {"upstream": "cf", "provider": "p"}):
                with pytest.raises(QuarantineError, match="exactly one"):
                    await quarantine(store, reason="r", actor="a", **bad)  # type: ignore[arg-type]  # deliberately the wrong type: the test is that it is refused
            with pytest.raises(QuarantineError, match="reason"):
                await quarantine(store, upstream="other", reason="  ", actor="a")
            with pytest.raises(QuarantineError, match="actor"):
                await quarantine(store, upstream="other", reason="r", actor="bad\nactor")

            released = await release(store, upstream="cf", reason="vendor fixed it", actor="ops:cem")
            assert released.id == a.id and released.released_by == "ops:cem"
            with pytest.raises(QuarantineError, match="no quarantine in force"):
                await release(store, upstream="cf", reason="again", actor="ops:cem")
            await release(store, c.id, reason="scoped to the model", actor="ops:ben")
            with pytest.raises(QuarantineError, match="not both"):
                await release(store, b.id, upstream="cf", reason="r", actor="a")
            assert [e.id for e in await active_quarantines(store.engine)] == [b.id]
            history = await list_quarantines(store.engine, include_released=True)
            assert [e.id for e in history] == [c.id, b.id, a.id]
            assert history[2].release_reason == "vendor fixed it" and history[2].released_at is not None

            async with store.engine.connect() as conn:
                from sqlalchemy import text

                events = (await conn.execute(text(
                    "SELECT kind, detail FROM audit_events WHERE kind LIKE 'upstream_%' ORDER BY seq"))).all()  # fmt: skip
            got = [(k, json.loads(d)) for k, d in events]
            assert [k for k, _ in got] == ["upstream_quarantined"] * 3 + ["upstream_released"] * 2
            assert got[0][1]["actor"] == "ops:ana" and got[0][1]["reason"] == "vendor notice CF-1"
            assert got[0][1]["upstream"] == "cf" and got[0][1]["since"] == clock().isoformat()
            assert got[3][1] == {"id": a.id, "upstream": "cf", "provider": None, "model": None,
                                 "reason": "vendor fixed it", "actor": "ops:cem"}  # fmt: skip
            # The chain still verifies with these events in it.
            assert (await store.verify()).ok
        finally:
            await store.close()

    asyncio.run(body())


def test_concurrent_releases_release_once(db_url: str, tmp_path: Path) -> None:
    async def body() -> None:
        store = await open_store(make_settings(db_url, tmp_path))
        try:
            q = await quarantine(store, upstream="cf", reason="r", actor="a")
            results = await asyncio.gather(*(release(store, q.id, reason="r", actor=f"a{i}")
                                             for i in range(4)), return_exceptions=True)  # fmt: skip
            assert sum(1 for r in results if not isinstance(r, Exception)) == 1
            assert all(isinstance(r, QuarantineError) for r in results if isinstance(r, Exception))
        finally:
            await store.close()

    asyncio.run(body())
