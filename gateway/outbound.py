"""Step 3 of the pipeline for one candidate upstream: the exact bytes it would receive.

Pure apart from the token counter: strip (when the tier's rule says so for this kind), write the
stripped strings back, drop what the gateway owns, set the provider model, the per-tenant
``cache_salt`` for on-prem, and ask streams for usage at the end. The token count is taken on what
is sent (placeholders included), since that is what the upstream will report.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import msgspec

from engine import derive_cache_salt
from gateway.routing import Candidate
from gateway.tokens import PromptCount, TokenCounter
from tiers import apply_content
from tiers.types import Content, Decision, Stripped, UpstreamKind

__all__ = ["GATEWAY_OWNED", "Outbound", "build_outbound"]

# Fields only the gateway may set: truncation would let an upstream silently process less than
# was audited, and a client-chosen salt could join another tenant's prefix cache.
GATEWAY_OWNED = ("truncate_prompt_tokens", "truncation_side", "cache_salt")

_encode = msgspec.json.Encoder().encode


@dataclass(frozen=True, slots=True)
class Outbound:
    candidate: Candidate
    body: bytes
    content: Content  # what the upstream receives, after stripping
    mapping: dict[str, str]  # placeholder -> original; memory only, this request only
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
) -> Outbound:
    """Raises ``StripError`` when stripping fails (the caller forwards nothing)."""
    mapping: dict[str, str] = {}
    sent = content
    if candidate.must_strip and decision.findings:
        stripped: Stripped = strip(content, decision)
        sent = stripped.content
        mapping = dict(stripped.mapping)
    out = apply_content(body, sent) if mapping else dict(body)
    for key in GATEWAY_OWNED:
        out.pop(key, None)
    out["model"] = candidate.provider_model
    if candidate.kind == UpstreamKind.ONPREM:
        out["cache_salt"] = derive_cache_salt(salt_key, tenant)
    if stream and endpoint != "embeddings":
        options = out.get("stream_options")
        options = dict(options) if isinstance(options, dict) else {}
        options["include_usage"] = True
        out["stream_options"] = options
    # Only the prompt proper is what the upstream reports as prompt tokens; tool schemas and other
    # fields widen the ceiling (extra bytes) instead of raising the floor.
    count = counter.count([s.text for s in sent.segments if s.prompt], _extra_bytes(out))
    ids = _token_ids(endpoint, out)
    if ids:  # prompts given as token ids count exactly, whatever the tokenizer
        count = replace(count, tokens=count.tokens + ids, lower=count.lower + ids, upper=count.upper + ids)
    return Outbound(candidate, _encode(out), sent, mapping, count)


def _token_ids(endpoint: str, body: dict[str, Any]) -> int:
    """How many token ids (not strings) a completions prompt or embeddings input carries."""
    value = body.get({"completions": "prompt", "embeddings": "input"}.get(endpoint, ""))
    if not isinstance(value, list):
        return 0
    if value and all(isinstance(v, int) for v in value):
        return len(value)
    return sum(len(v) for v in value if isinstance(v, list))
