"""Client keys: shown once, hashed at rest, tenant-scoped listing, revocation."""

from __future__ import annotations

import asyncio

from sqlalchemy import select

from audit.keys import parse_key
from audit.models import ApiKey, AuditEvent
from tests.audit.conftest import make_settings, open_store


def test_key_lifecycle(db_url, tmp_path):
    """create -> authenticate -> wrong secret / malformed rejected -> revoke -> rejected."""

    async def body() -> None:
        store = await open_store(make_settings(db_url, tmp_path))
        try:
            plain, info = await store.create_key("acme", "ci", max_tier=2, models=["b", "a"])
            assert plain.startswith(f"tg_{info.key_id}_") and parse_key(plain) is not None
            assert info.models == ("a", "b") and info.max_tier == 2 and info.revoked_at is None
            got = await store.authenticate(plain)
            assert got == info
            key_id, secret = parse_key(plain)
            wrong = f"tg_{key_id}_{secret[:-1]}{'A' if secret[-1] != 'A' else 'B'}"
            for bad in (wrong, "", "Bearer x", f"tg_{key_id}_", "tg_0123456789abcdef_nope", plain + "x"):
                assert await store.authenticate(bad) is None
            assert await store.revoke_key(info.key_id) is True
            assert await store.revoke_key(info.key_id) is False
            assert await store.revoke_key("ffffffffffffffff") is False
            assert await store.authenticate(plain) is None
            (listed,) = await store.list_keys("acme")
            assert listed.key_id == info.key_id and listed.revoked_at is not None
            async with store.engine.connect() as conn:
                kinds = [r.kind for r in (await conn.execute(select(AuditEvent.kind))).all()]
            assert kinds == ["key_created", "key_revoked"]
        finally:
            await store.close()

    asyncio.run(body())


def test_keys_are_tenant_scoped_and_hashed(db_url, tmp_path):
    """list_keys(tenant) shows only that tenant's keys; the secret is nowhere in the table."""

    async def body() -> None:
        store = await open_store(make_settings(db_url, tmp_path))
        try:
            a, _ = await store.create_key("tenant-a", "one")
            b, _ = await store.create_key("tenant-b", "two", max_tier=1)
            assert {k.tenant for k in await store.list_keys("tenant-a")} == {"tenant-a"}
            assert len(await store.list_keys()) == 2
            async with store.engine.connect() as conn:
                rows = (await conn.execute(select(ApiKey.__table__))).all()
            dump = repr(rows).encode()
            for plain in (a, b):
                assert parse_key(plain)[1].encode() not in dump
            assert all(len(r.secret_hash) == 32 for r in rows)
        finally:
            await store.close()

    asyncio.run(body())
