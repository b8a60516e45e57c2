"""Scripts for :class:`FakeUpstream` that behave like a correct or a leaking engine.

``echo`` answers each request with its own last user message (a correct model that repeats what it
is asked to). ``CrossTalk`` is the planted fault: every ``every``-th answer carries an *earlier*
request's text instead, as decode over another request's stale KV pages would; its memory spans
probe runs, so it can also leak a previous run's content.
"""

from __future__ import annotations

import threading
from typing import Any

from tests.support.fake_upstream import Received, Scripted

__all__ = ["CrossTalk", "echo", "last_user_text"]


def last_user_text(r: Received) -> str:
    messages: list[dict[str, Any]] = r.body.get("messages") or []
    for msg in reversed(messages):
        if msg.get("role") == "user" and isinstance(msg.get("content"), str):
            return str(msg["content"])
    return ""


def echo(r: Received) -> Scripted:
    return Scripted(content=last_user_text(r))


class CrossTalk:
    def __init__(self, every: int = 4) -> None:
        self.every = every
        self.leaked = 0
        self._lock = threading.Lock()
        self._seen: list[str] = []

    def __call__(self, r: Received) -> Scripted:
        own = last_user_text(r)
        with self._lock:
            self._seen.append(own)
            n = len(self._seen)
            if n % self.every == 0 and n > 1:
                self.leaked += 1
                return Scripted(content=self._seen[n - 2])
        return Scripted(content=own)
