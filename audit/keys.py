"""Client API keys: ``tg_<key_id>_<secret>``, shown once, stored as SHA-256 of the secret.

The secret is 256 random bits, so a fast hash is as strong as a slow password hash here and keeps
authentication off the request's critical path; the comparison is constant-time.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Row, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from audit.models import ApiKey
from audit.timeutil import from_us, to_us
from audit.types import KeyInfo

__all__ = ["KEY_PREFIX", "authenticate", "create_key", "list_keys", "parse_key", "revoke_key"]

KEY_PREFIX = "tg"
_KEY_ID = re.compile(r"^[0-9a-f]{16}$")
_T = ApiKey.__table__
# Compared against when the key id is unknown, so a miss costs the same as a wrong secret.
_DUMMY_HASH = hashlib.sha256(b"tiergate/no-such-key").digest()


def _hash(secret: str) -> bytes:
    return hashlib.sha256(secret.encode("utf-8")).digest()


def parse_key(presented: str) -> tuple[str, str] | None:
    """Split ``tg_<key_id>_<secret>``; None if it is not shaped like one of our keys."""
    parts = presented.split("_", 2)
    if len(parts) != 3 or parts[0] != KEY_PREFIX or not _KEY_ID.match(parts[1]) or not parts[2]:
        return None
    return parts[1], parts[2]


def _info(row: Row[Any]) -> KeyInfo:
    models = json.loads(row.models) if row.models is not None else None
    return KeyInfo(
        key_id=row.key_id,
        tenant=row.tenant,
        name=row.name,
        max_tier=int(row.max_tier),
        models=tuple(models) if models is not None else None,
        created_at=from_us(row.created_us),
        revoked_at=from_us(row.revoked_us) if row.revoked_us is not None else None,
    )


async def create_key(
    conn: AsyncConnection,
    tenant: str,
    name: str,
    max_tier: int = 3,
    models: list[str] | tuple[str, ...] | None = None,
    now: datetime | None = None,
) -> tuple[str, KeyInfo]:
    if not tenant or not name:
        raise ValueError("tenant and name are required")
    if max_tier not in (1, 2, 3):
        raise ValueError("max_tier must be 1, 2 or 3")
    model_list = sorted(set(models)) if models is not None else None
    created = to_us(now or datetime.now(UTC))
    # 64-bit random key ids: a collision surfaces as an IntegrityError rather than a silent overwrite.
    key_id = secrets.token_hex(8)
    secret = secrets.token_urlsafe(32)
    await conn.execute(
        insert(_T).values(
            key_id=key_id,
            tenant=tenant,
            name=name,
            max_tier=max_tier,
            models=json.dumps(model_list) if model_list is not None else None,
            secret_hash=_hash(secret),
            created_us=created,
            revoked_us=None,
        )
    )
    info = KeyInfo(key_id, tenant, name, max_tier,
                   tuple(model_list) if model_list is not None else None,
                   from_us(created), None)  # fmt: skip
    return f"{KEY_PREFIX}_{key_id}_{secret}", info


async def authenticate(conn: AsyncConnection, presented: str) -> KeyInfo | None:
    """The key's info if the secret matches and the key is not revoked, else None."""
    parsed = parse_key(presented) if presented else None
    if parsed is None:
        hmac.compare_digest(_DUMMY_HASH, _hash(presented or ""))
        return None
    key_id, secret = parsed
    row = (await conn.execute(select(_T).where(_T.c.key_id == key_id))).first()
    stored = bytes(row.secret_hash) if row is not None else _DUMMY_HASH
    ok = hmac.compare_digest(stored, _hash(secret))
    if row is None or not ok or row.revoked_us is not None:
        return None
    return _info(row)


async def list_keys(conn: AsyncConnection, tenant: str | None = None) -> list[KeyInfo]:
    stmt = select(_T).order_by(_T.c.tenant, _T.c.created_us, _T.c.key_id)
    if tenant is not None:
        stmt = stmt.where(_T.c.tenant == tenant)
    return [_info(r) for r in (await conn.execute(stmt)).all()]


async def revoke_key(conn: AsyncConnection, key_id: str, now: datetime | None = None) -> KeyInfo | None:
    """Revoke an active key; returns its info, or None if unknown or already revoked."""
    result = await conn.execute(
        update(_T)
        .where(_T.c.key_id == key_id, _T.c.revoked_us.is_(None))
        .values(revoked_us=to_us(now or datetime.now(UTC)))
    )
    if result.rowcount != 1:
        return None
    row = (await conn.execute(select(_T).where(_T.c.key_id == key_id))).one()
    return _info(row)
