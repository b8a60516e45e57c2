"""Step 1: classify a request and fingerprint its prompt, off the event loop when it is large.

Classification of a large prompt can take about a second of CPU; above ``limits.offload_chars``
it runs in a worker thread so other requests keep flowing. It never lowers safety: any error or a
timeout yields a fail-closed Tier 3 decision (``tiers`` already does so for its own errors).
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from audit.fingerprint import fingerprint, normalize_for_fingerprint
from tiers import Classifier, extract_content
from tiers.types import Content, Decision, Stripped, Tier

__all__ = ["Classified", "ClassifyStep"]


@dataclass(frozen=True, slots=True)
class Classified:
    content: Content
    decision: Decision
    fingerprint: str | None
    segment_fingerprints: tuple[str, ...]


class ClassifyStep:
    def __init__(
        self,
        classifier: Classifier,
        *,
        fingerprint_key: bytes,
        offload_chars: int,
        timeout_s: float,
        executor: ThreadPoolExecutor | None = None,
    ) -> None:
        self._clf = classifier
        self._key = fingerprint_key
        self._offload = offload_chars
        self._timeout = timeout_s
        self._executor = executor or ThreadPoolExecutor(max_workers=2, thread_name_prefix="tiergate-classify")

    def _fingerprints(self, content: Content) -> tuple[str | None, tuple[str, ...]]:
        texts = [n for n in (normalize_for_fingerprint(s.text) for s in content.segments) if n]
        # normalize("\n".join(texts)) == " ".join(non-empty normalized texts): whitespace runs
        # collapse across the join and NFKC never composes across a newline. One pass, not two.
        segs = tuple(dict.fromkeys(fingerprint(self._key, n) for n in texts))
        if not texts:
            return None, segs
        return (segs[0] if len(texts) == 1 else fingerprint(self._key, " ".join(texts))), segs

    def _work(self, endpoint: str, body: dict[str, Any], tenant: str, floor: Tier) -> Classified:
        content = extract_content(endpoint, body)  # ContentError -> 400, nothing forwarded
        decision = self._clf.classify(content, tenant=tenant, floor=floor)
        whole, segs = self._fingerprints(content)
        return Classified(content, decision, whole, segs)

    async def run(
        self, endpoint: str, body: dict[str, Any], tenant: str, floor: Tier = Tier.GENERAL
    ) -> Classified:
        """Classify ``body`` for ``tenant``; ``floor`` is the tier the client asked for at least."""
        size = _rough_size(endpoint, body)
        if size <= self._offload:
            return self._work(endpoint, body, tenant, floor)
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self._executor, self._work, endpoint, body, tenant, floor)
        try:
            return await asyncio.wait_for(future, self._timeout)
        except TimeoutError:
            content = extract_content(endpoint, body)
            whole, segs = self._fingerprints(content)
            failed = Decision(Tier.RESTRICTED, reasons=("classification timed out",), failed_closed=True)
            return Classified(content, failed, whole, segs)

    @property
    def classifier(self) -> Classifier:
        """The classifier itself (the dashboard's policy page tries samples on it)."""
        return self._clf

    def rule(self, tenant: str, tier: Tier) -> Any:
        return self._clf.policy_for(tenant).rule(tier)

    def strip(self, content: Content, decision: Decision) -> Stripped:
        return self._clf.strip(content, decision)

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)


def _rough_size(endpoint: str, body: dict[str, Any]) -> int:
    """A cheap upper-bound-ish size of the prompt text, to decide whether to offload."""
    key = {"chat": "messages", "completions": "prompt", "embeddings": "input"}[endpoint]
    value = body.get(key)
    if isinstance(value, str):
        return len(value)
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return total
