"""Value objects the gateway hands to the audit log. Never carry prompt text."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """The write-ahead row: committed before a single byte goes upstream.

    ``upstream``/``upstream_kind``/``provider_model`` are None for requests refused before routing.
    ``fingerprint`` is an HMAC (server secret) of the normalised prompt, hex encoded.
    """

    request_id: str
    created_at: datetime  # timezone-aware UTC
    tenant: str | None
    key_id: str | None
    endpoint: str  # "chat" | "completions" | "embeddings" | "responses" | "messages" | "count_tokens"
    client_model: str | None
    upstream: str | None
    upstream_kind: str | None
    provider_model: str | None
    prompt_chars: int
    prompt_tokens: int
    tier: int
    findings: dict[str, int] = field(default_factory=dict)  # entity type -> count
    stripped: bool = False
    stream: bool = False
    fingerprint: str | None = None  # HMAC of the whole normalised prompt
    # HMAC of each normalised segment (message / part / input), so that `exposure match --document`
    # finds a document that was sent as one message among others.
    segment_fingerprints: tuple[str, ...] = ()
    # The vendor behind the upstream (e.g. "openai"), which a disclosure may name instead of our
    # upstream names. Optional so that callers written before it existed keep working.
    provider: str | None = None


class OutcomeKind(StrEnum):
    """How a request ended: the value of :attr:`Outcome.status`, and the HTTP status its client
    got for it. A refusal's status is its error's own (400, 403, 429 ...): ``REFUSED`` carries none."""

    OK = "ok"
    UPSTREAM_ERROR = "upstream_error"
    INTEGRITY_ERROR = "integrity_error"
    TIMEOUT = "timeout"
    CLIENT_CLOSED = "client_closed"
    REFUSED = "refused"
    # A write-ahead row whose request was then not forwarded after all (its commit was not
    # confirmed in time, so the client was told 503). Exposure queries do not count such rows.
    NOT_FORWARDED = "not_forwarded"

    @property
    def http_status(self) -> int | None:
        return _HTTP_STATUS[self]


_HTTP_STATUS: dict[OutcomeKind, int | None] = {
    OutcomeKind.OK: 200,
    OutcomeKind.UPSTREAM_ERROR: 502,
    OutcomeKind.INTEGRITY_ERROR: 502,
    OutcomeKind.TIMEOUT: 504,
    OutcomeKind.CLIENT_CLOSED: 499,  # nginx's code for a client that hung up: nobody got it
    OutcomeKind.REFUSED: None,
    OutcomeKind.NOT_FORWARDED: 503,
}

NOT_FORWARDED = OutcomeKind.NOT_FORWARDED


@dataclass(frozen=True, slots=True)
class Outcome:
    """What happened after forwarding (or why nothing was forwarded)."""

    request_id: str
    status: str  # an OutcomeKind's value
    http_status: int  # what the client got
    upstream_status: int | None = None
    usage_prompt_tokens: int | None = None
    usage_completion_tokens: int | None = None
    latency_ms: float | None = None
    error_class: str | None = None  # e.g. "tier_not_allowed", "rate_limited", "upstream_timeout"
    integrity_flag: bool = False


@dataclass(frozen=True, slots=True)
class KeyInfo:
    """A client API key as the gateway sees it; the secret itself is never kept."""

    key_id: str
    tenant: str
    name: str
    max_tier: int
    models: tuple[str, ...] | None
    created_at: datetime
    revoked_at: datetime | None = None

    @property
    def active(self) -> bool:
        return self.revoked_at is None
