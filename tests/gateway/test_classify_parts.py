"""One long body read by several classification workers at once (issue 12, tiers/parts.py):
what comes back equals what one process computes from the whole body, and a share that fails
fails the whole request closed.

Real forked worker processes of ``ClassifyStep`` throughout; the oracle is the same classifier
run on the whole body in this process (``ClassifyStep.work``).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from presidio_analyzer import Pattern, PatternRecognizer

from gateway.classify import ClassifierBusy, ClassifyStep
from tiers import Classifier, TiersConfig
from tiers.types import Tier

KEY = b"k" * 32
_LINES = [
    "the plan needs review before release",
    "région naïve\u200b text with\ttabs",
    "id,company,date of birth",
    "{n},Keller Brothers,14.03.1962",
    "contact: jane.doe{n}@example-mail.com",
    "mail to: ops{n}%40acme.example.org",
    "DB_PASSWORD=Zx9!mQ2#vL{n}p",
    "call +49 30 {n:07d}",
    "host db-{n}.corp.example.com answered",
    "",
]


def _body(*texts: str) -> bytes:
    messages = [{"role": "system", "content": "You help the operations team."}]
    messages += [{"role": "user", "content": t} for t in texts]
    return json.dumps({"model": "chat", "messages": messages}).encode()


@st.composite
def _long_text(draw: Any) -> str:
    """40-120 KB: well past the windows' reach (16 KB each side), so cuts really fall inside."""
    pattern = draw(st.lists(st.sampled_from(_LINES), min_size=1, max_size=30))
    size = draw(st.integers(40_000, 120_000))
    out: list[str] = []
    total = n = 0
    while total < size:
        line = pattern[n % len(pattern)].format(n=n)
        out.append(line)
        total += len(line) + 1
        n += 1
    return "\n".join(out)


@pytest.fixture(scope="module")
def steps(classifier: Any) -> Iterator[tuple[ClassifyStep, ClassifyStep]]:
    """The whole body in this process, and the same classifier's forked workers reading any body
    over 8 KB in parts, segments cut every 16 KB or so."""
    here = ClassifyStep(classifier, fingerprint_key=KEY, offload_bytes=1 << 30, timeout_s=60, processes=False)
    there = ClassifyStep(
        classifier, fingerprint_key=KEY, offload_bytes=0, timeout_s=60, workers=2, processes=True,
        split_bytes=8192, split_at=16_384, cpus=2,
    )  # fmt: skip
    yield here, there
    there.close()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(_long_text(), min_size=1, max_size=2))
def test_parts_in_workers_answer_what_one_process_computes(
    steps: tuple[ClassifyStep, ClassifyStep], texts: list[str]
) -> None:
    here, there = steps
    raw = _body(*texts)
    before = there.split
    local = here.work("chat", raw, "acme", Tier.GENERAL, strip=True)
    remote = asyncio.run(there.run("chat", raw, "acme", Tier.GENERAL))
    assert there.split == before + 1  # read in parts, not whole by one worker
    assert remote.decision == local.decision  # every finding, field by field, in order, and the tier
    assert remote.content == local.content and remote.parsed == local.parsed
    assert remote.stripped == local.stripped
    assert (remote.fingerprint, remote.segment_fingerprints) == (local.fingerprint, local.segment_fingerprints)


def test_one_cpu_reads_a_body_whole_in_one_worker(classifier: Any) -> None:
    """Where the process can use one CPU only, a long body goes to one worker whole (parts would
    only add their overlap and hand-off), with the answer the parts give."""
    step = ClassifyStep(classifier, fingerprint_key=KEY, offload_bytes=0, timeout_s=60, workers=2,
                        processes=True, split_bytes=8192, split_at=16_384, cpus=1)  # fmt: skip
    raw = _body("\n".join(f"contact: jane.doe{n}@example-mail.com" for n in range(3000)))
    try:
        whole = asyncio.run(step.run("chat", raw, "acme"))
    finally:
        step.close()
    assert (step.offloaded, step.split) == (1, 0)
    assert len(whole.decision.findings) == 3000


def test_a_busy_pool_reads_a_body_whole(steps: tuple[ClassifyStep, ClassifyStep]) -> None:
    """Shares go only to idle workers: two long bodies at once are one worker's each."""
    _, there = steps
    raw = _body("\n".join(f"contact: jane.doe{n}@example-mail.com" for n in range(3000)))

    async def both() -> list[Any]:
        return list(await asyncio.gather(there.run("chat", raw, "acme"), there.run("chat", raw, "acme")))

    before = there.split
    first, second = asyncio.run(both())
    assert first.decision == second.decision and len(first.decision.findings) == 3000
    assert there.split == before + 1  # the first took both idle workers; the second came after


def test_bodies_behind_a_busy_pool_hold_their_places(classifier: Any) -> None:
    """A long body that finds no idle worker still takes a place in the queue: the queue's bound
    (workers x (queue_per_worker + 1)) refuses the rest with 503, whether or not bodies are split."""
    step = ClassifyStep(classifier, fingerprint_key=KEY, offload_bytes=0, timeout_s=60, workers=2,
                        queue_per_worker=1, processes=True, split_bytes=8192, split_at=16_384, cpus=2)  # fmt: skip
    raw = _body("\n".join(f"contact: jane.doe{n}@example-mail.com" for n in range(600)))

    async def many() -> list[Any]:
        return list(await asyncio.gather(*(step.run("chat", raw, "acme") for _ in range(7)), return_exceptions=True))

    try:
        results = asyncio.run(many())
    finally:
        step.close()
    busy = [r for r in results if isinstance(r, ClassifierBusy)]
    served = [r for r in results if not isinstance(r, BaseException)]
    assert len(busy) + len(served) == 7
    # the first takes both workers (two places), two more wait one place each: four places in all
    assert len(served) == 3 and all(len(r.decision.findings) == 600 for r in served)


# -- a share that fails --------------------------------------------------------------------------

_SKEW = [0.0]  # seconds added to the classifier's clock (per process: the workers' own)


class _Faulty(PatternRecognizer):  # type: ignore[misc]  # presidio publishes no types
    """``BOOM-n`` raises while it is judged; ``SLOW-n`` takes a minute of the clock."""

    def __init__(self) -> None:
        super().__init__(supported_entity="FAULT", patterns=[Pattern("fault", r"\b(?:BOOM|SLOW)-\d+\b", 0.9)])

    def validate_result(self, pattern_text: str) -> bool:
        if pattern_text.startswith("BOOM"):
            raise RuntimeError("the recognizer broke on " + pattern_text)
        _SKEW[0] += 60.0
        return True


@pytest.fixture(scope="module")
def faulty() -> Iterator[ClassifyStep]:
    clf = Classifier(
        TiersConfig(deadline_seconds=10.0),
        clock=lambda: time.thread_time() + _SKEW[0],
        extra_recognizers=[_Faulty()],
    )
    step = ClassifyStep(clf, fingerprint_key=KEY, offload_bytes=0, timeout_s=60, workers=2, processes=True,
                        split_bytes=8192, split_at=16_384, cpus=2)  # fmt: skip
    yield step
    step.close()


def _with_marker_at_the_end(marker: str) -> bytes:
    """A 200 KB message whose last lines hold ``marker``: in the last share only (the first
    share's window ends 16 KB past the middle)."""
    lines = [f"contact: jane.doe{n}@example-mail.com" for n in range(6000)]
    lines[-3] = f"ticket {marker} closed"
    return _body("\n".join(lines))


@pytest.mark.parametrize(("marker", "reason"), [("BOOM-7", "RuntimeError during analysis"),
                                                ("SLOW-7", "deadline of 10.0 s exceeded")])  # fmt: skip
def test_one_share_failing_fails_the_request_closed(faulty: ClassifyStep, marker: str, reason: str) -> None:
    before = faulty.split
    result = asyncio.run(faulty.run("chat", _with_marker_at_the_end(marker), "acme"))
    assert faulty.split == before + 1
    decision = result.decision
    assert decision.failed_closed and decision.tier == Tier.RESTRICTED
    assert decision.reasons == (f"failed closed: {reason}",)  # the failure named, never the text
    assert decision.findings == () and result.stripped is None
    assert result.fingerprint is not None  # still recorded as the request it was
    # the same body without the marker: classified, every address found, nothing failed
    clean = asyncio.run(faulty.run("chat", _with_marker_at_the_end("fine"), "acme"))
    assert not clean.decision.failed_closed and len(clean.decision.findings) >= 5999
