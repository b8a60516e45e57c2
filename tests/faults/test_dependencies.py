"""The gateway's own dependencies fail: the audit database (SQLite made unwritable, PostgreSQL
refused, paused, its connections killed) and Redis (refused, paused). Database faults give fast,
explicit 503s with nothing forwarded and full recovery; Redis faults are the documented fail-open,
counted in a metric.

A pause differs from an outage: what the gateway gave up on is still queued in the dependency and
runs when it resumes. A write-ahead row may commit after its client got 503 (the log over-reports a
request that was never forwarded) and a rate-limit command may count after it failed open (the
limiter over-counts). Both are the safe direction; the tests pin down how far each may go.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy.engine import make_url

from gateway.ratelimit import WINDOW_S
from tests.faults._gw import chat_body, one_upstream
from tests.faults.conftest import admin
from tests.support import FakeUpstream
from tests.support.fault_proxy import FaultProxy
from tests.support.harness import FakeUpstreams, GatewayHarness, fetch_rows

PROMPT = "Give me three tips for writing clear release notes."
CLIENT_TIMEOUT = 15.0  # far above the gateway's own bounds: a hang shows as a client timeout
AUTH_TIMEOUT_S = 1.0  # limits.auth_timeout_s here (default 5): keeps the paused-database tests short
WRITE_TIMEOUT_S = 1.0  # audit.write_timeout_s here
SLACK_S = 1.5  # scheduling, the writer watchdog's tick, a loaded machine


@pytest.fixture
def fakes() -> Iterator[FakeUpstreams]:
    with FakeUpstreams(FakeUpstream(name="vendor")) as f:
        yield f


def _config(fakes: FakeUpstreams, **extra: Any) -> dict[str, Any]:
    cfg: dict[str, Any] = {"upstreams": [one_upstream(fakes.base_url("vendor"))],
                           "limits": {"auth_cache_s": 0, "auth_timeout_s": AUTH_TIMEOUT_S},
                           "audit": {"write_timeout_s": WRITE_TIMEOUT_S}}  # fmt: skip
    cfg.update(extra)
    return cfg


def _post(gw: GatewayHarness, key: str, stream: bool = False, prompt: str = PROMPT) -> httpx.Response:
    return httpx.post(gw.url + "/v1/chat/completions", json=chat_body(prompt, stream=stream),
                      headers={"authorization": f"Bearer {key}"}, timeout=CLIENT_TIMEOUT)  # fmt: skip


def _timed_post(gw: GatewayHarness, key: str, stream: bool = False,
                prompt: str = PROMPT) -> tuple[httpx.Response, float]:  # fmt: skip
    t0 = time.monotonic()
    r = _post(gw, key, stream=stream, prompt=prompt)
    return r, time.monotonic() - t0


def _assert_unavailable(r: httpx.Response) -> None:
    assert r.status_code == 503, r.text
    assert r.json()["error"]["code"] in {"audit_unavailable", "auth_unavailable"}
    assert PROMPT not in r.text


def _assert_recovered(gw: GatewayHarness, db_url: str, tmp_path: Path, ok_ids: list[str], forwarded: int) -> None:
    """Every 200 has exactly one committed row, the upstream saw only those, the chain verifies."""
    rows = fetch_rows(db_url, "SELECT request_id FROM audit_requests WHERE forwarded")
    ids = [r["request_id"] for r in rows]
    assert len(ids) == len(set(ids))
    assert set(ok_ids) <= set(ids)
    assert forwarded == len(ok_ids)
    report = admin(db_url, tmp_path, lambda st: st.verify())
    assert report.ok, report.as_dict()


@contextmanager
def _immutable(paths: list[Path]) -> Iterator[None]:
    # chattr +i defeats root (chmod does not); the -shm file stays writable, since SQLite maps it
    # and a write fault there would be a SIGBUS, not an I/O error.
    subprocess.run(["chattr", "+i", *map(str, paths)], check=True)
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", *map(str, paths)], check=True)


def test_sqlite_unwritable_then_writable(fakes: FakeUpstreams, sqlite_db: str, tmp_path: Path,
                                         classifier: Any) -> None:  # fmt: skip
    """With the SQLite file and WAL made unwritable every request gets 503 and nothing is forwarded;
    made writable again, requests succeed with no lost or duplicated rows and the chain verifies."""
    db_file = Path(make_url(sqlite_db).database or "")
    with GatewayHarness(sqlite_db, tmp_path, _config(fakes), classifier=classifier) as gw:
        key = gw.create_key()
        ok_ids = [_post(gw, key).headers["x-request-id"]]
        before = len(fakes["vendor"].ledger)
        with _immutable([db_file, db_file.with_name(db_file.name + "-wal")]):
            for stream in (False, True, False):
                _assert_unavailable(_post(gw, key, stream=stream))
            assert len(fakes["vendor"].ledger) == before  # nothing forwarded during the outage
        for _ in range(3):
            r = _post(gw, key)
            assert r.status_code == 200, r.text
            ok_ids.append(r.headers["x-request-id"])
        _assert_recovered(gw, sqlite_db, tmp_path, ok_ids, len(fakes["vendor"].ledger))


def _proxied(db_url: str, proxy: FaultProxy) -> str:
    url = make_url(db_url)
    return url.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)


@contextmanager
def _gateway_on_proxied_postgres(fakes: FakeUpstreams, postgres_db: str, tmp_path: Path, classifier: Any,
                                 **extra: Any) -> Iterator[tuple[FaultProxy, GatewayHarness]]:  # fmt: skip
    """A gateway whose audit and key database is reached through a fault proxy."""
    url = make_url(postgres_db)
    with FaultProxy(url.host or "127.0.0.1", url.port or 5432) as proxy:
        try:
            with GatewayHarness(_proxied(postgres_db, proxy), tmp_path, _config(fakes, **extra),
                                classifier=classifier) as gw:  # fmt: skip
                yield proxy, gw
        finally:
            proxy.heal()  # a test failing mid-fault must not leave the gateway's shutdown hanging


@pytest.mark.parametrize("fault", ["refuse", "pause"])
def test_postgres_down_or_paused_then_back(fault: str, fakes: FakeUpstreams, postgres_db: str, tmp_path: Path,
                                           classifier: Any) -> None:  # fmt: skip
    """PostgreSQL refusing connections (down) or holding every byte (paused): each request gets a
    fast 503 with nothing forwarded; once it is back, requests succeed, every answer has one row."""
    with _gateway_on_proxied_postgres(fakes, postgres_db, tmp_path, classifier) as (proxy, gw):
        key = gw.create_key()
        ok_ids = [_post(gw, key).headers["x-request-id"]]
        before = len(fakes["vendor"].ledger)
        getattr(proxy, fault)()
        for stream in (False, True):
            r, elapsed = _timed_post(gw, key, stream=stream)
            _assert_unavailable(r)
            assert elapsed < AUTH_TIMEOUT_S + WRITE_TIMEOUT_S + SLACK_S
        assert len(fakes["vendor"].ledger) == before
        proxy.heal()
        for _ in range(3):
            r = _post(gw, key)
            assert r.status_code == 200, r.text
            ok_ids.append(r.headers["x-request-id"])
        _assert_recovered(gw, postgres_db, tmp_path, ok_ids, len(fakes["vendor"].ledger))


def test_paused_key_database_refuses_within_the_auth_timeout(fakes: FakeUpstreams, postgres_db: str,
                                                             tmp_path: Path, classifier: Any) -> None:  # fmt: skip
    """A paused key database refuses each request with 503 after limits.auth_timeout_s, nothing forwarded."""
    auth_timeout = 1.5
    limits = {"auth_cache_s": 0, "auth_timeout_s": auth_timeout}
    # A long write timeout: a 503 that also waited for its refusal row to be written would show.
    audit = {"write_timeout_s": 8.0}
    with _gateway_on_proxied_postgres(fakes, postgres_db, tmp_path, classifier, limits=limits,
                                      audit=audit) as (proxy, gw):  # fmt: skip
        key = gw.create_key()
        assert _post(gw, key).status_code == 200
        gw.settle()  # the outcome row's bytes pass before the pause, not during it
        before = len(fakes["vendor"].ledger)
        held = proxy.stats.upstream_bytes
        proxy.pause()
        for stream in (False, True):
            r, elapsed = _timed_post(gw, key, stream=stream)
            _assert_unavailable(r)
            assert r.json()["error"]["code"] == "auth_unavailable"
            # At least the lookup's own bound (the pause really held it), and far below the 5 s
            # default (the setting is what bounds it). The refusal row is written in the
            # background: the 503 does not also wait out audit.write_timeout_s.
            assert auth_timeout * 0.95 <= elapsed < auth_timeout + SLACK_S, elapsed
        assert len(fakes["vendor"].ledger) == before
        assert proxy.stats.upstream_bytes == held  # every byte of the lookups was held by the pause
        proxy.heal()
        assert _post(gw, key).status_code == 200


_TAG = re.compile(r"Ticket (\d+)\.")


def test_postgres_pause_late_commits_only_over_report(fakes: FakeUpstreams, postgres_db: str, tmp_path: Path,
                                                      classifier: Any) -> None:  # fmt: skip
    """After a PostgreSQL pause the log may over-report 503'd requests, never miss a forwarded one; the chain verifies."""
    paused = 4
    # Keys stay cached across the pause, so each paused request reaches the write-ahead step and
    # fails there (audit_unavailable), not at the key lookup. One key per paused request: the
    # upstream never learns request ids, so a late row is traced back to its request by key.
    limits = {"auth_cache_s": 600, "auth_timeout_s": AUTH_TIMEOUT_S}
    with _gateway_on_proxied_postgres(fakes, postgres_db, tmp_path, classifier, limits=limits) as (proxy, gw):
        keys = [gw.create_key() for _ in range(paused + 1)]
        key_ids = [k.split("_", 2)[1] for k in keys]
        sent: list[tuple[str, int, str | None]] = []  # per ticket: key id, status, request id

        def send(key: str, ticket: int) -> tuple[httpx.Response, float]:
            r, elapsed = _timed_post(gw, key, prompt=f"{PROMPT} Ticket {ticket}.")
            sent[ticket] = (key.split("_", 2)[1], r.status_code, r.headers.get("x-request-id"))
            return r, elapsed

        def ticket() -> int:
            sent.append(("", 0, None))
            return len(sent) - 1

        for key in keys:  # authenticate (and cache) every key while the database answers
            r, _ = send(key, ticket())
            assert r.status_code == 200, r.text
        gw.settle()
        before = len(fakes["vendor"].ledger)
        proxy.pause()
        tickets = [ticket() for _ in range(paused)]
        with ThreadPoolExecutor(paused) as pool:
            results = list(pool.map(send, keys[1:], tickets))
        for r, elapsed in results:
            _assert_unavailable(r)
            assert r.json()["error"]["code"] == "audit_unavailable"
            assert elapsed < WRITE_TIMEOUT_S + SLACK_S, elapsed
        assert len(fakes["vendor"].ledger) == before
        proxy.heal()
        for _ in range(3):
            r, _ = send(keys[0], ticket())
            assert r.status_code == 200, r.text
        rows = gw.rows("SELECT r.request_id, r.key_id, r.forwarded, "
                       "EXISTS (SELECT 1 FROM audit_outcomes o WHERE o.request_id = r.request_id) AS has_outcome, "
                       "(SELECT max(o.status) FROM audit_outcomes o WHERE o.request_id = r.request_id) AS status "
                       "FROM audit_requests r")  # fmt: skip

    ok_ids = [rid for _k, status, rid in sent if status == 200 and rid]
    refused_keys = [k for k, status, _rid in sent if status == 503]
    assert len(refused_keys) == paused and set(refused_keys) == set(key_ids[1:])
    forwarded = {r["request_id"]: r for r in rows if r["forwarded"]}
    assert len(forwarded) == sum(1 for r in rows if r["forwarded"])  # no request id twice
    # Every request the upstream saw has its row: the ledger traced back to tickets, then to ids.
    seen = [int(m.group(1)) for item in fakes["vendor"].ledger.items() for m in [_TAG.search(item.text)] if m]
    assert len(seen) == len(fakes["vendor"].ledger) == len(ok_ids)
    for n in seen:
        _key_id, status, rid = sent[n]
        assert status == 200 and rid in forwarded, (n, status)
        assert forwarded[rid]["has_outcome"]
    # The rest are rows that committed after their client was told 503: at most one late row per
    # refused key (each made one request in the pause), and each one's outcome says that it was
    # not forwarded after all, so no exposure query counts it.
    late = [r for rid, r in forwarded.items() if rid not in set(ok_ids)]
    assert len(late) <= paused
    assert all(r["key_id"] in refused_keys and r["status"] == "not_forwarded" for r in late), late
    assert len({r["key_id"] for r in late}) == len(late)
    report = admin(postgres_db, tmp_path, lambda st: st.verify())
    assert report.ok, report.as_dict()


def test_postgres_connections_terminated(fakes: FakeUpstreams, postgres_db: str, tmp_path: Path,
                                         classifier: Any) -> None:  # fmt: skip
    """pg_terminate_backend on every connection of the gateway's own database (never the shared
    server): the pool reconnects; no request is forwarded without its row."""
    name = make_url(postgres_db).database
    with GatewayHarness(postgres_db, tmp_path, _config(fakes), classifier=classifier) as gw:
        key = gw.create_key()
        statuses = [_post(gw, key).status_code]
        killed = fetch_rows(postgres_db, "SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity "
                                         "WHERE datname = :d AND pid <> pg_backend_pid()", {"d": name})  # fmt: skip
        assert killed[0]["n"] >= 1
        ok_ids = []
        for _ in range(4):
            r = _post(gw, key)
            statuses.append(r.status_code)
            if r.status_code == 200:
                ok_ids.append(r.headers["x-request-id"])
            else:
                _assert_unavailable(r)
        assert statuses[-1] == 200  # recovered
        rows = fetch_rows(postgres_db, "SELECT request_id FROM audit_requests WHERE forwarded")
        assert set(ok_ids) <= {r["request_id"] for r in rows}
        assert len(fakes["vendor"].ledger) == statuses.count(200)


def _backend_errors(gw: GatewayHarness) -> float:
    for line in httpx.get(gw.url + "/metrics").text.splitlines():
        if line.startswith("tiergate_ratelimit_backend_errors_total"):
            return float(line.split()[-1])
    raise AssertionError("the rate-limit backend error counter is not exported")


def _room_in_window(seconds: float) -> None:
    """Start in a rate-limit window with ``seconds`` left: the counts below must not straddle two."""
    left = WINDOW_S - time.time() % WINDOW_S
    if left < seconds:
        time.sleep(left + 0.05)


@pytest.mark.parametrize("fault", ["refuse", "pause"])
def test_redis_down_or_paused_fails_open_with_a_counter(fault: str, fakes: FakeUpstreams, sqlite_db: str,
                                                        tmp_path: Path, classifier: Any) -> None:  # fmt: skip
    """Redis down or paused: requests fail open, counted; once back the limit holds, over-counted by at most the timed-out commands."""
    import redis

    from tests.conftest import REDIS_URL

    limit = 8
    target = make_url(REDIS_URL.replace("redis://", "redis+x://"))
    with FaultProxy(target.host or "127.0.0.1", target.port or 6379) as proxy:
        cfg = _config(fakes, redis_url=f"redis://{proxy.address}/0",
                      limits={"auth_cache_s": 0, "requests_per_minute": limit})  # fmt: skip
        with GatewayHarness(sqlite_db, tmp_path, cfg, classifier=classifier) as gw:
            key = gw.create_key()
            key_id = key.split("_", 2)[1]
            _room_in_window(15.0)
            assert _post(gw, key).status_code == 200
            assert _backend_errors(gw) == 0
            getattr(proxy, fault)()
            for _ in range(3):
                assert _post(gw, key).status_code == 200  # fail open...
            failed_open = _backend_errors(gw)
            assert failed_open == 3  # ...counted
            # No reset before healing: a paused Redis still holds the commands the gateway gave
            # up on, and runs them now. Each may count a request twice (over-counting, never
            # under-enforcing); the limiter's own answers must come from Redis again.
            proxy.heal()
            statuses = []
            for _ in range(limit):
                r = _post(gw, key)
                statuses.append(r.status_code)
                if r.status_code != 200:
                    break
            assert statuses[-1] == 429, statuses  # the limit is enforced again...
            assert int(r.headers["retry-after"]) >= 1
            assert _post(gw, key).status_code == 429  # ...and stays enforced in this window
            assert _backend_errors(gw) == failed_open  # every verdict after resume came from Redis
    passed_after = len(statuses) - 1
    over_count = limit - 1 - passed_after  # budget the fail-open requests took after all
    assert 0 <= over_count <= failed_open, statuses
    if fault == "refuse":
        assert over_count == 0  # a refused command never reached Redis
    direct = redis.Redis.from_url(REDIS_URL)
    try:
        keys = list(direct.scan_iter(f"tiergate:rl:{key_id}:requests:*"))
        counted = sum(int(direct.get(k) or 0) for k in keys)
        for k in keys:
            direct.delete(k)
    finally:
        direct.close()
    assert counted == limit  # late commands count only within the limit (the check is atomic)
