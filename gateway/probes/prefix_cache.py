"""The cross-tenant prefix-cache probe: may one tenant's prompt warm another tenant's cache?

A shared prefix cache is a channel between tenants twice over: cached tokens computed for one
tenant serve another (content), and the second request's first token comes sooner (timing: a
side channel is still a leak). Each round sends, streamed, on a fresh synthetic prefix P (its
first bytes are a new marker, so no earlier request shares a block of it):

1. tenant A, P: cold;   2. tenant A, P again: warm (the control: does the upstream cache at all?);
3. tenant B, P: must be cold: ``cached_tokens == 0``;   4. tenant B, a fresh prefix: cold.

The probe fails on ``cross_cached`` (step 3 saw cached tokens), ``ttft_advantage`` (step 3's
median time to first token is faster than the cold median by more than ``ttft_margin`` of it and
more than ``ttft_noise_s``), ``cached_tokens_unreported`` (no answer reported
``usage.prompt_tokens_details.cached_tokens``: the upstream cannot be judged by content; probe
only on-prem engines and vendors that report them) and ``errors``. On on-prem each synthetic
tenant has its derived ``cache_salt``, as the gateway sends it (``salting: tenant``).
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import msgspec

from engine import derive_cache_salt
from gateway.probes.plan import ProbePlan
from gateway.probes.settings import PrefixCacheSettings
from gateway.probes.synthetic import prefix_prompt
from tiers.types import UpstreamKind

if TYPE_CHECKING:
    from gateway.tokens import TokenCounter
    from gateway.upstream import UpstreamClient

__all__ = ["EVENT_KIND", "PrefixCacheReport", "Sample", "probe_prefix_cache"]

EVENT_KIND = "prefix_cache_probe"
_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode
_ROLES = ("cold", "warm", "cross", "cold")


@dataclass(frozen=True, slots=True)
class Sample:
    round: int
    role: str  # "cold", "warm" or "cross"
    ttft_s: float | None
    cached_tokens: int | None  # None: not reported
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"round": self.round, "role": self.role, "cached_tokens": self.cached_tokens, "error": self.error,
                "ttft_ms": None if self.ttft_s is None else round(self.ttft_s * 1000, 2)}  # fmt: skip


@dataclass(frozen=True, slots=True)
class PrefixCacheReport:
    upstream: str
    model: str
    started_at: datetime
    duration_s: float
    plan: ProbePlan
    salting: str
    samples: tuple[Sample, ...]
    ttft_margin: float
    ttft_noise_s: float

    def _ok(self, role: str) -> list[Sample]:
        return [s for s in self.samples if s.role == role and s.error is None]

    def _median(self, role: str) -> float | None:
        times = [s.ttft_s for s in self._ok(role) if s.ttft_s is not None]
        return statistics.median(times) if times else None

    @property
    def cross_cached_tokens(self) -> int:
        return sum(s.cached_tokens or 0 for s in self._ok("cross"))

    @property
    def warm_cached_tokens(self) -> int:
        return sum(s.cached_tokens or 0 for s in self._ok("warm"))

    @property
    def reports_cached_tokens(self) -> bool:
        return any(s.cached_tokens is not None for s in self.samples if s.error is None)

    @property
    def ttft_advantage_s(self) -> float | None:
        """How much sooner the cross-tenant request's first token came than a cold one's (median)."""
        cold, cross = self._median("cold"), self._median("cross")
        return None if cold is None or cross is None else cold - cross

    @property
    def reasons(self) -> tuple[str, ...]:
        out = []
        if any(s.error is not None for s in self.samples):
            out.append("errors")
        if self.cross_cached_tokens > 0:
            out.append("cross_cached")
        if not self.reports_cached_tokens:
            out.append("cached_tokens_unreported")
        cold, adv = self._median("cold"), self.ttft_advantage_s
        if cold is not None and adv is not None and adv > max(self.ttft_noise_s, self.ttft_margin * cold):
            out.append("ttft_advantage")
        return tuple(out)

    @property
    def passed(self) -> bool:
        return not self.reasons

    def detail(self) -> dict[str, Any]:
        def ms(v: float | None) -> float | None:
            return None if v is None else round(v * 1000, 2)

        return {"upstream": self.upstream, "model": self.model, "passed": self.passed, "reasons": list(self.reasons),
                "salting": self.salting, "prefix_tokens": self.plan.prompt_tokens // max(self.plan.requests, 1),
                "cross_cached_tokens": self.cross_cached_tokens, "warm_cached_tokens": self.warm_cached_tokens,
                "reports_cached_tokens": self.reports_cached_tokens,
                "ttft_ms": {"cold": ms(self._median("cold")), "warm": ms(self._median("warm")),
                            "cross": ms(self._median("cross"))},
                "samples": [s.as_dict() for s in self.samples],
                "plan": {k: v for k, v in self.plan.as_dict().items() if k != "rungs"},
                "started_at": self.started_at.isoformat(), "duration_ms": round(self.duration_s * 1000, 1)}  # fmt: skip


def _cached(usage: Any) -> int | None:
    details = usage.get("prompt_tokens_details") if isinstance(usage, dict) else None
    value = details.get("cached_tokens") if isinstance(details, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


async def _timed(client: UpstreamClient, body: bytes, rnd: int, role: str,
                 timer: Callable[[], float]) -> Sample:  # fmt: skip
    t0 = timer()
    first: float | None = None
    cached: int | None = None
    done = False
    try:
        opened = await client.open("/chat/completions", body)
        try:
            async for sse_event in opened.response.aiter_events():
                payload = sse_event.data
                if payload.strip() == "[DONE]":
                    done = True
                    break
                event = _decode(payload)
                if not isinstance(event, dict):
                    continue
                if first is None and any(isinstance(c, dict) and (c.get("delta") or {}).get("content")
                                         for c in event.get("choices") or ()):  # fmt: skip
                    first = timer() - t0
                if event.get("usage"):
                    cached = _cached(event["usage"])
        finally:
            await opened.response.aclose()
    except Exception as exc:  # noqa: BLE001 -- the class only: an upstream error may quote the prompt
        return Sample(rnd, role, None, None, type(exc).__name__)
    if not done:
        return Sample(rnd, role, first, cached, "IncompleteStream")
    return Sample(rnd, role, first, cached)


async def probe_prefix_cache(
    client: UpstreamClient,
    plan: ProbePlan,
    cfg: PrefixCacheSettings,
    counter: TokenCounter,
    *,
    salt_key: bytes | None = None,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    timer: Callable[[], float] = time.perf_counter,
) -> PrefixCacheReport:
    """Run ``cfg.rounds`` rounds one request at a time (timing needs a quiet upstream); records nothing."""
    up = client.settings
    onprem = up.kind == UpstreamKind.ONPREM
    if onprem and not salt_key:
        raise ValueError("probing an on-prem upstream needs the cache-salt key")

    def salt(tenant: str) -> str | None:
        if not onprem or not salt_key:
            return None
        return derive_cache_salt(
            salt_key, "tiergate-prefix-a" if cfg.salting == "shared" else f"tiergate-prefix-{tenant}"
        )

    def body(text: str, tenant: str) -> bytes:
        b: dict[str, Any] = {**cfg.request_extra, "model": plan.model, "max_tokens": cfg.max_tokens,
                             "messages": [{"role": "user", "content": text}], "temperature": 0, "stream": True,
                             "stream_options": {"include_usage": True}}  # fmt: skip
        if (s := salt(tenant)) is not None:
            b["cache_salt"] = s
        return _encode(b)

    started_at, t0 = clock(), time.monotonic()
    samples: list[Sample] = []
    for rnd in range(cfg.rounds):
        shared, _m, _c = await asyncio.to_thread(prefix_prompt, counter, cfg.prefix_tokens)
        fresh, _m2, _c2 = await asyncio.to_thread(prefix_prompt, counter, cfg.prefix_tokens)
        for role, tenant, text in zip(_ROLES, ("a", "a", "b", "b"), (shared, shared, shared, fresh), strict=True):
            samples.append(await _timed(client, body(text, tenant), rnd, role, timer))
    return PrefixCacheReport(up.name, plan.model, started_at, time.monotonic() - t0, plan, cfg.salting,
                             tuple(samples), cfg.ttft_margin, cfg.ttft_noise_s)  # fmt: skip
