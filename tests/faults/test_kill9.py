"""kill -9 of a real `tiergate serve` process under a 2,000-request load loses no audit row: every
request the upstream saw and every answer a client got has its committed row, on SQLite and
PostgreSQL, and the hash chain of the killed process's database still verifies.

One gateway start per backend (its imports take most of this test's time), killed after
``KILL_AFTER`` answers with ``CONCURRENCY`` requests in flight; the rest of the 2,000 find it dead."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import httpx

from audit.fingerprint import fingerprint, normalize_for_fingerprint
from migrations import upgrade
from tests.faults._gw import chat_body, one_upstream, write_config
from tests.faults.conftest import admin, create_key
from tests.support import FakeUpstream, GatewayProcess, serve
from tests.support.crosstalk import last_user_text
from tests.support.harness import SECRETS, fetch_rows

TOTAL = 2000
KILL_AFTER = 400
CONCURRENCY = 24


async def _load(url: str, key: str, prompts: list[str], kill_after: int | None, proc: GatewayProcess,
                ok: dict[int, str], failed: set[int]) -> None:  # fmt: skip
    """Send each prompt once; SIGKILL the gateway's process group once ``kill_after`` answers came."""
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(len(prompts)):
        queue.put_nowait(i)
    killed = asyncio.Event()
    headers = {"authorization": f"Bearer {key}"}
    limits = httpx.Limits(max_connections=CONCURRENCY)

    async def worker(client: httpx.AsyncClient) -> None:
        while not queue.empty():
            i = queue.get_nowait()
            if killed.is_set():
                failed.add(i)
                continue
            try:
                r = await client.post("/v1/chat/completions", json=chat_body(prompts[i]), headers=headers)
            except httpx.HTTPError:
                failed.add(i)
                continue
            if r.status_code == 200:
                ok[i] = r.headers["x-request-id"]
                if kill_after is not None and len(ok) >= kill_after and not killed.is_set():
                    killed.set()
                    assert proc.proc is not None
                    os.killpg(proc.proc.pid, signal.SIGKILL)
            else:
                failed.add(i)

    async with httpx.AsyncClient(base_url=url, timeout=30, limits=limits) as client:
        await asyncio.gather(*(worker(client) for _ in range(CONCURRENCY)))


def _run(db_url: str, tmp_path: Path) -> None:
    fake = FakeUpstream(name="vendor")
    prompts = [f"Write a haiku about autumn leaves, variation number {i} of the batch." for i in range(TOTAL)]
    with serve(fake.app, lifespan="off") as upstream:
        config = write_config(tmp_path, db_url, [one_upstream(upstream.url + "/v1")])
        admin(db_url, tmp_path, lambda st: upgrade(st))
        key = create_key(db_url, tmp_path)
        gw = GatewayProcess(config, log=tmp_path / "gateway.log")
        ok: dict[int, str] = {}
        failed: set[int] = set()
        try:
            gw.start()
            asyncio.run(_load(gw.url, key, prompts, KILL_AFTER, gw, ok, failed))
            assert gw.proc is not None and gw.proc.wait(timeout=15) == -signal.SIGKILL
        finally:
            gw.kill()
    # The kill hit a loaded server: requests were in flight, and most of the 2,000 never got in.
    assert KILL_AFTER <= len(ok) < TOTAL and len(ok) + len(failed) == TOTAL
    assert len(fake.ledger) >= len(ok)

    rows = fetch_rows(db_url, "SELECT request_id, fingerprint, forwarded FROM audit_requests")
    ids = [r["request_id"] for r in rows]
    assert len(ids) == len(set(ids))  # no duplicated rows
    by_id = {r["request_id"]: r for r in rows}
    # Every answer a client got has its committed write-ahead row.
    assert all(rid in by_id and by_id[rid]["forwarded"] for rid in ok.values())
    # Every request the upstream saw has a row (matched by the keyed fingerprint of its prompt).
    key_bytes = SECRETS["fingerprint_key"].encode()
    fps = {r["fingerprint"] for r in rows if r["forwarded"]}
    seen = [fingerprint(key_bytes, normalize_for_fingerprint(last_user_text(r))) for r in fake.ledger.items()]
    missing = [fp for fp in seen if fp not in fps]
    if missing:  # say which request, to tell a lost row from a mismatched fingerprint
        index = {fingerprint(key_bytes, normalize_for_fingerprint(p)): i for i, p in enumerate(prompts)}
        any_row = {r["fingerprint"] for r in rows}
        print(
            "lost:",
            [(index.get(fp), fp in any_row) for fp in missing],
            "rows:",
            len(rows),
            "ledger:",
            len(fake.ledger),
            "answered:",
            len(ok),
        )
    assert len(seen) == len(fake.ledger) and missing == []
    report = admin(db_url, tmp_path, lambda st: st.verify())
    assert report.ok, report.as_dict()
    assert report.records >= len(rows)


def test_kill9_under_load_sqlite(sqlite_db: str, tmp_path: Path) -> None:
    """SQLite (WAL): kill -9 mid-load, restart, every upstream request and answer has its row."""
    _run(sqlite_db, tmp_path)


def test_kill9_under_load_postgres(postgres_db: str, tmp_path: Path) -> None:
    """PostgreSQL: kill -9 mid-load, restart, every upstream request and answer has its row."""
    _run(postgres_db, tmp_path)
