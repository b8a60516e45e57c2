"""Step 1: read, classify and fingerprint a request body — in worker processes when it is large.

A small body (up to ``limits.offload_bytes``) is handled on the event loop: it costs tens of
microseconds. A larger one goes whole — JSON decoding, extraction, classification, stripping,
fingerprints — to a pool of worker processes, because in a thread it would still hold the
interpreter lock (RE2 and msgspec do not release it) and stall every other tenant's requests.
The workers are forked from the gateway on first use and inherit its built classifier.

Overload is not a content decision: when every worker slot and the queue behind them are taken,
the request is refused with 503 and ``retry-after``, and time spent waiting for a worker is never
counted against the classification deadline (``tiers.deadline_seconds`` runs inside the worker,
from the moment the work starts, on the CPU clock of the thread doing it: waiting for a core or,
on the thread fallback, for the interpreter lock is not classification time either). A request
that overruns that deadline fails closed alone (Tier 3, ``failed_closed``); the others are
untouched. A job that waits longer than ``limits.classify_timeout_s`` per place in the queue is
refused with 503 too: wall time is the overload bound, CPU time the content bound.

One long body uses every idle worker (issue 12): each reads it and finds the identifiers of its
share (``tiers/parts.py``: the findings are those of one whole scan), each on its own CPU clock
under the same deadline; then one classifies with all shares' findings, fingerprints and
strips. A share that overruns or fails fails the whole request closed; a share no worker
answered (a dead worker, a wait past the bound) refuses it with 503, as unsplit. Only idle
workers take shares: when others wait, a body goes to one worker, as before.
"""

from __future__ import annotations

import asyncio
import ctypes
import multiprocessing
import multiprocessing.reduction
import os
import signal
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from typing import Any

from audit.fingerprint import Fingerprints
from gateway.cpus import usable_cpus
from gateway.errors import GatewayError, Unavailable
from gateway.parsing import ParsedBody, parse_body
from tiers import Classifier, extract_content
from tiers.content import TokenDecoder
from tiers.errors import ContentError, TiersError
from tiers.parts import SPLIT_AT, merge
from tiers.types import Content, Decision, Finding, Stripped, Tier

__all__ = ["Classified", "ClassifierBusy", "ClassifyStep"]


class ClassifierBusy(Unavailable):
    default_code = "classifier_busy"
    default_message = "every classification worker is busy; nothing was forwarded, retry shortly"


@dataclass(frozen=True, slots=True)
class Classified:
    parsed: ParsedBody
    content: Content
    decision: Decision
    fingerprint: str | None
    segment_fingerprints: tuple[str, ...]
    # Stripped where it was classified (a worker), so the event loop never strips a large body;
    # None when there is nothing to strip or stripping is left to the caller.
    stripped: Stripped | None = None
    offloaded: bool = False  # classified in a worker process (a large body)


# Segment kinds that are the request's text (fingerprinted); keys and numbers are structure.
_FINGERPRINTED = frozenset({"text", "file", "tokens"})


class ClassifyStep:
    def __init__(
        self,
        classifier: Classifier,
        *,
        fingerprint_key: bytes,
        offload_bytes: int,
        timeout_s: float,
        workers: int = 2,
        queue_per_worker: int = 4,
        decoder_for: Callable[[str], TokenDecoder | None] = lambda model: None,
        max_segments: int = 100_000,
        processes: bool | None = None,
        split_bytes: int = 2 * SPLIT_AT,
        split_at: int = SPLIT_AT,
        cpus: int | None = None,
    ) -> None:
        self._clf = classifier
        self._key = fingerprint_key
        self._offload = offload_bytes
        self._workers = workers
        self._capacity = workers * (queue_per_worker + 1)
        # A job may wait behind a full queue of others, each bounded by the classifier's deadline.
        self._wait_s = timeout_s * (queue_per_worker + 1)
        self._decoder_for = decoder_for
        self._max_segments = max_segments
        # None: forked worker processes where fork exists, else threads (Windows).
        self._processes = "fork" in multiprocessing.get_all_start_methods() if processes is None else processes
        self._pool: Executor | None = None
        self._jobs = 0  # worker jobs submitted and not yet answered
        # A body this long is read in parts by every idle worker at once (processes only: threads
        # share one interpreter lock), its long segments cut at ``split_at`` characters.
        self._split_bytes = split_bytes
        self._split_at = split_at
        # Only where two workers can run at once (``cpus``: None, what this process may use): on
        # one CPU the parts' overlap and hand-off are pure cost (1 MB: 48 -> 40 ms of CPU whole).
        cpus = usable_cpus() if cpus is None else cpus
        self._splits = self._processes and classifier.splittable and workers >= 2 and cpus >= 2
        self.offloaded = 0  # requests classified in a worker (for tests and metrics)
        self.split = 0  # of those, requests read in parts by several workers

    # -- the work, wherever it runs ------------------------------------------------------------

    def _fingerprints(self, content: Content) -> tuple[str | None, tuple[str, ...]]:
        # normalize("\n".join(texts)) == " ".join(non-empty normalized texts): whitespace runs
        # collapse across the join and NFKC never composes across a newline. One pass, not two.
        prints = Fingerprints(self._key)
        for s in content.segments:
            if s.kind in _FINGERPRINTED:
                prints.add(s.text)
        return prints.whole, prints.each

    def read(self, endpoint: str, raw: bytes) -> tuple[ParsedBody, Content]:
        """Parse and extract. Raises ``GatewayError`` for a body that cannot be parsed and
        ``TiersError`` for one that cannot be read."""
        parsed = parse_body(endpoint, raw)
        try:
            content = extract_content(
                endpoint, parsed.body, decode_tokens=self._decoder_for(parsed.model), max_segments=self._max_segments
            )
        except TiersError:
            raise
        except Exception as exc:  # noqa: BLE001 -- anything else while reading: unread, so refused (400) and recorded
            raise ContentError(f"reading the body failed ({type(exc).__name__})") from None
        return parsed, content

    def work(
        self,
        endpoint: str,
        raw: bytes,
        tenant: str,
        floor: Tier,
        *,
        strip: bool = False,
        found: Sequence[Finding] | str | None = None,
    ) -> Classified:
        """Parse, extract, classify, fingerprint (and strip, in a worker); ``found``: the
        findings made already, in parts (see ``Classifier.classify``). Raises as ``read``."""
        parsed, content = self.read(endpoint, raw)
        decision = self._clf.classify(content, tenant=tenant, floor=floor, found=found)
        whole, segs = self._fingerprints(content)
        stripped = None
        if strip and decision.findings and not decision.failed_closed:
            try:
                stripped = self._clf.strip(content, decision)
            except TiersError:  # left to the caller, which needs it only for an upstream that strips
                stripped = None
        return Classified(parsed, content, decision, whole, segs, stripped)

    # -- where it runs -------------------------------------------------------------------------

    async def run(self, endpoint: str, raw: bytes, tenant: str, floor: Tier = Tier.GENERAL) -> Classified:
        """Classify the body ``raw`` for ``tenant``; ``floor`` is the tier the client asked for."""
        if len(raw) <= self._offload:
            return self.work(endpoint, raw, tenant, floor)
        if self._jobs >= self._capacity:
            raise ClassifierBusy(headers={"retry-after": "1"})
        # One long prompt on every idle worker: only into workers nobody else waits for, so that
        # under load (every core busy anyway) a request costs no extra reading and hand-off.
        idle = self._workers - self._jobs
        # At least one: a body behind a busy pool holds its place (at 0 or below it was not counted,
        # and took away places of others, so the queue bound admitted without limit).
        parts = max(1, min(self._workers, idle)) if len(raw) >= self._split_bytes and self._splits else 1
        result: Classified | BaseException
        self._jobs += parts  # held until the answer: the last step of a split one included
        try:
            if parts >= 2:
                result = await self._run_split(endpoint, raw, tenant, floor, parts)
            else:
                result = await self._submit(_in_worker, endpoint, raw, tenant, int(floor))
        except TimeoutError:
            raise ClassifierBusy("classification did not finish in time; nothing was forwarded",
                                 headers={"retry-after": "5"}) from None  # fmt: skip
        except BrokenProcessPool:  # a worker died: _submit dropped its pool
            raise ClassifierBusy(headers={"retry-after": "1"}) from None
        finally:
            self._jobs -= parts
        self.offloaded += 1
        if isinstance(result, BaseException):
            raise result
        return replace(result, offloaded=True)

    async def _run_split(self, endpoint: str, raw: bytes, tenant: str, floor: Tier, parts: int) -> Any:
        """Each of ``parts`` workers finds the identifiers of its share of the body
        (tiers/parts.py), on its own CPU clock under the classifier's deadline; then one of them
        classifies with all of them, fingerprints and strips. Any share that failed fails the
        request closed (Tier 3); one a worker could not answer is overload (503), as unsplit."""
        args = (endpoint, raw, tenant, int(floor))
        shares = await asyncio.gather(
            *(self._submit(_in_worker_part, *args, k, parts, self._split_at) for k in range(parts))
        )
        refused = next((r for r in shares if isinstance(r, BaseException)), None)
        if refused is not None:  # the body cannot be read: the same refusal from every share
            return refused
        failed = next((r for r in shares if isinstance(r, str)), None)
        self.split += 1
        return await self._submit(_in_worker_finish, *args, failed if failed is not None else shares)

    async def _submit(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` in the pool, waiting at most ``limits.classify_timeout_s`` per place in
        the queue."""
        loop = asyncio.get_running_loop()
        pool = self._executor()
        try:
            return await asyncio.wait_for(loop.run_in_executor(pool, fn, *args), self._wait_s)
        except BrokenProcessPool:  # a worker died (killed, out of memory): a fresh pool next time
            if self._pool is pool:  # not one that replaced it meanwhile (renew_workers)
                self._pool = None
            raise

    def _executor(self) -> Executor:
        if self._pool is None and not self._processes:
            # Windows: no fork, and a spawned worker would rebuild the classifier (seconds). A
            # thread keeps the loop responsive between interpreter switches, if not within them.
            _worker_init_thread(self)
            self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="tiergate-classify")
        if self._pool is None:
            # fork: the workers inherit the built classifier (building it again costs seconds).
            self._pool = ProcessPoolExecutor(
                max_workers=self._workers,
                mp_context=multiprocessing.get_context("fork"),
                initializer=_worker_init,
                initargs=(self, os.getpid()),
            )
        return self._pool

    @property
    def classifier(self) -> Classifier:
        """The classifier itself (the dashboard's policy page tries samples on it)."""
        return self._clf

    def rule(self, tenant: str, tier: Tier) -> Any:
        return self._clf.policy_for(tenant).rule(tier)

    def strip(self, content: Content, decision: Decision) -> Stripped:
        return self._clf.strip(content, decision)

    def renew_workers(self) -> None:
        """Fork the workers again at their next use: the classifier here changed (its prefilter was
        attached) and forked workers keep the copy they were forked with. Jobs under way in the
        old workers finish there. Call it on the event loop's thread."""
        if self._pool is not None and self._processes:
            self._pool.shutdown(wait=False)
            self._pool = None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None


# -- inside a worker process ---------------------------------------------------------------------

_STEP: ClassifyStep | None = None
_PR_SET_PDEATHSIG = 1


def _finding_args(f: Finding) -> tuple[type[Finding], tuple[str, int, int, int, str, float]]:
    return Finding, (f.entity_type, f.segment, f.start, f.end, f.recognizer, f.score)


def _worker_init(step: ClassifyStep, parent: int) -> None:
    global _STEP
    _STEP = step
    # A finding goes back to the gateway as its six fields, rebuilt there by one constructor call:
    # the default pickling of a slotted frozen dataclass runs Python-level state code on both
    # sides, ≈ 6 µs a finding (a 3 MB prompt full of e-mail addresses: 12,000 findings, 75 ms of
    # both processes' CPU, against 20 ms this way). Only the pool's own pickler, in the workers.
    multiprocessing.reduction.ForkingPickler.register(Finding, _finding_args)
    # The worker inherited the server's signal handling; it is the pool's to stop, and it must
    # not outlive a gateway that was killed (it holds copies of the server's sockets).
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (AttributeError, OSError):  # not Linux: the pool's own shutdown still stops it
        pass
    if os.getppid() != parent:  # the gateway died before the line above took effect
        os._exit(1)


def _worker_init_thread(step: ClassifyStep) -> None:
    global _STEP
    _STEP = step


def _in_worker(endpoint: str, raw: bytes, tenant: str, floor: int) -> Classified | BaseException:
    assert _STEP is not None
    try:
        return _STEP.work(endpoint, raw, tenant, Tier(floor), strip=True)
    except (GatewayError, TiersError) as exc:  # the caller raises it: a refusal, not a crash
        return exc
    except Exception as exc:  # noqa: BLE001 -- never a 500 without a row: unread is refused
        return ContentError(f"reading the body failed ({type(exc).__name__})")


_Row = tuple[str, int, int, int, str, float]


def _in_worker_part(
    endpoint: str, raw: bytes, tenant: str, floor: int, part: int, parts: int, split_at: int
) -> list[_Row] | str | BaseException:
    """Share ``part`` of the body's findings, as plain rows (cheap to pickle), or why it failed."""
    assert _STEP is not None
    try:
        _, content = _STEP.read(endpoint, raw)
    except (GatewayError, TiersError) as exc:
        return exc
    except Exception as exc:  # noqa: BLE001 -- never a 500 without a row: unread is refused
        return ContentError(f"reading the body failed ({type(exc).__name__})")
    found = _STEP.classifier.part_findings(content, part, parts, split_at=split_at)
    if isinstance(found, str):
        return found
    return [(f.entity_type, f.segment, f.start, f.end, f.recognizer, f.score) for f in found]


def _in_worker_finish(
    endpoint: str, raw: bytes, tenant: str, floor: int, shares: list[list[_Row]] | str
) -> Classified | BaseException:
    """The request classified with the findings of its shares (or failed closed, with the reason
    one of them failed), fingerprinted and stripped."""
    assert _STEP is not None
    found = shares if isinstance(shares, str) else merge([[Finding(*row) for row in share] for share in shares])
    try:
        return _STEP.work(endpoint, raw, tenant, Tier(floor), strip=True, found=found)
    except (GatewayError, TiersError) as exc:
        return exc
    except Exception as exc:  # noqa: BLE001 -- never a 500 without a row: unread is refused
        return ContentError(f"reading the body failed ({type(exc).__name__})")
