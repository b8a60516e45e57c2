"""Tamper evidence: the chain and signed checkpoints catch each kind of tampering, on both DBs."""

from __future__ import annotations

import asyncio
import json

from sqlalchemy import text

from audit import AuditStore
from tests.audit.conftest import CP_KEY, FP_KEY, make_settings, open_store, outcome, request


async def _seed(store: AuditStore, n: int = 10) -> None:
    """n requests, each followed by its outcome, plus one event: seqs 1..2n+1."""
    for i in range(n):
        rec = request(tokens=100 + i, findings={"EMAIL_ADDRESS": i % 3})
        await store.record_request(rec)
        await store.record_outcome(outcome(rec.request_id))
    await store.record_event("probe", {"canary": "ok"})


async def _sql(store: AuditStore, *statements: str) -> None:
    async with store.engine.begin() as conn:
        for stmt in statements:
            await conn.execute(text(stmt))


def _run(db_url, tmp_path, tamper):
    async def body():
        store = await open_store(make_settings(db_url, tmp_path))
        try:
            await _seed(store)
            await store.write_checkpoint()
            result = await tamper(store)
            return result if result is not None else await store.verify()
        finally:
            await store.close()

    return asyncio.run(body())


def test_clean_log_verifies(db_url, tmp_path):
    """An untouched log verifies end to end and matches its checkpoint."""

    async def nothing(store):
        await store.record_request(request())  # rows after the last checkpoint are fine too
        return None

    report = _run(db_url, tmp_path, nothing)
    assert report.ok, report.problems
    assert (report.records, report.first_seq, report.last_seq, report.checkpoints_checked) == (22, 1, 22, 1)


def test_modified_row_detected(db_url, tmp_path):
    """Changing one column of one request row is reported at exactly that seq."""

    async def tamper(store):
        await _sql(store, "UPDATE audit_requests SET prompt_tokens = 5 WHERE seq = 5")

    report = _run(db_url, tmp_path, tamper)
    assert not report.ok
    assert (report.first_bad.kind, report.first_bad.seq, report.first_bad.table) == ("modified", 5, "audit_requests")


def test_modified_outcome_detected(db_url, tmp_path):
    """Rewriting an outcome's status (hiding an integrity error) is caught too."""

    async def tamper(store):
        await _sql(store, "UPDATE audit_outcomes SET status = 'refused' WHERE seq = 8")

    report = _run(db_url, tmp_path, tamper)
    assert (report.first_bad.kind, report.first_bad.seq) == ("modified", 8)


def test_deleted_row_detected(db_url, tmp_path):
    """Deleting a row in the middle leaves a gap reported at the missing seq."""

    async def tamper(store):
        await _sql(store, "DELETE FROM audit_requests WHERE seq = 7")

    report = _run(db_url, tmp_path, tamper)
    assert (report.first_bad.kind, report.first_bad.seq) == ("deleted", 7)


def test_inserted_row_detected(db_url, tmp_path):
    """A forged row reusing a seq is flagged as inserted, and the genuine row still verifies."""

    async def tamper(store):
        await _sql(store, """INSERT INTO audit_outcomes (seq, hash, request_id, created_us, status,
            http_status, integrity_flag) SELECT 9, hash, 'forged', created_us, 'ok', 200, false
            FROM audit_requests WHERE seq = 9""")  # fmt: skip

    report = _run(db_url, tmp_path, tamper)
    kinds = {(p.kind, p.seq, p.table) for p in report.problems}
    assert ("inserted", 9, "audit_outcomes") in kinds
    assert not any(p.kind == "modified" for p in report.problems)


def test_row_beyond_head_detected(db_url, tmp_path):
    """A row appended past the chain head (without the writer) is flagged as inserted."""

    async def tamper(store):
        await _sql(
            store,
            """INSERT INTO audit_events (seq, hash, created_us, kind, detail)
            SELECT 500, hash, created_us, 'probe', '{}' FROM audit_events WHERE seq = 21""",
        )

    report = _run(db_url, tmp_path, tamper)
    assert report.first_bad.kind == "inserted"


def test_truncated_tail_detected_by_checkpoint(db_url, tmp_path):
    """Deleting the newest rows and rewinding the head row is caught by the signed checkpoint."""

    async def tamper(store):
        await _sql(
            store,
            "DELETE FROM audit_requests WHERE seq > 18",
            "DELETE FROM audit_outcomes WHERE seq > 18",
            "DELETE FROM audit_events WHERE seq > 18",
            "UPDATE audit_chain_head SET seq = 18, hash = (SELECT hash FROM audit_outcomes WHERE seq = 18)",
        )

    report = _run(db_url, tmp_path, tamper)
    assert not report.ok
    assert (report.first_bad.kind, report.first_bad.seq) == ("truncated", 19)


def test_truncated_tail_detected_by_head(db_url, tmp_path):
    """Deleting the newest rows but leaving the head row is reported as truncation."""

    async def tamper(store):
        await _sql(store, "DELETE FROM audit_events WHERE seq = 21")

    report = _run(db_url, tmp_path, tamper)
    assert (report.first_bad.kind, report.first_bad.seq) == ("truncated", 21)


def test_forged_checkpoint_rejected(sqlite_db, tmp_path):
    """A checkpoint file edited by hand fails its signature and is reported."""

    async def tamper(store):
        (cp,) = list((tmp_path / "checkpoints").glob("checkpoint-*.json"))
        doc = json.loads(cp.read_text())
        doc["seq"] = 5
        cp.write_text(json.dumps(doc))

    report = _run(sqlite_db, tmp_path, tamper)
    assert report.first_bad.kind == "checkpoint" and "signature" in report.first_bad.message


def test_wrong_key_cannot_rewrite_chain(sqlite_db, tmp_path):
    """Re-hashing a doctored chain without the real key is still detected (the chain is keyed)."""
    from audit.chain import GENESIS, ChainHasher, derive_chain_key
    from audit.verify import _page

    async def tamper(store):
        await _sql(store, "UPDATE audit_requests SET tier = 1, findings = '{}' WHERE seq = 3")
        forger = ChainHasher(derive_chain_key(b"guessed-key"))
        async with store.engine.begin() as conn:
            prev = GENESIS
            for seq, table, row in await _page(conn, 0, 10_000):
                prev = forger.link(prev, table, row._mapping)
                await conn.execute(text(f"UPDATE {table} SET hash = :h WHERE seq = :s"), {"h": prev, "s": seq})
            await conn.execute(text("UPDATE audit_chain_head SET hash = :h"), {"h": prev})

    report = _run(sqlite_db, tmp_path, tamper)
    assert (report.first_bad.kind, report.first_bad.seq) == ("modified", 1)


def test_two_writers_share_one_chain(db_url, tmp_path):
    """Two stores (two replicas) writing concurrently to one database keep one unbroken chain."""

    async def body():
        settings = make_settings(db_url, tmp_path)
        a = await open_store(settings)
        b = await AuditStore.open(settings, fingerprint_key=FP_KEY, checkpoint_key=CP_KEY)
        try:
            seqs = await asyncio.gather(
                *(a.record_request(request()) for _ in range(150)),
                *(b.record_request(request()) for _ in range(150)),
            )
            assert sorted(seqs) == list(range(1, 301))
            await a.write_checkpoint()
            return await b.verify()
        finally:
            await a.close()
            await b.close()

    report = asyncio.run(body())
    assert report.ok and report.records == 300
