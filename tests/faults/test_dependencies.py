"""The gateway's own dependencies fail: the audit database (SQLite made unwritable, PostgreSQL
refused, paused, its connections killed) and Redis (refused, paused). Database faults give fast,
explicit 503s with nothing forwarded and full recovery; Redis faults are the documented fail-open,
counted in a metric."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy.engine import make_url

from tests.faults._gw import chat_body, one_upstream
from tests.faults.conftest import admin
from tests.support import FakeUpstream
from tests.support.fault_proxy import FaultProxy
from tests.support.harness import FakeUpstreams, GatewayHarness, fetch_rows

PROMPT = "Give me three tips for writing clear release notes."
CLIENT_TIMEOUT = 15.0  # far above the gateway's own bounds: a hang shows as a client timeout


@pytest.fixture
def fakes() -> Iterator[FakeUpstreams]:
    with FakeUpstreams(FakeUpstream(name="vendor")) as f:
        yield f


def _config(fakes: FakeUpstreams, **extra: Any) -> dict[str, Any]:
    cfg: dict[str, Any] = {"upstreams": [one_upstream(fakes.base_url("vendor"))],
                           "limits": {"auth_cache_s": 0}, "audit": {"write_timeout_s": 1.0}}  # fmt: skip
    cfg.update(extra)
    return cfg


def _post(gw: GatewayHarness, key: str, stream: bool = False) -> httpx.Response:
    return httpx.post(gw.url + "/v1/chat/completions", json=chat_body(PROMPT, stream=stream),
                      headers={"authorization": f"Bearer {key}"}, timeout=CLIENT_TIMEOUT)  # fmt: skip


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


@pytest.mark.parametrize("fault", ["refuse", "pause"])
def test_postgres_down_or_paused_then_back(fault: str, fakes: FakeUpstreams, postgres_db: str, tmp_path: Path,
                                           classifier: Any) -> None:  # fmt: skip
    """PostgreSQL refusing connections (down) or holding every byte (paused): each request gets a
    fast 503 with nothing forwarded; once it is back, requests succeed, every answer has one row."""
    url = make_url(postgres_db)
    with FaultProxy(url.host or "127.0.0.1", url.port or 5432) as proxy:
        via_proxy = _proxied(postgres_db, proxy)
        with GatewayHarness(via_proxy, tmp_path, _config(fakes), classifier=classifier) as gw:
            key = gw.create_key()
            ok_ids = [_post(gw, key).headers["x-request-id"]]
            before = len(fakes["vendor"].ledger)
            getattr(proxy, fault)()
            for stream in (False, True):
                _assert_unavailable(_post(gw, key, stream=stream))
            assert len(fakes["vendor"].ledger) == before
            proxy.heal()
            for _ in range(3):
                r = _post(gw, key)
                assert r.status_code == 200, r.text
                ok_ids.append(r.headers["x-request-id"])
            _assert_recovered(gw, postgres_db, tmp_path, ok_ids, len(fakes["vendor"].ledger))


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


@pytest.mark.parametrize("fault", ["refuse", "pause"])
def test_redis_down_or_paused_fails_open_with_a_counter(fault: str, fakes: FakeUpstreams, sqlite_db: str,
                                                        tmp_path: Path, classifier: Any) -> None:  # fmt: skip
    """Redis refusing or paused (a private proxy in front of the shared server): requests still pass,
    each one counted in tiergate_ratelimit_backend_errors; once Redis is back it counts requests again."""
    import redis

    from tests.conftest import REDIS_URL

    target = make_url(REDIS_URL.replace("redis://", "redis+x://"))
    with FaultProxy(target.host or "127.0.0.1", target.port or 6379) as proxy:
        cfg = _config(fakes, redis_url=f"redis://{proxy.address}/0",
                      limits={"auth_cache_s": 0, "requests_per_minute": 10_000})  # fmt: skip
        with GatewayHarness(sqlite_db, tmp_path, cfg, classifier=classifier) as gw:
            key = gw.create_key()
            key_id = key.split("_", 2)[1]
            assert _post(gw, key).status_code == 200
            assert _backend_errors(gw) == 0
            getattr(proxy, fault)()
            for _ in range(3):
                assert _post(gw, key).status_code == 200  # fail open...
            assert _backend_errors(gw) == 3  # ...counted
            # Drop the held connections first: a resumed Redis would still run the commands the
            # gateway gave up on (over-counting, never under-enforcing), which is not under test.
            proxy.reset_all()
            proxy.heal()
            for _ in range(2):
                assert _post(gw, key).status_code == 200
            assert _backend_errors(gw) == 3
    direct = redis.Redis.from_url(REDIS_URL)
    try:
        keys = list(direct.scan_iter(f"tiergate:rl:{key_id}:requests:*"))
        counted = sum(int(direct.get(k) or 0) for k in keys)
        for k in keys:
            direct.delete(k)
    finally:
        direct.close()
    assert counted == 3  # the first request and the two after recovery; none during the fault
