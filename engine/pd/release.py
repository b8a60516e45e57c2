"""Deferred release: the blocks of a request finished mid-transfer stay out of the free pool.

vLLM frees a request's blocks as soon as its connector says so; NIXL says so at once for an
aborted request, while the other side's reads or writes of those blocks may still be in flight.
Reused then, a block is written by a stale transfer under a new owner (or read by the peer under
it). Here such blocks are held until the peer acknowledged (``RecordStore.acked``: every rank of
the other side is done with the transfer) or ``timeout_s`` passed; after a timeout they are
zeroed before vLLM may hand them out again, and the outcome is counted
(``tiergate_kv_deferred_release_total{outcome=drained|timeout}``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

__all__ = ["Deferral", "DeferredReleases", "ReleaseOutcome"]

ReleaseOutcome = Literal["drained", "timeout"]


@dataclass(frozen=True, slots=True)
class Deferral:
    req_id: str
    transfer_id: str
    peer_role: str  # whose acknowledgement drains it: "producer" or "consumer"
    zero_block_ids: tuple[int, ...]  # blocks this request alone holds: zeroed on timeout
    deadline: float  # on the releases' clock


class DeferredReleases:
    """Held requests on one worker; ``poll`` once per engine step."""

    def __init__(
        self,
        acked: Callable[[str, str], bool],
        zero: Callable[[tuple[int, ...]], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._acked = acked
        self._zero = zero
        self._clock = clock
        self._held: dict[str, Deferral] = {}

    def now(self) -> float:
        return self._clock()

    def hold(self, deferral: Deferral) -> None:
        self._held.setdefault(deferral.req_id, deferral)

    def holds(self, req_id: str) -> bool:
        return req_id in self._held

    def __len__(self) -> int:
        return len(self._held)

    def poll(self) -> list[tuple[str, ReleaseOutcome]]:
        """Release what drained or timed out; zero the timed-out blocks before saying so."""
        now = self._clock()
        released: list[tuple[str, ReleaseOutcome]] = []
        for req_id, d in list(self._held.items()):
            if self._acked(d.transfer_id, d.peer_role):
                released.append((req_id, "drained"))
            elif now >= d.deadline:
                self._zero(d.zero_block_ids)
                released.append((req_id, "timeout"))
            else:
                continue
            del self._held[req_id]
        return released
