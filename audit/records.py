"""Turn the gateway's value objects into chained rows, validating them on the way in.

Validation happens before a record reaches the writer, so a malformed record fails alone with
``AuditWriteError`` instead of poisoning a batch. Messages name the field, never its value.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from audit.errors import AuditWriteError
from audit.timeutil import to_us
from audit.types import Outcome, RequestRecord
from audit.writer import PendingRow

__all__ = ["event_row", "outcome_row", "request_row"]

_MAX_SHORT = 200
_HEX = "0123456789abcdefABCDEF"
_ENCODE = json.JSONEncoder(sort_keys=True, separators=(",", ":")).encode
_ENDPOINTS = {"chat", "completions", "embeddings", "responses", "messages", "count_tokens"}


def _short(name: str, value: str | None, limit: int = _MAX_SHORT) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > limit:
        raise AuditWriteError(f"audit record field {name!r} must be a string of at most {limit} chars")
    return value


def _int(name: str, value: Any, *, nullable: bool = False) -> int | None:
    if value is None and nullable:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise AuditWriteError(f"audit record field {name!r} must be a non-negative integer")
    return value


def _us(name: str, value: datetime) -> int:
    try:
        return to_us(value)
    except (ValueError, TypeError, AttributeError):
        raise AuditWriteError(f"audit record field {name!r} must be a timezone-aware datetime") from None


def _fp(value: str) -> str:
    # hex: the segment index is keyed by the leading hex digits (audit.batch.segment_key)
    if not isinstance(value, str) or not value or len(value) > 64 or value.strip(_HEX):
        raise AuditWriteError("audit record fingerprints must be hex strings of at most 64 chars")
    return value


def request_row(rec: RequestRecord, *, forwarded: bool) -> PendingRow:
    if rec.endpoint not in _ENDPOINTS:
        raise AuditWriteError("audit record field 'endpoint' is not a known endpoint")
    if rec.tier not in (1, 2, 3):
        raise AuditWriteError("audit record field 'tier' must be 1, 2 or 3")
    if not rec.request_id or len(rec.request_id) > 128:
        raise AuditWriteError("audit record field 'request_id' is required (at most 128 chars)")
    findings = {}
    for entity, count in rec.findings.items():
        findings[_short("findings", entity, 100)] = _int("findings", count)
    segments = tuple(dict.fromkeys(_fp(f) for f in rec.segment_fingerprints))
    values = {
        "request_id": rec.request_id,
        "created_us": _us("created_at", rec.created_at),
        "tenant": _short("tenant", rec.tenant),
        "key_id": _short("key_id", rec.key_id, 64),
        "endpoint": rec.endpoint,
        "client_model": _short("client_model", rec.client_model),
        "upstream": _short("upstream", rec.upstream),
        "upstream_kind": _short("upstream_kind", rec.upstream_kind, 16),
        "provider": _short("provider", getattr(rec, "provider", None)),
        "provider_model": _short("provider_model", rec.provider_model),
        "prompt_chars": _int("prompt_chars", rec.prompt_chars),
        "prompt_tokens": _int("prompt_tokens", rec.prompt_tokens),
        "tier": int(rec.tier),
        "findings": _ENCODE(findings),
        "stripped": bool(rec.stripped),
        "stream": bool(rec.stream),
        "forwarded": forwarded,
        "fingerprint": _fp(rec.fingerprint) if rec.fingerprint is not None else None,
        "segment_fps": " ".join(segments),
    }
    # The lookup index needs no row for a segment that is the whole prompt (a one-message
    # prompt): the whole-prompt fingerprint is matched first. ``segment_fps`` keeps them all.
    indexed = tuple(f for f in segments if f != values["fingerprint"])
    return PendingRow("audit_requests", values, indexed)


def outcome_row(out: Outcome, now_us: int) -> PendingRow:
    if not out.request_id or len(out.request_id) > 128:
        raise AuditWriteError("outcome field 'request_id' is required (at most 128 chars)")
    latency = None
    if out.latency_ms is not None:
        if out.latency_ms < 0:
            raise AuditWriteError("outcome field 'latency_ms' must not be negative")
        latency = round(out.latency_ms * 1000)
    values = {
        "request_id": out.request_id,
        "created_us": now_us,
        "status": _short("status", out.status, 32),
        "http_status": _int("http_status", out.http_status),
        "upstream_status": _int("upstream_status", out.upstream_status, nullable=True),
        "usage_prompt_tokens": _int("usage_prompt_tokens", out.usage_prompt_tokens, nullable=True),
        "usage_completion_tokens": _int("usage_completion_tokens", out.usage_completion_tokens, nullable=True),
        "latency_us": latency,
        "error_class": _short("error_class", out.error_class, 100),
        "integrity_flag": bool(out.integrity_flag),
    }
    return PendingRow("audit_outcomes", values)


def event_row(kind: str, detail: dict[str, Any], now_us: int) -> PendingRow:
    _short("kind", kind, 64)
    if not kind:
        raise AuditWriteError("event kind is required")
    try:
        body = json.dumps(detail, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError):
        raise AuditWriteError("event detail must be JSON-serialisable") from None
    if len(body) > 64_000:
        raise AuditWriteError("event detail is too large")
    return PendingRow("audit_events", {"created_us": now_us, "kind": kind, "detail": body})
