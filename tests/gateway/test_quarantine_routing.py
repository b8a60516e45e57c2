"""Routing around quarantines (pure: the router and a board), and the monitor's failure rule."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from audit.quarantine import QuarantineEntry, quarantine
from gateway.errors import Quarantined
from gateway.quarantine import QuarantineBoard, QuarantineMonitor, QuarantineSettings
from gateway.routing import Router
from gateway.settings import Settings
from tests.audit.conftest import make_settings, open_store
from tiers.types import Tier, UpstreamKind

TRUST = {k: i for i, k in enumerate(UpstreamKind)}
T = datetime(2026, 9, 1, tzinfo=UTC)


class DefaultRule:
    """The shipped policy's shape: Tier 3 never to a shared upstream."""

    def __init__(self, tier: Tier) -> None:
        self.tier = tier

    def allows(self, kind: UpstreamKind) -> bool:
        return not (self.tier == Tier.RESTRICTED and kind == UpstreamKind.SHARED)

    def must_strip(self, kind: UpstreamKind) -> bool:
        return False


def _settings(kinds: list[UpstreamKind], providers: list[str]) -> Settings:
    ups = [{"name": f"u{i}", "base_url": "http://127.0.0.1:9/v1", "kind": k.value, "provider": p,
            "max_tier": 2 if k == UpstreamKind.SHARED else 3, "models": {"m": f"{p}-model"}}
           for i, (k, p) in enumerate(zip(kinds, providers, strict=True))]  # fmt: skip
    return Settings(upstreams=ups, aliases=[{"name": "m", "upstreams": [u["name"] for u in ups]}])


def _q(
    i: int, *, upstream: str | None = None, provider: str | None = None, model: str | None = None
) -> QuarantineEntry:
    return QuarantineEntry(i, upstream, provider, model, "r", "a", T)


def _choose(router: Router, tier: Tier) -> list[str]:
    return [c.name for c in router.choose("m", tier, DefaultRule(tier), hardened=lambda u: True).candidates]


def test_traffic_moves_to_equal_or_higher_trust_only() -> None:
    s = _settings([UpstreamKind.DEDICATED, UpstreamKind.SHARED, UpstreamKind.DEDICATED, UpstreamKind.ONPREM],
                  ["va", "vs", "vb", "ours"])  # fmt: skip
    board = QuarantineBoard()
    router = Router(s, quarantine=board)
    board.replace(())
    assert _choose(router, Tier.GENERAL) == ["u0", "u1", "u2", "u3"]
    board.replace((_q(1, upstream="u0"),))
    assert _choose(router, Tier.GENERAL) == ["u2", "u3"]  # never down to the shared u1
    assert _choose(router, Tier.RESTRICTED) == ["u2", "u3"]
    board.replace((_q(1, provider="vs"),))  # the shared one itself: the rest is untouched
    assert _choose(router, Tier.GENERAL) == ["u0", "u2", "u3"]
    board.replace((_q(1, provider="va", model="other-model"),))  # another model of that vendor
    assert _choose(router, Tier.GENERAL) == ["u0", "u1", "u2", "u3"]
    board.replace((_q(1, provider="VA".lower(), model="va-model"), _q(2, upstream="u2"), _q(3, upstream="u3")))
    with pytest.raises(Quarantined) as err:
        _choose(router, Tier.GENERAL)
    assert err.value.code == "upstream_quarantined" and err.value.status_code == 503
    # The client hears the quarantines' ids and vendors, not our upstream names.
    assert "#1 provider va, model va-model" in err.value.message and "#2" in err.value.message
    assert "u2" not in err.value.message and "u1" not in err.value.message


def test_unknown_state_refuses_everything() -> None:
    router = Router(_settings([UpstreamKind.SHARED], ["vs"]), quarantine=QuarantineBoard())
    with pytest.raises(Quarantined) as err:
        _choose(router, Tier.GENERAL)
    assert err.value.code == "quarantine_state_unknown"


KINDS = st.sampled_from(list(UpstreamKind))


@settings(max_examples=300, deadline=None)
@given(kinds=st.lists(KINDS, min_size=1, max_size=6), data=st.data())
def test_quarantine_invariants(kinds: list[UpstreamKind], data: st.DataObject) -> None:
    """Whatever is quarantined: no covered upstream is chosen; nothing chosen is of lower trust
    than a quarantined upstream that came before it; Tier 3 never gets a shared one; the order is
    the alias order; and with no quarantine the choice is exactly the unquarantined router's."""
    providers = data.draw(st.lists(st.sampled_from(["va", "vb", "vc"]), min_size=len(kinds), max_size=len(kinds)))
    s = _settings(kinds, providers)
    tier = data.draw(st.sampled_from(list(Tier)))
    entries = tuple(data.draw(st.lists(st.one_of(
        st.builds(lambda i: _q(0, upstream=f"u{i}"), st.integers(0, len(kinds) - 1)),
        st.builds(lambda p, m: _q(0, provider=p, model=m), st.sampled_from(["va", "vb", "vc"]),
                  st.sampled_from([None, "va-model", "vb-model"])),
    ), max_size=4)))  # fmt: skip
    entries = tuple(
        QuarantineEntry(i + 1, e.upstream, e.provider, e.model, "r", "a", T) for i, e in enumerate(entries)
    )  # ids as the table would number them
    board = QuarantineBoard()
    board.replace(entries)
    plain = _choose(Router(s), tier)
    try:
        chosen = _choose(Router(s, quarantine=board), tier)
    except Quarantined:
        chosen = []
        assert entries  # refused for quarantine only when something is quarantined
    by_name = {u.name: u for u in s.upstreams}
    covered = {n for n in plain if any(e.covers(n, by_name[n].provider, by_name[n].models["m"]) for e in entries)}
    assert not covered & set(chosen)
    assert chosen == [n for n in plain if n in chosen]  # alias order kept, nothing new added
    for n in chosen:
        before = plain[: plain.index(n)]
        assert all(TRUST[by_name[n].kind] >= TRUST[by_name[q].kind] for q in before if q in covered)
        if tier == Tier.RESTRICTED:
            assert by_name[n].kind != UpstreamKind.SHARED
    if not entries:
        assert chosen == plain


def test_monitor_keeps_the_last_state_when_the_database_cannot_be_read(sqlite_db: str, tmp_path: Path) -> None:
    """First read: the board becomes known. Table gone (a database that cannot answer): the last
    state is kept, the failure counted, and the state's age grows; readable again: refreshed."""

    async def body() -> None:
        store = await open_store(make_settings(sqlite_db, tmp_path))
        registry = CollectorRegistry()
        board = QuarantineBoard()
        monitor = QuarantineMonitor(store, board, QuarantineSettings(poll_s=0.05), registry=registry)
        try:
            q = await quarantine(store, upstream="cf", reason="r", actor="a")
            await monitor.start()
            assert board.known and [e.id for e in board.entries] == [q.id]
            from sqlalchemy import text

            async with store.engine.begin() as conn:
                await conn.execute(text("ALTER TABLE upstream_quarantines RENAME TO moved_away"))
            await asyncio.sleep(0.3)  # several polls, all failing
            failures = registry.get_sample_value("tiergate_quarantine_read_failures_total")
            assert failures is not None and failures >= 2
            assert [e.id for e in board.entries] == [q.id]  # kept, not emptied
            assert (registry.get_sample_value("tiergate_quarantine_state_age_seconds") or 0) >= 0.2
            async with store.engine.begin() as conn:
                await conn.execute(text("ALTER TABLE moved_away RENAME TO upstream_quarantines"))
                await conn.execute(text("UPDATE upstream_quarantines SET released_us = 1"))
            await asyncio.sleep(0.3)
            assert board.entries == () and (board.age_s() or 1) < 0.2
        finally:
            await monitor.stop()
            await store.close()

    asyncio.run(body())


def test_monitor_that_never_read_the_state_stays_unknown() -> None:
    async def failing() -> Any:
        raise OSError("database unreachable")

    async def body() -> None:
        board = QuarantineBoard()
        monitor = QuarantineMonitor(None, board, QuarantineSettings(poll_s=0.05), registry=CollectorRegistry(),
                                    loader=failing)  # fmt: skip
        await monitor.start()
        await asyncio.sleep(0.15)
        await monitor.stop()
        assert not board.known

    asyncio.run(body())
