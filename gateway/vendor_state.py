"""Which upstream produced a piece of vendor state (a thinking signature, redacted thinking,
encrypted reasoning), so that it goes back to that upstream only.

Memory only, bounded, keyed by a SHA-256 of the value (never the value): filled as answers are
relayed, read when a request carries such state. A value the book does not know (another replica
answered it, or the gateway restarted) falls back to the provider rule of the pipeline: the
first eligible candidate's provider, never another vendor.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Iterable

__all__ = ["VendorStateBook"]


class VendorStateBook:
    def __init__(self, capacity: int = 100_000) -> None:
        self._capacity = capacity
        self._by_digest: OrderedDict[bytes, str] = OrderedDict()

    @staticmethod
    def _key(value: str) -> bytes:
        return hashlib.sha256(value.encode("utf-8", "surrogatepass")).digest()[:16]

    def remember(self, upstream: str, values: Iterable[str]) -> None:
        for value in values:
            if not value:
                continue
            key = self._key(value)
            self._by_digest[key] = upstream
            self._by_digest.move_to_end(key)
        while len(self._by_digest) > self._capacity:
            self._by_digest.popitem(last=False)

    def producers(self, values: Iterable[str]) -> set[str]:
        """The upstreams known to have produced any of ``values`` (empty: none known)."""
        found = set()
        for value in values:
            name = self._by_digest.get(self._key(value))
            if name is not None:
                found.add(name)
        return found
