"""UTC microseconds since the epoch: the only time representation stored in the audit tables."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

__all__ = ["DAY_US", "from_us", "to_us"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
DAY_US = 86_400_000_000


def to_us(moment: datetime) -> int:
    """Aware datetime -> integer microseconds; a naive one is refused (its zone is unknowable)."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise ValueError("timestamps must be timezone-aware")
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def from_us(value: int) -> datetime:
    return _EPOCH + timedelta(microseconds=int(value))
