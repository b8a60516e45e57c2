"""A fake vendor that reproduces the 2026 incident's shape, for :class:`FakeUpstream` scripts.

Up to ``limit`` prompt tokens it is a correct model: it answers with the first and last probe
markers of its own prompt (what the ladder asks for). Beyond ``limit`` it does what the leaking
engine did: the prompt is replaced by a one-token placeholder and the answer is fluent text taken
from an *earlier* request, with HTTP 200 and a usage that says ``prompt_tokens: 1``
(``usage="placeholder"``) or the prompt's real length (``usage="plausible"``, a vendor that
reports what it was sent rather than what it computed over).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Literal

from gateway.probe import MARKER_RE
from tests.support.crosstalk import last_user_text
from tests.support.fake_upstream import Received, Scripted

__all__ = ["Incident", "echo_markers"]


def echo_markers(r: Received) -> Scripted:
    """A correct, instruction-following model: the first and last marker of its prompt."""
    found = MARKER_RE.findall(last_user_text(r))
    return Scripted(content=f"{found[0]} {found[-1]}" if found else "I see no code.")


class Incident:
    def __init__(self, limit: int, count: Callable[[dict[str, Any]], int], *,
                 usage: Literal["placeholder", "plausible"] = "placeholder") -> None:  # fmt: skip
        self.limit = limit
        self.count = count  # the fake's own prompt-token count of a request body
        self.usage = usage
        self.leaked = 0
        self._lock = threading.Lock()
        self._seen: list[str] = []

    def __call__(self, r: Received) -> Scripted:
        own = last_user_text(r)
        tokens = self.count(r.body)
        with self._lock:
            earlier = self._seen[-1] if self._seen else ""
            self._seen.append(own)
            if tokens <= self.limit:
                return echo_markers(r)
            self.leaked += 1
        # Fluent decoding over someone else's KV: a plausible sentence around their text.
        return Scripted(content="Certainly. As discussed: " + earlier[:300],
                        prompt_tokens=1 if self.usage == "placeholder" else tokens)  # fmt: skip
