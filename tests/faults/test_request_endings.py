"""How requests end, over generated fault plans: whatever the upstreams, the audit database and
the client do, every attempt that handed an upstream the prompt has exactly one write-ahead row,
committed before the upstream saw a byte, and exactly one terminal outcome; nothing reaches an
upstream without its row; a client answer is the outcome its last attempt records.

One gateway serves every example (two upstreams, each behind a fault proxy); an example is one
request under one plan: per upstream refuse / time out / 500 / close mid-stream / fail the count
/ answer, the write-ahead failing or not, the client staying or leaving mid-stream."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.faults._gw import chat_body, one_upstream
from tests.support import FakeUpstream, Received, Scripted
from tests.support.fault_proxy import FaultProxy
from tests.support.harness import FakeUpstreams, GatewayHarness, fetch_rows
from tests.support.stores import FailingWrites

NAMES = ("vendor", "local")
FAULTS = ("answers", "refuses", "times_out", "http_500", "cuts_stream", "count_fails")
READ_S = 0.5
SHORT, LONG = "Name three rivers.", "a" * 280  # LONG: the estimate cannot settle it against 300
PIECES = [f"river {i} " for i in range(30)]


@dataclass(frozen=True)
class Plan:
    faults: dict[str, str]
    stream: bool
    long: bool  # counted at the upstream first
    audit: str  # "ok", "fails" (every write-ahead), "fails_after_first" (the first commits)
    client_leaves: bool


PLANS = st.builds(
    Plan,
    faults=st.fixed_dictionaries({n: st.sampled_from(FAULTS) for n in NAMES}),
    stream=st.booleans(),
    long=st.booleans(),
    audit=st.sampled_from(["ok", "ok", "ok", "ok", "fails", "fails_after_first"]),
    client_leaves=st.booleans(),
)


class _Budgeted(FailingWrites):
    """While failing, the first ``commits_left`` write-ahead rows still commit."""

    commits_left = 0

    async def record_request(self, rec: Any) -> int:
        if self.failing and self.commits_left > 0:
            self.commits_left -= 1
            return await self.inner.record_request(rec)
        return await super().record_request(rec)


class World:
    """The running gateway, its upstreams and proxies, and what each upstream received when."""

    def __init__(self, gw: GatewayHarness, fakes: FakeUpstreams, proxies: dict[str, FaultProxy],
                 store: list[_Budgeted], key: str) -> None:  # fmt: skip
        self.gw, self.fakes, self.proxies, self.store, self.key = gw, fakes, proxies, store, key
        self.since = 0
        self.received: dict[str, int] = {}
        self.unrecorded: list[str] = []  # receipts with no committed row for that upstream yet
        self._lock = threading.Lock()
        self._seen = {name: self._watcher(name) for name in NAMES}
        for name in NAMES:
            fakes[name].on_tokenize = self._seen[name]

    def _watcher(self, name: str) -> Any:
        """Called as an upstream receives anything (a count or a request): is its row committed?"""

        def seen(_r: Received) -> None:
            rows = fetch_rows(self.gw.db_url, "SELECT count(*) AS n FROM audit_requests WHERE upstream = :u "
                              "AND forwarded AND seq > :s", {"u": name, "s": self.since})  # fmt: skip
            with self._lock:
                self.received[name] = self.received.get(name, 0) + 1
                if rows[0]["n"] < 1:
                    self.unrecorded.append(name)

        return seen

    def arm(self, plan: Plan) -> None:
        (row,) = fetch_rows(self.gw.db_url, "SELECT coalesce(max(seq), 0) AS s FROM (SELECT seq FROM "
                            "audit_requests UNION ALL SELECT seq FROM audit_outcomes) AS t")  # fmt: skip
        self.since, self.received, self.unrecorded = row["s"], {}, []
        self.store[0].failing = plan.audit != "ok"
        self.store[0].commits_left = 1 if plan.audit == "fails_after_first" else 0
        for name in NAMES:
            fault, fake, proxy = plan.faults[name], self.fakes[name], self.proxies[name]
            proxy.heal()
            if fault == "refuses":
                proxy.refuse()
            fake.tokenize_status = 500 if fault == "count_fails" else 200
            fake.script = _script(fault, self._seen[name])

    def send(self, plan: Plan) -> tuple[int, list[Any]]:
        """The client's status and, for a stream, the events it read (it may leave after one)."""
        body = chat_body(LONG if plan.long else SHORT, stream=plan.stream)
        headers = {"authorization": f"Bearer {self.key}"}
        if not plan.stream:
            r = httpx.post(self.gw.url + "/v1/chat/completions", json=body, headers=headers, timeout=30)
            return r.status_code, []
        events: list[Any] = []
        with httpx.stream("POST", self.gw.url + "/v1/chat/completions", json=body, headers=headers,
                          timeout=30) as r:  # fmt: skip
            for line in r.iter_lines():
                if line.startswith("data:"):
                    data = line[5:].strip()
                    events.append(data if data == "[DONE]" else json.loads(data))
                    if plan.client_leaves and len(events) >= 2:
                        break
            return r.status_code, events


def _script(fault: str, seen: Any) -> Any:
    def answer(r: Received) -> Scripted:
        seen(r)
        if fault == "times_out":
            return Scripted(delay_s=READ_S * 3)
        if fault == "http_500":
            return Scripted(status=500)
        if fault == "cuts_stream":
            return Scripted(chunks=PIECES, cut_after_chunks=3)
        return Scripted(chunks=PIECES, chunk_delay_s=0.01)

    return answer


@pytest.fixture
def world(sqlite_db: str, tmp_path: Path, classifier: Any) -> Iterator[World]:
    with FakeUpstreams(FakeUpstream(name="vendor"), FakeUpstream(name="local", kind="onprem")) as fakes:
        proxies = {n: FaultProxy("127.0.0.1", fakes.servers[n].port) for n in NAMES}
        for proxy in proxies.values():
            proxy.__enter__()
        try:
            ups = [one_upstream(f"http://{proxies[n].address}/v1", name=n, kind="shared" if n == "vendor" else "onprem",
                                read_s=READ_S, safe_prompt_tokens=300, tokenize_url=f"http://{proxies[n].address}/tokenize")
                   for n in NAMES]  # fmt: skip
            cfg = {"upstreams": ups, "limits": {"auth_cache_s": 0}, "audit": {"write_timeout_s": 1.0},
                   "aliases": [{"name": "chat", "upstreams": list(NAMES)}]}  # fmt: skip
            store: list[_Budgeted] = []

            def wrap(inner: Any) -> FailingWrites:
                store.append(_Budgeted(inner, ping_fails=False))
                store[0].failing = False
                return store[0]

            with GatewayHarness(sqlite_db, tmp_path, cfg, classifier=classifier, store_wrapper=wrap) as gw:
                key = gw.create_key()
                httpx.get(gw.url + "/readyz", timeout=10)  # opens the wrapped store
                yield World(gw, fakes, proxies, store, key)
        finally:
            for proxy in proxies.values():
                proxy.__exit__(None, None, None)


def _rows(w: World) -> list[dict[str, Any]]:
    return fetch_rows(w.gw.db_url, "SELECT r.request_id, r.upstream, r.forwarded, r.seq, (SELECT count(*) FROM "
                      "audit_outcomes o WHERE o.request_id = r.request_id) AS outcomes, (SELECT max(o.http_status) "
                      "FROM audit_outcomes o WHERE o.request_id = r.request_id) AS http_status, (SELECT max(o.status) "
                      "FROM audit_outcomes o WHERE o.request_id = r.request_id) AS status FROM audit_requests r "
                      "WHERE r.seq > :s ORDER BY r.seq", {"s": w.since})  # fmt: skip


def test_every_request_ends_recorded_under_generated_faults(world: World) -> None:
    seen_endings: set[tuple[str | None, bool]] = set()

    @settings(max_examples=40, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(plan=PLANS)
    # The path: every upstream's count fails. And a write-ahead failing on the fallback.
    @example(plan=Plan({"vendor": "count_fails", "local": "count_fails"}, stream=False, long=True, audit="ok",
                       client_leaves=False))  # fmt: skip
    @example(plan=Plan({"vendor": "count_fails", "local": "count_fails"}, stream=True, long=True, audit="ok",
                       client_leaves=False))  # fmt: skip
    @example(plan=Plan({"vendor": "http_500", "local": "answers"}, stream=False, long=False,
                       audit="fails_after_first", client_leaves=False))  # fmt: skip
    def run(plan: Plan) -> None:
        world.arm(plan)
        status, events = world.send(plan)
        world.gw.settle(timeout_s=5.0)
        rows = _rows(world)
        forwarded = [r for r in rows if r["forwarded"]]
        # Nothing reached an upstream before a committed row for it; each attempt is one row.
        assert world.unrecorded == [], (plan, world.unrecorded)
        for name, n in world.received.items():
            attempts = [r for r in forwarded if r["upstream"] == name]
            assert len(attempts) == 1 and n <= 2, (plan, name, n, attempts)  # a count, then the request
        # Every row, forwarded or a refusal, has exactly one terminal outcome.
        assert all(r["outcomes"] == 1 for r in rows), (plan, rows)
        ids = [r["request_id"] for r in rows]
        assert len(ids) == len(set(ids)) and len({i.split("-")[0] for i in ids}) <= 1, ids
        if plan.audit == "fails":
            assert status == 503 and rows == [] and world.received == {}, (plan, status, rows)
        elif plan.audit == "fails_after_first" and len(rows) == 1 and status == 503:
            # The fallback's row did not commit: it got nothing, the first attempt's row stands.
            assert rows[0]["upstream"] == "vendor" and set(world.received) <= {"vendor"}, (plan, rows)
        elif not plan.stream or status != 200:
            assert rows and rows[-1]["http_status"] == status, (plan, status, rows)  # the client heard the last one
        else:
            done = "[DONE]" in events
            assert (rows[-1]["status"] == "ok") == done or plan.client_leaves, (plan, events[-1:], rows)
        seen_endings.add((rows[-1]["status"] if rows else None, bool(forwarded)))

    run()
    # The plans really produced the different endings, forwarded and not.
    kinds = {k for k, _ in seen_endings}
    assert {"ok", "upstream_error", "timeout", None} <= kinds, seen_endings
