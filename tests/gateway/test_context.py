"""What ending a request writes (``RequestContext.ending``), over generated attempt histories: each
committed attempt gets exactly one outcome, an unconfirmed write-ahead its ``not_forwarded``, a
refusal row only a request that committed nothing, and a second ending adds nothing."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from gateway.context import Ending, RequestContext

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
