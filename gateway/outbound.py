"""Step 3 of the pipeline for one candidate upstream: the exact bytes it would receive.

Pure apart from the token counter: strip (when the tier's rule says so for this kind), write the
stripped strings back, drop what the gateway owns, set the provider model, the per-tenant
``cache_salt`` for on-prem, and what the request's protocol owns (usage at the end of a stream,
``store``). The token count is taken on what
is sent (placeholders included), since that is what the upstream will report.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import msgspec

from engine import TRUNCATION_KEYS, derive_cache_salt
from gateway.protocols import PROTOCOLS, Protocol
from gateway.routing import Candidate
from gateway.tokens import PromptCount, TokenCounter
from tiers import apply_content
from tiers.types import Content, Decision, Stripped, UpstreamKind

__all__ = ["GATEWAY_OWNED", "Outbound", "build_outbound"]

# Fields only the gateway may set: truncation (the engine's one list of those fields) would let an
# upstream silently process less than was audited, and a client-chosen salt could join another
# tenant's prefix cache.
GATEWAY_OWNED = (*TRUNCATION_KEYS, "cache_salt")

_encode = msgspec.json.Encoder().encode


@dataclass(frozen=True, slots=True)
class Outbound:
    candidate: Candidate
    # The prompt as sent and the values stripped from it: never in a repr (logs, tracebacks)
    body: bytes = field(repr=False)
    content: Content  # what the upstream receives, after stripping
    mapping: dict[str, str] = field(repr=False)  # placeholder -> original; memory only, this request only
    count: PromptCount

    @property
    def stripped(self) -> bool:
        return bool(self.mapping)


def _extra_bytes(body: dict[str, Any]) -> int:
    """Framing the upstream tokenises beyond our segments (tool schemas): widens the ceiling."""
    extra = 0
    for key in ("tools", "functions", "response_format"):
        if key in body:
            extra += len(_encode(body[key]))
    return extra


def build_outbound(
    candidate: Candidate,
    *,
    endpoint: str,
    body: dict[str, Any],
    content: Content,
    decision: Decision,
    strip: Any,
    counter: TokenCounter,
    tenant: str,
    salt_key: bytes,
    stream: bool,
    stripped: Stripped | None = None,
) -> Outbound:
    """Raises ``TiersError`` when stripping fails (the caller forwards nothing). ``stripped`` is
    the content already stripped where it was classified, if it was."""
    mapping: dict[str, str] = {}
    sent = content
    if candidate.must_strip and decision.findings:
        done: Stripped = stripped if stripped is not None else strip(content, decision)
        sent = done.content
        mapping = dict(done.mapping)
    out = apply_content(body, sent, content) if mapping else dict(body)
    for key in GATEWAY_OWNED:
        out.pop(key, None)
    out["model"] = candidate.provider_model
    if candidate.kind == UpstreamKind.ONPREM:
        out["cache_salt"] = derive_cache_salt(salt_key, tenant)
    protocol = PROTOCOLS[endpoint]
    protocol.prepare(out, stream=stream, candidate=candidate, tier=decision.tier)
    return Outbound(candidate, _encode(out), sent, mapping, _count(counter, protocol, sent, out))


def _count(counter: TokenCounter, protocol: Protocol, sent: Content, out: dict[str, Any]) -> PromptCount:
    """The prompt tokens of what is sent. Only the prompt proper is what an upstream reports as
    prompt tokens, so only it sets the floor; everything else the upstream reads (tool schemas,
    metadata, files, keys) counts towards the length and widens the ceiling — a long file in an
    unknown field must not slip past the safe-length limit."""
    prompt: list[str] = []
    other: list[str] = []
    for seg in sent.segments:
        if seg.kind == "tokens" and isinstance(_value_at(out, seg.path), list):
            continue  # still sent as ids: counted as such below
        (prompt if seg.prompt else other).append(seg.text)
    ids = protocol.token_ids(out)  # counted exactly, whatever the tokenizer
    count = counter.count(prompt, _extra_bytes(out))
    if other:
        rest = counter.count(["\n".join(other)])
        count = replace(count, tokens=count.tokens + rest.tokens, upper=count.upper + rest.upper)
    if ids:
        count = replace(count, tokens=count.tokens + ids, lower=count.lower + ids, upper=count.upper + ids)
    return count


def _value_at(body: Any, path: tuple[str | int, ...]) -> Any:
    for key in path:
        body = body[key]
    return body
