"""The probe-lowered safe lengths as each replica routes by them.

The state is ``audit.length_caps`` (shared by every replica). It reaches each replica by the
quarantine's own mechanism (``gateway.quarantine.QuarantineMonitor``: a poll every
``quarantine.poll_s``, woken at once by the quarantine channel on Redis), with its own board. The
bound on how long a replica admits prompts above a lowered length is therefore the same as for a
quarantine: ``poll_s`` plus one read.

Failure, as for quarantines: until the first read succeeds the lowered lengths are unknown and
:meth:`SafeLengthBoard.safe_tokens` raises 503 ``safe_length_state_unknown`` (nothing forwarded);
a later failed read keeps the last state read.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Gauge

from audit.length_caps import LengthCap
from gateway.errors import Unavailable

if TYPE_CHECKING:
    from gateway.quarantine import QuarantineMonitor, QuarantineSettings
    from gateway.settings import UpstreamSettings

__all__ = ["SafeLengthBoard", "SafeLengthUnknown", "safe_length_monitor"]


class SafeLengthUnknown(Unavailable):
    default_code = "safe_length_state_unknown"
    default_message = "the upstreams' safe prompt lengths have not been read yet; nothing was forwarded"


class SafeLengthBoard:
    """The lowered safe lengths this replica obeys; replaced whole by each successful read."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._caps: dict[str, LengthCap] = {}
        self._entries: tuple[LengthCap, ...] = ()
        self._read_at: float | None = None
        self._clock = clock

    @property
    def known(self) -> bool:
        return self._read_at is not None

    @property
    def entries(self) -> tuple[LengthCap, ...]:
        return self._entries

    def age_s(self) -> float | None:
        return None if self._read_at is None else self._clock() - self._read_at

    def replace(self, entries: tuple[LengthCap, ...]) -> None:
        lowest: dict[str, LengthCap] = {}
        for cap in entries:
            if cap.upstream not in lowest or cap.max_prompt_tokens < lowest[cap.upstream].max_prompt_tokens:
                lowest[cap.upstream] = cap
        self._caps, self._entries, self._read_at = lowest, entries, self._clock()

    def lowered(self) -> dict[str, LengthCap]:
        """Per upstream, the lowest lowering in force."""
        return dict(self._caps)

    def cap(self, upstream: str) -> LengthCap | None:
        return self._caps.get(upstream)

    def safe_tokens(self, up: UpstreamSettings) -> int:
        """``up``'s effective safe length: its configured one, or the lowered one below it."""
        if not self.known:
            raise SafeLengthUnknown()
        cap = self._caps.get(up.name)
        return up.safe_tokens if cap is None else min(up.safe_tokens, cap.max_prompt_tokens)


def safe_length_monitor(store: Any, board: SafeLengthBoard, settings: QuarantineSettings, *,
                        registry: CollectorRegistry, redis_url: str | None) -> QuarantineMonitor:  # fmt: skip
    """The quarantine's poller, reading the lowered lengths into ``board``.

    Its own series (read failures, state age) are kept off ``registry``, where the quarantine's
    share their names; ``tiergate_safe_length_state_age_seconds`` and
    ``tiergate_safe_length_lowered`` are the ones to alert on."""
    from gateway.quarantine import QuarantineMonitor

    age = Gauge("tiergate_safe_length_state_age_seconds",
                "Seconds since the lowered safe lengths were last read (-1: never)", registry=registry)  # fmt: skip
    age.set_function(lambda: -1.0 if (a := board.age_s()) is None else a)
    lowered = Gauge("tiergate_safe_length_lowered", "Upstreams whose safe length a failed ladder lowered",
                    registry=registry)  # fmt: skip
    lowered.set_function(lambda: float(len(board.lowered())))

    return QuarantineMonitor(
        store,
        board,  # type: ignore[arg-type]  # a SafeLengthBoard has the methods the monitor calls
        settings,
        registry=CollectorRegistry(),
        redis_url=redis_url,
        loader=store.active_length_caps,
    )
