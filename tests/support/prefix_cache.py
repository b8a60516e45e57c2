"""A :class:`FakeUpstream` script with a prefix cache, isolated by ``cache_salt`` or not.

Each prompt is cached whole under its salt (``isolate=True``, vLLM's per-salt block hashes) or
under no salt at all (``isolate=False``: the shared cache a missing or ignored salt gives). A hit
reports ``cached_tokens`` (whole 16-token blocks) unless ``report=False``, and answers its first
token after ``warm_s`` instead of ``cold_s``: the timing channel a shared cache opens.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from tests.support.crosstalk import last_user_text
from tests.support.fake_upstream import Received, Scripted

__all__ = ["PrefixCache"]


class PrefixCache:
    def __init__(self, count: Callable[[dict[str, Any]], int], *, isolate: bool = True, report: bool = True,
                 cold_s: float = 0.15, warm_s: float = 0.01) -> None:  # fmt: skip
        self.count = count
        self.isolate = isolate
        self.report = report
        self.cold_s = cold_s
        self.warm_s = warm_s
        self.salts: list[str | None] = []
        self._seen: set[tuple[str | None, str]] = set()
        self._lock = threading.Lock()

    def __call__(self, r: Received) -> Scripted:
        salt = r.body.get("cache_salt")
        key = (salt if self.isolate else None, last_user_text(r))
        with self._lock:
            self.salts.append(salt)
            hit = key in self._seen
            self._seen.add(key)
        cached = (self.count(r.body) // 16) * 16 if hit else 0
        return Scripted(content="word", delay_s=self.warm_s if hit else self.cold_s,
                        cached_tokens=cached if self.report else None)  # fmt: skip
