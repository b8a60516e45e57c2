"""The ``probes:`` block (``ProbeSettings``) with its ``ladder`` and ``prefix_cache`` blocks.

Apart from the probes themselves (``gateway.probe``, ``gateway.probes.*``): the settings tree and
every probe import these without importing each other.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["LadderSettings", "PrefixCacheSettings", "ProbeSettings"]

_STRICT = ConfigDict(extra="forbid", frozen=True)


class LadderSettings(BaseModel):
    """Long-context ladder probes: synthetic prompts of rising length up to the context window."""

    model_config = _STRICT

    interval_s: float | None = Field(None, gt=0)
    """Seconds between two scheduled ladders (None: only ``tiergate probe --ladder`` runs them)."""
    upstreams: list[str] = Field(default_factory=list)
    """Upstream names the scheduled ladder climbs; empty: every configured upstream."""
    rungs: list[int] | None = None
    """Explicit rung lengths in prompt tokens (our count); None: the default ladder (geometric
    from ``start_tokens`` to the context window, plus rungs around ``safe_prompt_tokens`` and,
    with ``over_context``, one just above the context window)."""
    start_tokens: int = Field(256, ge=16)
    """The first rung of the default geometric ladder. A rung shorter than the probe's fixed text
    (its instructions and markers: about 100 tokens, ~330 with a byte-level tokenizer) is sent at
    that length; each request's own count is in the report."""
    factor: float = Field(2.0, gt=1.0, le=16.0)
    """Ratio between two rungs of the default geometric ladder."""
    safe_margin: float = Field(0.02, gt=0, lt=0.5)
    """The rungs around ``safe_prompt_tokens`` sit this fraction below and above it (at least 16 tokens)."""
    over_context: bool = True
    """Add a rung just above the context window: it must be refused (4xx), never answered over a
    truncated or replaced prompt."""
    requests_per_rung: int = Field(2, ge=1, le=64)
    """Requests per rung, each from its own synthetic tenant (its own cache_salt on on-prem)."""
    concurrency: int = Field(4, ge=1, le=256)
    """Requests in flight at once, across rungs: cross-talk needs neighbours."""
    max_tokens: int = Field(64, ge=8, le=4096)
    """``max_tokens`` of each rung request (the answer repeats two markers of 28 characters)."""
    require_echo: bool = True
    """A rung passes only when each answer repeats its start and end markers (proof the whole
    prompt was read). Off for a model that cannot follow instructions (a random-weight test model):
    usage, cross-talk and empty answers are still judged."""
    request_extra: dict[str, Any] = Field(default_factory=dict)
    """Extra JSON fields sent with every rung request (e.g. vLLM's ``ignore_eos``)."""
    stream: bool = False
    """Ask for streamed (SSE) answers, with the usage in the last event: engines serve streams on a
    path of their own. Markers split across deltas are joined; a stream without ``[DONE]`` fails."""
    lower_safe_length: bool = False
    """On a failed rung, lower the upstream's effective safe length to the last good rung below it
    (shared by every replica) until an admin restores it: ``tiergate probe --restore-safe-length``."""

    @field_validator("rungs")
    @classmethod
    def _positive(cls, value: list[int] | None) -> list[int] | None:
        if value is not None and (not value or any(r < 16 for r in value)):
            raise ValueError("rungs: a non-empty list of token counts, each at least 16")
        return value

    @field_validator("request_extra")
    @classmethod
    def _no_overrides(cls, value: dict[str, Any]) -> dict[str, Any]:
        clash = sorted(set(value) & {"model", "messages", "max_tokens", "cache_salt", "stream", "stream_options"})
        if clash:
            raise ValueError(f"request_extra may not set {', '.join(clash)}")
        return value


class PrefixCacheSettings(BaseModel):
    """Cross-tenant prefix-cache probes: the same long prefix from two synthetic tenants."""

    model_config = _STRICT

    interval_s: float | None = Field(None, gt=0)
    """Seconds between two scheduled prefix-cache probes (None: only ``tiergate probe --prefix-cache``)."""
    upstreams: list[str] = Field(default_factory=list)
    """Upstreams the scheduled probe covers; empty: on-prem upstreams only (vendors that report
    cached tokens must be named)."""
    prefix_tokens: int = Field(1024, ge=64)
    """Length of the shared prefix in prompt tokens (our count); whole KV blocks of it can be cached."""
    rounds: int = Field(3, ge=1, le=50)
    """Rounds, each with a fresh prefix: cold, warm (same tenant) and cross-tenant requests."""
    salting: Literal["tenant", "shared"] = "tenant"
    """``tenant``: each synthetic tenant its own derived cache_salt, as the gateway sends them.
    ``shared``: every tenant the same salt, as with per-tenant salting turned off: the probe must
    then fail, which shows it can see a shared cache."""
    ttft_margin: float = Field(0.5, gt=0, lt=1)
    """The cross-tenant request's time to first token may be at most this fraction faster than a
    cold one (median over rounds) ..."""
    ttft_noise_s: float = Field(0.05, ge=0)
    """... and at least this many seconds faster before it counts (below it is noise)."""
    max_tokens: int = Field(4, ge=1, le=256)
    """``max_tokens`` of each request: only the first token's arrival matters."""
    request_extra: dict[str, Any] = Field(default_factory=dict)
    """Extra JSON fields sent with every request."""


class ProbeSettings(BaseModel):
    """The ``probes:`` block: isolation probes the server runs on a schedule."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    interval_s: float | None = Field(None, gt=0)
    """Seconds between two scheduled probe rounds (None: only ``tiergate probe`` runs them)."""
    upstreams: list[str] = Field(default_factory=list)
    """Upstream names to probe; empty: every configured upstream."""
    requests: int = Field(32, ge=2, le=10_000)
    """Requests per probe, each with its own marker."""
    concurrency: int = Field(8, ge=1, le=1_000)
    """Requests in flight at once: cross-talk needs neighbours."""
    tenants: int = Field(4, ge=1, le=1_000)
    """Synthetic tenants the requests are spread over (each its own cache_salt on on-prem)."""
    max_missing: int = Field(0, ge=0)
    """Answers allowed to miss their own marker (weak models sometimes fail to copy it)."""
    max_errors: int = Field(0, ge=0)
    """Requests allowed to fail outright before the probe counts as failed."""
    max_tokens: int = Field(48, ge=8, le=4096)
    """``max_tokens`` of each probe request."""
    stream: bool = False
    """Ask for streamed (SSE) answers and read them event by event, instead of whole answers."""
    max_tokens_per_run: int = Field(200_000, ge=1)
    """Most tokens (prompt plus answer, as planned) one ladder or prefix-cache probe may spend:
    a plan over it does not start (``tiergate probe --ladder --dry-run`` prints the plan)."""
    ladder: LadderSettings = Field(default_factory=LadderSettings)
    """Long-context ladder probes (``tiergate probe --ladder``)."""
    prefix_cache: PrefixCacheSettings = Field(default_factory=PrefixCacheSettings)
    """Cross-tenant prefix-cache probes (``tiergate probe --prefix-cache``)."""
