"""The receiving side's judgement of loaded KV: the boundary check and the checksum check.

A decode instance may count a token as computed only if the sender vouched for it: the sender's
record must cover at least every token the scheduler will treat as computed after the load
(otherwise the request would attend over blocks that were reserved but never written: the 2026
"one page of eight" case), and every loaded block must hash to the sender's checksum for it.
Either failure condemns all blocks the request loaded; vLLM (``kv_load_failure_policy: fail``)
then finishes the request with an error instead of decoding.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from engine.pd.records import TransferRecord

__all__ = ["LoadClaim", "Verdict", "judge_load"]

Outcome = Literal["ok", "no_record", "short", "checksum"]


@dataclass(frozen=True, slots=True)
class LoadClaim:
    """What the receiving scheduler is about to believe about one request."""

    req_id: str
    transfer_id: str | None
    block_ids: tuple[int, ...]  # the request's physical blocks, in logical order
    first_block: int  # first logical block the connector loads (earlier ones are local hits)
    claimed_tokens: int  # tokens counted as computed once the load is done
    block_size: int

    @property
    def loaded(self) -> tuple[int, ...]:
        last = -(-self.claimed_tokens // self.block_size)
        return self.block_ids[self.first_block : last]


@dataclass(frozen=True, slots=True)
class Verdict:
    outcome: Outcome
    bad_blocks: frozenset[int]  # physical block ids to report as failed loads

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"


Checksummer = Callable[[Sequence[int], Sequence[int]], list[int]]


def judge_load(claim: LoadClaim, record: TransferRecord | None, checksum: Checksummer) -> Verdict:
    """``checksum(block_ids, counts)`` hashes the receiver's blocks as ``block_checksums`` does."""
    loaded = claim.loaded
    condemned = frozenset(loaded)
    if record is None or record.block_size != claim.block_size:
        return Verdict("no_record", condemned)
    if record.tokens < claim.claimed_tokens:
        return Verdict("short", condemned)
    indices = range(claim.first_block, claim.first_block + len(loaded))
    if any(j >= len(record.checksums) for j in indices):
        return Verdict("short", condemned)
    got = checksum(list(loaded), [record.count(j) for j in indices])
    if any(g != record.checksums[j] for g, j in zip(got, indices, strict=True)):
        return Verdict("checksum", condemned)
    return Verdict("ok", frozenset())
