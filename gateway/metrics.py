"""Prometheus metrics, one registry per app (no module globals, so tests and apps stay apart)."""

from __future__ import annotations

import hashlib
import hmac
import os
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

__all__ = ["CONTENT_TYPE_LATEST", "Metrics", "scrape_allowed"]

_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)


@dataclass
class Metrics:
    registry: CollectorRegistry = field(default_factory=CollectorRegistry)

    def __post_init__(self) -> None:
        r = self.registry
        self.requests = Counter(
            "tiergate_requests",
            "Requests by tier, upstream and HTTP status",
            ["endpoint", "tier", "upstream", "status"],
            registry=r,
        )
        self.refusals = Counter(
            "tiergate_refusals", "Requests refused by the gateway, by reason", ["reason"], registry=r
        )
        self.stripped = Counter(
            "tiergate_identifiers_stripped",
            "Identifiers replaced by placeholders, by entity type",
            ["entity"],
            registry=r,
        )
        self.latency = Histogram(
            "tiergate_request_latency_seconds",
            "Time to the response head (streams: first byte)",
            ["endpoint"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.integrity_failures = Counter(
            "tiergate_integrity_failures",
            "Upstream answers withheld by the integrity check",
            ["upstream", "reason"],
            registry=r,
        )
        self.fallbacks = Counter(
            "tiergate_upstream_fallbacks",
            "Requests moved to the next upstream before any byte",
            ["upstream", "reason"],
            registry=r,
        )
        self.ratelimit_backend_errors = Counter(
            "tiergate_ratelimit_backend_errors",
            "Rate-limit backend failures (request passed: fail open)",
            registry=r,
        )
        self.onprem_hardened = Gauge(
            "tiergate_onprem_hardened",
            "1 when the on-prem engine's manifest is hardened and consistent",
            ["upstream"],
            registry=r,
        )

        self.prefilter_attached = Gauge(
            "tiergate_prefilter_attached",
            "1 once this process attached the compiled database (a long prompt may then take it as its first pass)",
            registry=r,
        )

    def render(self) -> bytes:
        return generate_latest(self.registry)


def scrape_allowed(token_env: str | None, authorization: str | None) -> bool:
    """Whether a scrape may read the metrics (every tenant's traffic): always without
    ``token_env``; else only with ``Authorization: Bearer <$token_env>``, and never while that
    variable is unset or empty. Both sides are hashed first, so the comparison takes the same
    time whatever the length or content of the guess."""
    if token_env is None:
        return True
    expected = os.environ.get(token_env, "")
    scheme, _, given = (authorization or "").partition(" ")
    if not expected or scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(_digest(given.strip()), _digest(expected))


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()
