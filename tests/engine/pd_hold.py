"""A test transport for the split's abort tests: vLLM's example shared-storage connector, whose
scheduler keeps every new request waiting while the test holds that half.

A paired abort must reach a half while its request provably waits there. Making it wait behind a
long *occupant* that fills the KV pool is a race against vLLM's speed: on a fast CPU an occupant's
whole life (a 2,000-token prefill and 1,968 decode steps) is a few seconds, and a busy half takes
seconds to answer ``/metrics``, so the wait sometimes ended before the abort came. Here the wait
ends only when the test says so.

The hold uses the connector API's own answer for "not known yet": ``get_num_new_matched_tokens``
returns ``None``, and vLLM's scheduler defers the request (counted in
``vllm:num_requests_waiting_by_reason{reason="deferred"}``) without allocating it a block, and
asks again the next step. A held request is therefore in the state of one queued behind a full
pool: waiting, no blocks, nothing loaded.

A half is held while the file ``hold_path(dir, kv_role)`` exists; the directory is the inner
connector's ``kv_connector_extra_config[HOLD_DIR_KEY]``. The engine processes read it, the test
process writes it: a file is what both see. The engine must be able to import this module (the
split fixture puts the repository root on ``PYTHONPATH``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vllm.distributed.kv_transfer.kv_connector.v1.example_connector import ExampleConnector

HOLD_DIR_KEY = "tiergate_test_hold_dir"


def hold_path(hold_dir: Path, kv_role: str) -> Path:
    return hold_dir / f"hold-{kv_role}"


class HeldConnector(ExampleConnector):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        ktc = self._kv_transfer_config
        self._hold = hold_path(Path(ktc.kv_connector_extra_config[HOLD_DIR_KEY]), str(ktc.kv_role))

    def get_num_new_matched_tokens(self, request: Any, num_computed_tokens: int) -> tuple[int | None, bool]:
        if self._hold.exists():
            return None, False
        return super().get_num_new_matched_tokens(request, num_computed_tokens)
