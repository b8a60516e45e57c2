"""Sign-in lockout per (username, client address), held in the database.

Failures count per pair, not per account: an attacker at one address who locks ``admin`` out
locks only himself out, and the admin signing in from elsewhere is unaffected (a per-account
lock let anyone lock any admin out). The lock holds across gateway replicas because it lives
in the database. Pairs for unknown usernames are counted exactly like real ones, so whether a
pair locks says nothing about whether the account exists; usernames are kept only as a
SHA-256 (a password typed into the username field must not sit in the table).

After ``LOCK_AFTER`` consecutive failures the pair is locked for a period that doubles with each
further failure (capped). Attempts while locked are not counted (retrying does not lengthen the
lock). A pair with no failure for ``FORGET_S`` is forgotten. Functions take a connection inside
the caller's transaction.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy import BigInteger, Integer, LargeBinary, String, case, delete, select, update
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.orm import Mapped, mapped_column

from audit.models import Base
from audit.timeutil import from_us

if TYPE_CHECKING:
    from sqlalchemy.dialects import postgresql, sqlite

__all__ = ["FORGET_S", "LOCK_AFTER", "SignInFailure", "clear", "forget_user", "locked_until", "record_failure"]

LOCK_AFTER = 5  # consecutive failures of one pair before its first lock
_LOCK_BASE_S = 30
_LOCK_MAX_S = 15 * 60
FORGET_S = 24 * 3600  # far above the longest lock: a forgotten pair is never a locked one
_CLIENT_CHARS = 100  # an IPv6 address with zone fits; anything longer is cut, not refused


class SignInFailure(Base):
    """Consecutive failed sign-ins of one (username, client address) pair."""

    __tablename__ = "admin_sign_in_failures"

    username_hash: Mapped[bytes] = mapped_column(LargeBinary(32), primary_key=True)
    client: Mapped[str] = mapped_column(String(_CLIENT_CHARS), primary_key=True)
    failed_count: Mapped[int] = mapped_column(Integer, nullable=False)
    locked_until_us: Mapped[int | None] = mapped_column(BigInteger)
    last_failed_us: Mapped[int] = mapped_column(BigInteger, nullable=False, index=True)


F = SignInFailure.__table__


def _key(username: str, client: str) -> tuple[bytes, str]:
    return hashlib.sha256(username.encode("utf-8", "surrogatepass")).digest(), client[:_CLIENT_CHARS]


def _lock_seconds(failures: int) -> int:
    if failures < LOCK_AFTER:
        return 0
    return int(min(_LOCK_BASE_S * 2 ** (failures - LOCK_AFTER), _LOCK_MAX_S))


async def locked_until(conn: AsyncConnection, username: str, client: str, at_us: int) -> datetime | None:
    """When the pair's lock ends, or None when it may try now."""
    name, addr = _key(username, client)
    until = (await conn.execute(select(F.c.locked_until_us)
                                .where(F.c.username_hash == name, F.c.client == addr))).scalar()  # fmt: skip
    return from_us(until) if until is not None and until > at_us else None


async def record_failure(conn: AsyncConnection, username: str, client: str, at_us: int) -> datetime | None:
    """Count one failure of the pair (unless it is locked now); returns its lock's end, if any."""
    name, addr = _key(username, client)
    # One statement: concurrent failures of the same pair (several replicas) all count.
    locked_now = F.c.locked_until_us.is_not(None) & (F.c.locked_until_us > at_us)
    values = {"username_hash": name, "client": addr, "failed_count": 1, "last_failed_us": at_us}
    stmt: postgresql.Insert | sqlite.Insert
    # the dialect's own INSERT … ON CONFLICT, imported here: the PostgreSQL dialect's modules cost
    # a start on the default SQLite ≈ 35 ms, for a failed sign-in's statement
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        stmt = pg_insert(F).values(values)
    else:
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        stmt = sqlite_insert(F).values(values)
    await conn.execute(stmt.on_conflict_do_update(
        index_elements=[F.c.username_hash, F.c.client],
        set_={"failed_count": case((locked_now, F.c.failed_count), else_=F.c.failed_count + 1),
              "last_failed_us": at_us},
    ))  # fmt: skip
    row = (await conn.execute(select(F.c.failed_count, F.c.locked_until_us)
                              .where(F.c.username_hash == name, F.c.client == addr))).one()  # fmt: skip
    # Forget pairs quiet for a day, so the table stays as small as recent failures.
    await conn.execute(delete(F).where(F.c.last_failed_us < at_us - FORGET_S * 1_000_000))
    if row.locked_until_us is not None and row.locked_until_us > at_us:
        return from_us(row.locked_until_us)
    lock = _lock_seconds(int(row.failed_count))
    if not lock:
        return None
    until = at_us + lock * 1_000_000
    await conn.execute(update(F).where(F.c.username_hash == name, F.c.client == addr)
                       .values(locked_until_us=until))  # fmt: skip
    return from_us(until)


async def clear(conn: AsyncConnection, username: str, client: str) -> None:
    """A successful sign-in from this client: its count starts again."""
    name, addr = _key(username, client)
    await conn.execute(delete(F).where(F.c.username_hash == name, F.c.client == addr))


async def forget_user(conn: AsyncConnection, username: str) -> None:
    """Every pair of this username (a new password, a deleted admin)."""
    await conn.execute(delete(F).where(F.c.username_hash == _key(username, "")[0]))
