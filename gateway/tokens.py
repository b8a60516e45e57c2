"""The gateway's own prompt-token count, per upstream, with the band an honest upstream must hit.

With a ``tokenizer.json`` (the upstream's own tokenizer) the count is exact and the band is tight:
the chat template only adds tokens. Without one, a calibrated estimate (UTF-8 bytes divided by the
upstream's ``bytes_per_token``) is used; the band's floor is the estimate divided by the tolerance
and its ceiling the byte count itself — no byte-level or byte-fallback tokenizer emits more tokens
than bytes — plus the template's framing.

The estimate also drives safe-length routing; only an exact count makes that limit exact: a
``tokenizer_file``, or the upstream's own ``/tokenize`` (:func:`counted_by_upstream`), which the
pipeline asks whenever the estimate's band straddles the limit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from gateway.routing import Router
    from tiers.content import TokenDecoder

__all__ = [
    "ESTIMATE_TOLERANCE",
    "EXACT_TOLERANCE",
    "EstimateCounter",
    "PromptCount",
    "TokenCounter",
    "TokenizerCounter",
    "counted_by_upstream",
    "counter_for",
    "token_decoders",
]

# What a chat template may add around each message and the whole prompt (role markers, BOS,
# generation prompt). Generous on purpose: the failure this guards against is orders of magnitude.
PER_SEGMENT_FRAMING = 16
BASE_FRAMING = 64


@dataclass(frozen=True, slots=True)
class PromptCount:
    """Own count of a prompt and the range of ``usage.prompt_tokens`` accepted as honest."""

    tokens: int
    lower: int
    upper: int
    exact: bool

    def settles(self, limit: int) -> bool:
        """Whether this count alone tells if the prompt fits ``limit`` tokens."""
        return self.exact or self.upper <= limit or self.lower > limit


def counted_by_upstream(tokens: int) -> PromptCount:
    """A count the upstream gave itself (its tokenizer and chat template, tools included): its
    ``usage.prompt_tokens`` should equal it, so the band is narrow."""
    return PromptCount(tokens=tokens, lower=math.floor(tokens / 1.25), upper=math.ceil(tokens * 1.25) + BASE_FRAMING,
                       exact=True)  # fmt: skip


class TokenCounter(Protocol):
    exact: bool

    def count(self, texts: list[str], extra_bytes: int = 0) -> PromptCount:
        """Count ``texts`` (the strings that reach the model); ``extra_bytes`` of framing the
        upstream also tokenises (tool schemas, JSON structure) only widen the ceiling."""
        ...


class TokenizerCounter:
    """Exact counts with the upstream's own tokenizer (``tokenizers`` library)."""

    exact = True

    def __init__(self, path: Path, *, tolerance: float = 1.25) -> None:  # EXACT_TOLERANCE
        from tokenizers import Tokenizer

        self.path = path.resolve()
        self._tok = Tokenizer.from_file(str(path))
        self._vocab = self._tok.get_vocab_size(with_added_tokens=True)
        self._tolerance = tolerance

    def decode(self, ids: Sequence[int]) -> str | None:
        """The text of a prompt given as token ids, special tokens included (they reach the
        model too); None when an id is not in the vocabulary (the upstream's reading is unknown)."""
        if any(not 0 <= i < self._vocab for i in ids):
            return None
        return self._tok.decode(list(ids), skip_special_tokens=False)

    def count(self, texts: list[str], extra_bytes: int = 0) -> PromptCount:
        parts = [t for t in texts if t]
        tokens = 0
        if parts:
            encs = self._tok.encode_batch_fast(parts, add_special_tokens=False)
            tokens = sum(len(e.ids) for e in encs)
        framing = BASE_FRAMING + PER_SEGMENT_FRAMING * len(texts)
        # Tokens merging across message boundaries can only shave a few tokens off.
        lower = max(0, math.floor(tokens / self._tolerance) - len(texts))
        upper = math.ceil(tokens * self._tolerance) + framing + extra_bytes
        return PromptCount(tokens=tokens, lower=lower, upper=upper, exact=True)


class EstimateCounter:
    """Calibrated estimate: bytes / bytes_per_token, accepted within a tolerance band."""

    exact = False

    def __init__(self, *, bytes_per_token: float = 4.0, tolerance: float = 3.0) -> None:
        self._bpt = bytes_per_token
        self._tolerance = tolerance

    def count(self, texts: list[str], extra_bytes: int = 0) -> PromptCount:
        size = sum(len(t.encode("utf-8", "surrogatepass")) for t in texts)
        tokens = math.ceil(size / self._bpt)
        lower = math.floor(tokens / self._tolerance)
        upper = size + BASE_FRAMING + PER_SEGMENT_FRAMING * len(texts) + extra_bytes
        return PromptCount(tokens=tokens, lower=lower, upper=upper, exact=False)


def token_decoders(router: Router, counters: Mapping[str, TokenCounter]) -> Callable[[str], TokenDecoder | None]:
    """For a public model name, the decoder of prompts given as token ids: the tokenizer of its
    upstreams when they all have one and it is the same file. Otherwise None, and token ids are
    opaque (``UNREADABLE``): a prompt of ids means text only through the tokenizer that reads it."""
    table: dict[str, TokenDecoder | None] = {}
    for model in router.models():
        found = [counters.get(u.name) for u in router.upstreams_for(model)]
        tokenizers = [c for c in found if isinstance(c, TokenizerCounter)]
        same = len(tokenizers) == len(found) and len({t.path for t in tokenizers}) == 1
        table[model] = tokenizers[0].decode if same else None
    return lambda model: table.get(model)


# The usage band's tolerance when an upstream sets none: an exact count only misses by what the
# chat template adds or merges, an estimate by how far bytes per token varies with the text.
EXACT_TOLERANCE = 1.25
ESTIMATE_TOLERANCE = 3.0


def counter_for(tokenizer_file: Path | None, *, bytes_per_token: float, tolerance: float | None = None) -> TokenCounter:
    """The upstream's counter; ``tolerance`` (its ``usage_tolerance``) widens or narrows the band
    of either kind, None takes the kind's own default."""
    if tokenizer_file is not None:
        return TokenizerCounter(tokenizer_file, tolerance=tolerance or EXACT_TOLERANCE)
    return EstimateCounter(bytes_per_token=bytes_per_token, tolerance=tolerance or ESTIMATE_TOLERANCE)
