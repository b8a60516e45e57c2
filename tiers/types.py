"""Value types shared by every stage of the pipeline.

These are the only names other packages (``audit``, ``engine``, ``gateway``) may import from
``tiers`` besides the public API in ``tiers/__init__.py``. They carry no behaviour that needs I/O.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from enum import IntEnum, StrEnum


# The entity of everything a request carries that Tiergate cannot read (see ``Opaque``).
UNREADABLE = "UNREADABLE"


class Tier(IntEnum):
    """How sensitive a prompt is. Higher is more sensitive; a tier may be raised, never lowered."""

    GENERAL = 1  # any endpoint, unchanged
    INTERNAL = 2  # shared endpoints only with identifiers stripped
    RESTRICTED = 3  # dedicated / on-prem only, or refused


class UpstreamKind(StrEnum):
    """Kinds of upstream, from least to most trusted."""

    SHARED = "shared"
    DEDICATED = "dedicated"
    ONPREM = "onprem"


@dataclass(frozen=True, slots=True)
class Segment:
    """One decoded string of a request, with the JSON path it came from.

    ``path`` addresses the string inside the request body, e.g. ``("messages", 0, "content")`` or
    ``("messages", 2, "tool_calls", 0, "function", "arguments")``.
    """

    # Neither the path nor the text is ever in a repr: a repr lands in logs and tracebacks (asyncio
    # writes a finished task's result into its own repr), and a whole prompt's repr cost 0.1 s per
    # 3 MB. A path is text too: every path below an object's key holds that key.
    path: tuple[str | int, ...] = field(repr=False)
    text: str = field(repr=False)
    # True for the prompt proper (messages, prompt, input); False for other strings the request
    # carries to the upstream (tool schemas, ``user``, metadata, unknown fields): those are
    # classified and stripped all the same, but are not the text a model counts as its prompt.
    prompt: bool = True
    # What the text is in the body: "text" (a string value), "key" (an object key), "number" (a
    # long number, as digits), "tokens" (token ids, decoded), "file" (an inline text file,
    # decoded), "header" (an inline file's data-URI media type and parameters, when they are
    # more than the payload's decoding needs; read, never rewritten), "pdf" (text read out of an
    # inline PDF; cannot be written back) or "state" (vendor state: thinking, signatures,
    # encrypted reasoning; read, but never rewritten).
    kind: str = "text"
    # For files: the data-URI header the bytes came with ("" for bare base64), to re-encode them.
    # Not in a repr: its parameters (a file's name) are the client's text.
    via: str = field(default="", repr=False)


@dataclass(frozen=True, slots=True)
class Opaque:
    """A part of a request that reaches the upstream but that Tiergate cannot read (an image,
    audio, a binary file, token ids without the upstream's tokenizer). The policy treats each one
    as the ``UNREADABLE`` entity."""

    path: tuple[str | int, ...] = field(repr=False)  # may hold object keys: never in a repr
    what: str  # e.g. "audio", "image content", "token ids without a tokenizer"


@dataclass(frozen=True, slots=True)
class Content:
    """Everything of a request that reaches the upstream: what can be read, in request order, and
    what cannot."""

    segments: tuple[Segment, ...]
    opaque: tuple[Opaque, ...] = ()

    @property
    def chars(self) -> int:
        return sum(len(s.text) for s in self.segments)


@dataclass(frozen=True, slots=True)
class Finding:
    """One detected identifier. Offsets index the *original* (un-normalised) segment text."""

    entity_type: str
    segment: int
    start: int
    end: int
    recognizer: str
    score: float = 1.0


@dataclass(frozen=True, slots=True)
class Decision:
    """The outcome of classification: the tier, what was found, and why."""

    tier: Tier
    findings: tuple[Finding, ...] = ()
    reasons: tuple[str, ...] = ()
    failed_closed: bool = False
    unreadable: int = 0  # opaque parts of the request (counted as the UNREADABLE entity)

    def entity_counts(self) -> dict[str, int]:
        """Entity type -> number of findings; what the audit log stores (never values)."""
        counts = dict(Counter(f.entity_type for f in self.findings))
        if self.unreadable:
            counts[UNREADABLE] = self.unreadable
        return counts


@dataclass(frozen=True, slots=True)
class Stripped:
    """A request's content with identifiers replaced by placeholders such as ``<EMAIL_1>``.

    ``mapping`` (placeholder -> original value) lives only in memory for the life of the request.
    """

    content: Content
    mapping: dict[str, str] = field(default_factory=dict, repr=False)  # the values: never in a repr

    @property
    def replaced(self) -> int:
        return len(self.mapping)
