"""Dashboard administrators and their sign-in sessions.

Passwords are hashed with Argon2id (argon2-cffi's RFC 9106 defaults). Sessions are server-side
rows keyed by a SHA-256 of a 256-bit random token, so signing out, disabling an admin or changing
a password ends every session at once (a signed cookie would live until it expired).

Failed sign-ins are counted per (username, client address) in the database (``audit.lockout``):
the lock holds across replicas, and an attacker locking ``admin`` out from his address does not
lock out the admin elsewhere. A locked pair refuses even the right password until the lock ends.
Unknown, disabled and locked sign-ins take the same path as a wrong password (one Argon2
verification, one failure recorded), so neither the answer nor its timing tells them apart.

``tenant`` None marks a platform admin (sees every tenant); otherwise the admin is confined to that
tenant's rows. Data functions take an engine and own one short transaction each.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from sqlalchemy import (
    BigInteger,
    LargeBinary,
    Row,
    String,
    Text,
    delete,
    insert,
    select,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.orm import Mapped, mapped_column

from audit import lockout
from audit.lockout import LOCK_AFTER
from audit.models import Base
from audit.timeutil import from_us, to_us

__all__ = [
    "DEFAULT_HASHER",
    "LOCK_AFTER",
    "AdminExists",
    "AdminInfo",
    "AdminSession",
    "AdminSessionRow",
    "AdminUser",
    "SignIn",
    "check_sign_in",
    "create_admin",
    "create_session",
    "delete_admin",
    "end_session",
    "list_admins",
    "load_session",
    "set_disabled",
    "set_password",
]

_MIN_PASSWORD = 12
DEFAULT_HASHER = PasswordHasher()  # argon2-cffi's RFC 9106 low-memory profile (Argon2id)


# Verified against for unknown usernames, so "no such admin" costs the same time as a wrong password.
@functools.cache
def _dummy_hash(hasher: PasswordHasher) -> str:
    return hasher.hash(secrets.token_hex(16))


class AdminUser(Base):
    """A dashboard administrator. ``tenant`` NULL: platform admin."""

    __tablename__ = "admin_users"

    username: Mapped[str] = mapped_column(String(200), primary_key=True)
    tenant: Mapped[str | None] = mapped_column(String(200))
    password_hash: Mapped[str] = mapped_column(Text, nullable=False)
    created_us: Mapped[int] = mapped_column(BigInteger, nullable=False)
    disabled_us: Mapped[int | None] = mapped_column(BigInteger)


class AdminSessionRow(Base):
    """A signed-in browser. Only a SHA-256 of the cookie's token is kept."""

    __tablename__ = "admin_sessions"

    token_hash: Mapped[bytes] = mapped_column(LargeBinary(32), primary_key=True)
    username: Mapped[str] = mapped_column(String(200), nullable=False, index=True)
    csrf_token: Mapped[str] = mapped_column(String(64), nullable=False)
    created_us: Mapped[int] = mapped_column(BigInteger, nullable=False)
    expires_us: Mapped[int] = mapped_column(BigInteger, nullable=False)
    last_seen_us: Mapped[int] = mapped_column(BigInteger, nullable=False)


U = AdminUser.__table__
S = AdminSessionRow.__table__


class AdminExists(Exception):
    """An admin with this username already exists."""


@dataclass(frozen=True, slots=True)
class AdminInfo:
    username: str
    tenant: str | None  # None: platform admin
    created_at: datetime
    disabled: bool

    @property
    def is_platform(self) -> bool:
        return self.tenant is None


@dataclass(frozen=True, slots=True)
class SignIn:
    """The outcome of a sign-in attempt. ``locked_until`` is set while this (username, client)
    pair is locked, whether or not the username exists: callers must answer both alike."""

    admin: AdminInfo | None
    locked_until: datetime | None = None


@dataclass(frozen=True, slots=True)
class AdminSession:
    admin: AdminInfo
    csrf_token: str
    expires_at: datetime


def _now() -> datetime:
    return datetime.now(UTC)


def _info(row: Row[Any]) -> AdminInfo:
    return AdminInfo(row.username, row.tenant, from_us(row.created_us),
                     row.disabled_us is not None)  # fmt: skip


def _token_hash(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


def _check_password(password: str) -> None:
    if len(password) < _MIN_PASSWORD:
        raise ValueError(f"passwords need at least {_MIN_PASSWORD} characters")


async def create_admin(engine: AsyncEngine, username: str, password: str, tenant: str | None,
                       *, now: datetime | None = None,
                       hasher: PasswordHasher = DEFAULT_HASHER) -> AdminInfo:  # fmt: skip
    """Create an admin; ``tenant`` None makes a platform admin. Raises ``AdminExists``."""
    username = username.strip()
    if not username or len(username) > 200 or not username.isprintable():
        raise ValueError("a username is 1-200 printable characters")
    _check_password(password)
    created = now or _now()
    digest = await asyncio.to_thread(hasher.hash, password)
    try:
        async with engine.begin() as conn:
            await conn.execute(insert(U).values(
                username=username, tenant=tenant, password_hash=digest, created_us=to_us(created),
            ))  # fmt: skip
    except IntegrityError:
        raise AdminExists(username) from None
    return AdminInfo(username, tenant, created, False)


async def list_admins(engine: AsyncEngine) -> list[AdminInfo]:
    async with engine.connect() as conn:
        rows = (await conn.execute(select(U).order_by(U.c.username))).all()
    return [_info(r) for r in rows]


async def set_password(engine: AsyncEngine, username: str, password: str,
                       *, hasher: PasswordHasher = DEFAULT_HASHER) -> bool:  # fmt: skip
    """Replace the password, clear any lock and end every session of this admin."""
    _check_password(password)
    digest = await asyncio.to_thread(hasher.hash, password)
    async with engine.begin() as conn:
        res = await conn.execute(update(U).where(U.c.username == username).values(password_hash=digest))
        await conn.execute(delete(S).where(S.c.username == username))
        await lockout.forget_user(conn, username)
    return bool(res.rowcount)


async def set_disabled(engine: AsyncEngine, username: str, disabled: bool,
                       *, now: datetime | None = None) -> bool:  # fmt: skip
    """Disable (ending every session) or re-enable an admin."""
    async with engine.begin() as conn:
        value = to_us(now or _now()) if disabled else None
        res = await conn.execute(update(U).where(U.c.username == username).values(disabled_us=value))
        if disabled:
            await conn.execute(delete(S).where(S.c.username == username))
    return bool(res.rowcount)


async def delete_admin(engine: AsyncEngine, username: str) -> bool:
    async with engine.begin() as conn:
        await conn.execute(delete(S).where(S.c.username == username))
        await lockout.forget_user(conn, username)
        res = await conn.execute(delete(U).where(U.c.username == username))
    return bool(res.rowcount)


def _verify(hasher: PasswordHasher, stored: str, password: str) -> bool:
    try:
        return hasher.verify(stored, password)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


async def check_sign_in(engine: AsyncEngine, username: str, password: str, *, client: str,
                        now: datetime | None = None,
                        hasher: PasswordHasher = DEFAULT_HASHER) -> SignIn:  # fmt: skip
    """Verify a password from ``client`` (its address; slow on purpose).

    Every refusal takes one path: one Argon2 verification (against a dummy hash for an unknown,
    disabled or locked sign-in, which therefore never succeeds) and one failure recorded for the
    pair, so a guesser can tell neither from the answer nor from its timing which usernames exist
    or whether a lock is on.
    """
    at_us = to_us(now or _now())
    async with engine.connect() as conn:
        row = (await conn.execute(select(U).where(U.c.username == username))).first()
        locked = await lockout.locked_until(conn, username, client, at_us)
    usable = row is not None and row.disabled_us is None and locked is None
    stored = row.password_hash if usable and row is not None else _dummy_hash(hasher)
    ok = await asyncio.to_thread(_verify, hasher, stored, password) and usable
    async with engine.begin() as conn:
        if ok and row is not None:  # ok implies a row; said again for the type checker
            await lockout.clear(conn, username, client)
            if hasher.check_needs_rehash(stored):
                rehashed = await asyncio.to_thread(hasher.hash, password)
                await conn.execute(update(U).where(U.c.username == username).values(password_hash=rehashed))
            return SignIn(_info(row))
        return SignIn(None, await lockout.record_failure(conn, username, client, at_us))


async def create_session(engine: AsyncEngine, username: str, *, lifetime_s: int,
                         now: datetime | None = None) -> tuple[str, AdminSession]:  # fmt: skip
    """A new session for a signed-in admin; returns the cookie token (shown to no one else)."""
    at_us = to_us(now or _now())
    token = secrets.token_urlsafe(32)
    csrf = secrets.token_urlsafe(32)
    expires = at_us + lifetime_s * 1_000_000
    async with engine.begin() as conn:
        row = (await conn.execute(select(U).where(U.c.username == username))).first()
        if row is None or row.disabled_us is not None:
            raise LookupError("no such active admin")
        # Drop this admin's expired sessions while we are here: the table stays small.
        await conn.execute(delete(S).where(S.c.username == username, S.c.expires_us <= at_us))
        await conn.execute(insert(S).values(token_hash=_token_hash(token), username=username,
                                            csrf_token=csrf, created_us=at_us, expires_us=expires,
                                            last_seen_us=at_us))  # fmt: skip
    return token, AdminSession(_info(row), csrf, from_us(expires))


async def load_session(engine: AsyncEngine, token: str, *, idle_s: int,
                       now: datetime | None = None) -> AdminSession | None:  # fmt: skip
    """The live session for a cookie token, or None (unknown, expired, idle too long, disabled)."""
    if not token or len(token) > 200:
        return None
    at_us = to_us(now or _now())
    digest = _token_hash(token)
    stmt = (select(S.c.token_hash, S.c.csrf_token, S.c.expires_us, S.c.last_seen_us, U)
            .join(U, U.c.username == S.c.username).where(S.c.token_hash == digest))  # fmt: skip
    async with engine.connect() as conn:
        row = (await conn.execute(stmt)).first()
    if row is None or not hmac.compare_digest(row.token_hash, digest):
        return None
    if row.expires_us <= at_us or row.last_seen_us + idle_s * 1_000_000 <= at_us or row.disabled_us:
        await end_session(engine, token)
        return None
    if at_us - row.last_seen_us > 60 * 1_000_000:  # touch at most once a minute
        async with engine.begin() as conn:
            await conn.execute(update(S).where(S.c.token_hash == digest).values(last_seen_us=at_us))
    return AdminSession(_info(row), row.csrf_token, from_us(row.expires_us))


async def end_session(engine: AsyncEngine, token: str) -> None:
    async with engine.begin() as conn:
        await conn.execute(delete(S).where(S.c.token_hash == _token_hash(token)))
