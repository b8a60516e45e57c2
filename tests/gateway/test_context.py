"""What ending a request writes (``RequestContext.ending``), over generated attempt histories: each
committed attempt gets exactly one outcome, an unconfirmed write-ahead its ``not_forwarded``, a
refusal row only a request that committed nothing, and a second ending adds nothing."""

from __future__ import annotations

import itertools
import re
import time
from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from gateway.context import Ending, RequestContext, new_request_id

# Each attempt: its row committed and the attempt ended there (fallback to the next), its row
# committed and the request ended with it open (an answer, an error, a bug), or its write failed.
ATTEMPTS = st.lists(st.sampled_from(["ended", "open", "unconfirmed"]), max_size=5)


@given(ATTEMPTS)
def test_every_committed_attempt_ends_once_and_a_refusal_only_without_one(history: list[str]) -> None:
    ctx = RequestContext("req_x", "chat", datetime.now(UTC), 0.0)
    committed: list[str] = []
    unconfirmed: list[str] = []
    endings: list[tuple[Ending, str | None]] = []
    for attempt in history:
        rid = ctx.next_attempt()
        if attempt == "unconfirmed":
            ctx.unconfirmed_row(rid)
            unconfirmed.append(rid)
            break  # nothing is forwarded: the request ends with 503
        ctx.committed_row(rid)
        committed.append(rid)
        if attempt == "open":
            break
        endings.append(ctx.ending())  # this upstream failed; the next one is tried
    endings.append(ctx.ending())  # the request ends
    assert ctx.ending() == (Ending.NOTHING, None)  # and ending it again writes nothing more
    outcomes = [rid for kind, rid in endings if kind is Ending.OUTCOME]
    assert outcomes == committed
    assert [rid for kind, rid in endings if kind is Ending.NOT_FORWARDED] == unconfirmed
    refusals = [rid for kind, rid in endings if kind is Ending.REFUSAL]
    assert refusals == ([] if committed or unconfirmed else ["req_x"])
    ids = committed + unconfirmed + refusals
    assert ids == ["req_x", *(f"req_x-{n}" for n in range(1, len(ids)))]


# Wall clocks from 1970 to 2500, in nanoseconds.
CLOCKS = st.integers(min_value=0, max_value=(2500 - 1970) * 365 * 86_400 * 10**9)


@given(st.lists(CLOCKS, min_size=2, max_size=20))
def test_request_ids_sort_as_their_times_and_never_repeat(clocks: list[int]) -> None:
    ids = [new_request_id(now) for now in clocks]
    assert all(re.fullmatch(r"req_[0-9a-f]{32}", rid) for rid in ids)
    assert len(set(ids)) == len(ids)  # even two made in the same microsecond differ
    for (a, ta), (b, tb) in itertools.combinations(zip(ids, clocks, strict=True), 2):
        if ta // 1000 < tb // 1000:  # a later microsecond sorts later: the audit indexes' rightmost leaf
            assert a < b
        elif ta // 1000 > tb // 1000:
            assert a > b


def test_a_request_id_is_made_from_the_clock_now() -> None:
    before = time.time_ns() // 1000
    rid = new_request_id()
    after = time.time_ns() // 1000
    assert before <= int(rid[4:18], 16) <= after
