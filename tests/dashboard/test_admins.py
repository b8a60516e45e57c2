"""Admin users and sessions (``audit.admins``) and the overview's queries, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from argon2 import PasswordHasher

from audit import AuditSettings, AuditStore, Outcome, RequestRecord
from audit import admins as A
from migrations import current_revision, downgrade, upgrade

T0 = datetime(2026, 9, 1, 12, 0, tzinfo=UTC)
PW = "a long enough password"
# Argon2id with small costs: the same code paths, a fraction of the CPU on a shared test machine.
FAST = PasswordHasher(time_cost=1, memory_cost=8 * 1024, parallelism=1)


def run(db_url: str, tmp_path: Path, body: Callable[[AuditStore], Awaitable[Any]]) -> Any:
    async def main() -> Any:
        settings = AuditSettings(url=db_url, checkpoint_dir=str(tmp_path / "cp"))
        store = await AuditStore.open(settings, fingerprint_key=b"f" * 32, checkpoint_key=b"c" * 32)
        try:
            await upgrade(store)
            return await body(store)
        finally:
            await store.close()

    return asyncio.run(main())


HERE, THERE = "192.0.2.10", "198.51.100.7"


def test_create_sign_in_and_lockout(db_url: str, tmp_path: Path) -> None:
    """Right password signs in; five failures from one client lock that (username, client) pair
    (even the right password) until it expires, and each further failure doubles the lock."""

    async def body(store: AuditStore) -> None:
        e = store.engine
        info = await A.create_admin(e, "alice", PW, "acme", now=T0, hasher=FAST)
        assert info.tenant == "acme" and not info.is_platform
        with pytest.raises(A.AdminExists):
            await A.create_admin(e, "alice", PW, None, hasher=FAST)
        with pytest.raises(ValueError):
            await A.create_admin(e, "bob", "short", None, hasher=FAST)
        sign = functools.partial(A.check_sign_in, e, hasher=FAST, client=HERE)
        ok = await sign("alice", PW, now=T0)
        assert ok.admin is not None and ok.admin.username == "alice"
        assert (await sign("nobody", PW, now=T0)).admin is None
        for i in range(A.LOCK_AFTER - 1):
            res = await sign("alice", "wrong password!", now=T0)
            assert res.admin is None and res.locked_until is None, i
        locked = await sign("alice", "wrong password!", now=T0)
        assert locked.locked_until == T0 + timedelta(seconds=30)
        during = await sign("alice", PW, now=T0 + timedelta(seconds=10))
        assert during.admin is None and during.locked_until == T0 + timedelta(seconds=30)  # not lengthened
        elsewhere = await A.check_sign_in(e, "alice", PW, client=THERE, now=T0 + timedelta(seconds=10), hasher=FAST)
        assert elsewhere.admin is not None  # the lock is this client's, not the account's
        after = await sign("alice", PW, now=T0 + timedelta(seconds=31))
        assert after.admin is not None  # the lock expired and success resets the counter
        # Each further failure after the threshold doubles the lock.
        for _ in range(A.LOCK_AFTER):
            last = await sign("alice", "nope nope nope", now=T0 + timedelta(minutes=1))
        assert last.locked_until == T0 + timedelta(minutes=1, seconds=30)
        again = await sign("alice", "nope nope nope", now=T0 + timedelta(minutes=2))
        assert again.locked_until == T0 + timedelta(minutes=2, seconds=60)
        # set_password clears the lock.
        assert await A.set_password(e, "alice", "a brand new password", hasher=FAST)
        assert (await sign("alice", "a brand new password", now=T0 + timedelta(minutes=2))).admin

    run(db_url, tmp_path, body)


def test_unknown_usernames_lock_like_real_ones(db_url: str, tmp_path: Path) -> None:
    """A made-up username locks after the same number of failures as a real one, so locking tells
    nothing; names are stored only as hashes; pairs quiet for a day are forgotten."""
    from audit import lockout

    async def body(store: AuditStore) -> None:
        e = store.engine
        await A.create_admin(e, "erin", PW, None, now=T0, hasher=FAST)
        real = [await A.check_sign_in(e, "erin", "wrong password!", client=HERE, now=T0, hasher=FAST)
                for _ in range(A.LOCK_AFTER)]  # fmt: skip
        fake = [await A.check_sign_in(e, "not-an-admin", "wrong password!", client=HERE, now=T0, hasher=FAST)
                for _ in range(A.LOCK_AFTER)]  # fmt: skip
        assert [r.locked_until for r in real] == [r.locked_until for r in fake]
        assert real[-1].locked_until == T0 + timedelta(seconds=30)
        async with e.connect() as conn:
            rows = (await conn.execute(lockout.F.select())).all()
        assert len(rows) == 2 and all(b"erin" not in r.username_hash and len(r.username_hash) == 32 for r in rows)
        later = T0 + timedelta(seconds=lockout.FORGET_S + 1)
        await A.check_sign_in(e, "someone", "x", client=THERE, now=later, hasher=FAST)
        async with e.connect() as conn:
            left = (await conn.execute(lockout.F.select())).all()
        assert [r.client for r in left] == [THERE]

    run(db_url, tmp_path, body)


def test_concurrent_failures_all_count(db_url: str, tmp_path: Path) -> None:
    """Failures of one pair racing each other (several replicas) are all counted."""

    async def body(store: AuditStore) -> None:
        e = store.engine
        await A.create_admin(e, "frank", PW, None, now=T0, hasher=FAST)
        await asyncio.gather(*(A.check_sign_in(e, "frank", "wrong password!", client=HERE, now=T0, hasher=FAST)
                               for _ in range(A.LOCK_AFTER)))  # fmt: skip
        locked = await A.check_sign_in(e, "frank", PW, client=HERE, now=T0, hasher=FAST)
        assert locked.admin is None and locked.locked_until is not None

    run(db_url, tmp_path, body)


def test_passwords_are_argon2_hashes(db_url: str, tmp_path: Path) -> None:
    """The stored password is an Argon2id hash, never the password."""

    async def body(store: AuditStore) -> None:
        await A.create_admin(store.engine, "carol", PW, None, hasher=FAST)
        async with store.engine.connect() as conn:
            row = (await conn.execute(A.U.select())).one()
        assert row.password_hash.startswith("$argon2id$") and PW not in row.password_hash

    run(db_url, tmp_path, body)


def test_sessions_expire_and_end(db_url: str, tmp_path: Path) -> None:
    """Sessions end by idle time, by lifetime, on sign-out, on disabling and on a password change."""

    async def body(store: AuditStore) -> None:
        e = store.engine
        await A.create_admin(e, "dave", PW, None, now=T0, hasher=FAST)
        token, session = await A.create_session(e, "dave", lifetime_s=3600, now=T0)
        assert session.admin.is_platform and len(session.csrf_token) >= 40
        loaded = await A.load_session(e, token, idle_s=600, now=T0 + timedelta(seconds=5))
        assert loaded is not None and loaded.csrf_token == session.csrf_token
        assert await A.load_session(e, token + "x", idle_s=600, now=T0) is None
        # Used within the idle window it lives on; unused past it, it is gone for good.
        assert await A.load_session(e, token, idle_s=600, now=T0 + timedelta(seconds=500))
        assert await A.load_session(e, token, idle_s=600, now=T0 + timedelta(seconds=1200)) is None
        assert await A.load_session(e, token, idle_s=600, now=T0 + timedelta(seconds=501)) is None
        # Lifetime is absolute.
        t2, _ = await A.create_session(e, "dave", lifetime_s=60, now=T0)
        assert await A.load_session(e, t2, idle_s=600, now=T0 + timedelta(seconds=61)) is None
        t3, _ = await A.create_session(e, "dave", lifetime_s=3600, now=T0)
        await A.end_session(e, t3)
        assert await A.load_session(e, t3, idle_s=600, now=T0) is None
        t4, _ = await A.create_session(e, "dave", lifetime_s=3600, now=T0)
        assert await A.set_disabled(e, "dave", True, now=T0)
        assert await A.load_session(e, t4, idle_s=600, now=T0) is None
        assert (await A.check_sign_in(e, "dave", PW, client=HERE, now=T0, hasher=FAST)).admin is None  # disabled
        with pytest.raises(LookupError):
            await A.create_session(e, "dave", lifetime_s=60, now=T0)
        assert await A.set_disabled(e, "dave", False)
        t5, _ = await A.create_session(e, "dave", lifetime_s=3600, now=T0)
        await A.set_password(e, "dave", "another long password", hasher=FAST)
        assert await A.load_session(e, t5, idle_s=600, now=T0) is None
        assert [a.username for a in await A.list_admins(e)] == ["dave"]
        assert await A.delete_admin(e, "dave") and not await A.list_admins(e)

    run(db_url, tmp_path, body)


def test_migration_adds_and_removes_admin_tables(db_url: str, tmp_path: Path) -> None:
    """Head has the admin tables; downgrading to the audit revision drops only them."""

    async def tables(store: AuditStore) -> set[str]:
        from sqlalchemy import inspect

        async with store.engine.connect() as conn:
            return set(await conn.run_sync(lambda c: inspect(c).get_table_names()))

    async def body(store: AuditStore) -> None:
        assert await current_revision(store.engine) != "0001_audit_initial"
        assert {"admin_users", "admin_sessions", "audit_requests"} <= await tables(store)
        await downgrade(store, "0001_audit_initial")
        left = await tables(store)
        assert "admin_users" not in left and "admin_sessions" not in left and "audit_requests" in left
        await upgrade(store)
        await A.create_admin(store.engine, "erin", PW, None, hasher=FAST)

    run(db_url, tmp_path, body)


def _rec(rid: str, at: datetime, tenant: str, tier: int, *, findings: dict[str, int] | None = None,
         stripped: bool = False, upstream: str = "vendor") -> RequestRecord:  # fmt: skip
    return RequestRecord(request_id=rid, created_at=at, tenant=tenant, key_id="k", endpoint="chat",
                         client_model="chat", upstream=upstream, upstream_kind="shared",
                         provider_model="m1", prompt_chars=40, prompt_tokens=10, tier=tier,
                         findings=findings or {}, stripped=stripped)  # fmt: skip


def test_overview_queries(db_url: str, tmp_path: Path) -> None:
    """Per-tier buckets, upstream counts, refusals, stripped identifiers and alarms, scoped by tenant."""
    from gateway.dashboard.stats import overview, pick_range

    async def body(store: AuditStore) -> None:
        h = timedelta(hours=1)
        await store.record_request(_rec("a1", T0 - 3 * h, "acme", 1))
        await store.record_request(_rec("a2", T0 - 3 * h, "acme", 2, findings={"EMAIL_ADDRESS": 2}, stripped=True))
        await store.record_request(_rec("a3", T0 - h, "acme", 3, upstream="local"))
        await store.record_outcome(Outcome("a3", "integrity_error", 502, 200, 1, 1, integrity_flag=True))
        await store.record_refusal(
            _rec("a4", T0 - h, "acme", 2), Outcome("a4", "refused", 403, error_class="tier_not_allowed")
        )
        await store.record_request(_rec("g1", T0 - h, "globex", 1, findings={"PHONE_NUMBER": 1}, stripped=True))
        await store.record_request(_rec("old", T0 - 48 * h, "acme", 3))  # outside 24 h
        await store.record_event("isolation_probe", {"upstream": "vendor", "passed": False})
        rng = pick_range("24h", None, None, T0)
        everyone = await overview(store.engine, rng, ())
        assert everyone.totals_by_tier == {1: 2, 2: 2, 3: 1}
        assert len(everyone.bucket_labels) == 25  # hourly buckets over 24 h, both ends included
        assert sum(everyone.tier_series[2]) == 2 and everyone.tier_series[2][-4] == 1
        assert dict(everyone.stripped) == {"EMAIL_ADDRESS": 2, "PHONE_NUMBER": 1}
        assert everyone.refusals == [("tier_not_allowed", 1)]
        assert everyone.integrity_total == 1
        assert dict(everyone.by_upstream_model) == {"vendor · m1": 3, "local · m1": 1}
        # The probe event's time comes from the store's real clock, not T0: not in this window.
        acme = await overview(store.engine, rng, ("acme",))
        assert acme.totals_by_tier == {1: 1, 2: 2, 3: 1} and dict(acme.stripped) == {"EMAIL_ADDRESS": 2}
        week = await overview(store.engine, pick_range("7d", None, None, T0), ("acme",))
        assert week.totals_by_tier[3] == 2
        custom = pick_range(None, T0 - 2 * h, T0, T0)
        assert custom.name == "custom" and custom.bucket_us == 5 * 60_000_000
        now = await overview(store.engine, pick_range("1h", None, None, datetime.now(UTC)), ())
        assert len(now.probe_alarms) == 1 and now.probe_alarms[0]["upstream"] == "vendor"

    run(db_url, tmp_path, body)
