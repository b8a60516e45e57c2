"""Tiergate's classifier: tiers every prompt, strips identifiers, restores them in answers.

Pure: no network, database, Redis, environment or clock reads (the clock is injected).

``Classifier`` (and with it presidio, ~10 s to import) loads on first use, so that code which only
needs the config model, the policy or the value types — the CLI, settings validation — starts fast.
"""

from typing import TYPE_CHECKING, Any

from .config import DomainPattern, TiersConfig
from .content import apply_content, extract_content
from .errors import ContentError, PolicyError, RecognizerError, StripError, TiersError
from .normalize import OffsetMap, normalize_text, normalize_with_map
from .policy import Policy, TierRule, load_policy
from .restore import Restorer, StreamRestorer
from .types import Content, Decision, Finding, Segment, Stripped, Tier, UpstreamKind

if TYPE_CHECKING:
    from .classifier import Classifier, DeadlineExceeded

_LAZY = {"Classifier", "DeadlineExceeded"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from . import classifier

        return getattr(classifier, name)
    raise AttributeError(f"module 'tiers' has no attribute {name!r}")


__all__ = [
    "Classifier",
    "Content",
    "ContentError",
    "DeadlineExceeded",
    "Decision",
    "DomainPattern",
    "Finding",
    "OffsetMap",
    "PolicyError",
    "Policy",
    "RecognizerError",
    "Restorer",
    "Segment",
    "StreamRestorer",
    "StripError",
    "Stripped",
    "Tier",
    "TierRule",
    "TiersConfig",
    "TiersError",
    "UpstreamKind",
    "apply_content",
    "extract_content",
    "load_policy",
    "normalize_text",
    "normalize_with_map",
]
