"""Parsing of query strings and form fields; a bad value is a 400 page naming the field."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from gateway.dashboard.errors import BadInput

__all__ = ["opt_int", "opt_text", "opt_time", "time_input"]


def opt_text(params: Any, name: str, limit: int = 200) -> str | None:
    value = params.get(name)
    if value is None:
        return None
    value = str(value).strip()
    if len(value) > limit:
        raise BadInput(f"{name}: at most {limit} characters")
    return value or None


def opt_int(params: Any, name: str, lo: int | None = None, hi: int | None = None) -> int | None:
    value = opt_text(params, name, 30)
    if value is None:
        return None
    try:
        number = int(value)
    except ValueError:
        raise BadInput(f"{name}: not a whole number") from None
    if (lo is not None and number < lo) or (hi is not None and number > hi):
        raise BadInput(f"{name}: out of range")
    return number


def opt_time(params: Any, name: str) -> datetime | None:
    """ISO 8601; a time without a zone (what ``<input type=datetime-local>`` sends) is UTC."""
    value = opt_text(params, name, 40)
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise BadInput(f"{name}: not an ISO 8601 time") from None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def time_input(value: datetime | None) -> str:
    """A value for ``<input type=datetime-local>`` (UTC)."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M") if value is not None else ""
