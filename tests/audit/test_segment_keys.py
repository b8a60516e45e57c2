"""The segment lookup is keyed by a prefix of the fingerprint: matching stays exact whatever the
prefixes share, and the index rebuilt by migration 0007 (both ways) is the one the writer makes."""

from __future__ import annotations

import asyncio
import uuid

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from audit.batch import segment_key
from audit.matching import match_fingerprint
from migrations import downgrade, upgrade
from tests.audit.conftest import make_settings, open_store, outcome, request

_HEX = "0123456789abcdef"
# Few distinct 15-digit prefixes, so that fingerprints sharing a key (within one request and across
# requests) are the common case rather than a 2**-60 accident.
_PREFIXES = st.sampled_from(["0" * 15, "f" * 15, "0123456789abcde"])
_FPS = st.builds(lambda p, rest: p + rest, _PREFIXES, st.text(_HEX, min_size=49, max_size=49))
# a request: its whole-prompt fingerprint, and its segments' (the whole one among them at times)
_REQUESTS = st.lists(
    st.tuples(_FPS, st.lists(_FPS, max_size=5), st.booleans()).map(
        lambda t: (t[0], (*t[1], t[0]) if t[2] else tuple(t[1]))
    ),
    min_size=1,
    max_size=6,
)


async def _index_rows(store) -> set[tuple[int, int]]:
    async with store.engine.connect() as conn:
        return {tuple(r) for r in (await conn.execute(text("SELECT fp_key, request_seq FROM audit_segments"))).all()}


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(requests=_REQUESTS)
def test_a_document_matches_exactly_the_requests_that_carried_it(db_url, tmp_path, requests):
    """For every fingerprint: the requests matched are those whose prompt or a segment it is, no
    request sharing only its key, and no request is refused for two segments sharing a key."""
    nonce = uuid.uuid4().hex[:12]  # one database serves every example: each reads only its own rows

    async def body() -> None:
        store = await open_store(make_settings(db_url, tmp_path))
        try:
            for i, (whole, segments) in enumerate(requests):
                await store.record_request(request(request_id=f"{nonce}-{i}", fingerprint=whole, segments=segments))
            for fp in {f for whole, segs in requests for f in (whole, *segs)}:
                expected = {f"{nonce}-{i}" for i, (whole, segs) in enumerate(requests) if fp == whole or fp in segs}
                found = {m.row.request_id async for m in match_fingerprint(store.engine, fp)}
                assert {r for r in found if r.startswith(nonce)} == expected
                # the same fingerprint in capitals (copied from a report that prints them so)
                upper = {m.row.request_id async for m in match_fingerprint(store.engine, fp.upper())}
                assert {r for r in upper if r.startswith(nonce)} == expected
        finally:
            await store.close()

    asyncio.run(body())


def test_migration_0007_rebuilds_the_index_the_writer_makes(db_url, tmp_path):
    """Down to 0006 (text fingerprints) and up again: the rows rebuilt from ``segment_fps`` equal
    the rows the writer wrote, and a document is still found after each step."""
    fps = [f"{c * 15}{uuid.uuid4().hex}{uuid.uuid4().hex[:17]}" for c in "01f"]

    async def body() -> None:
        store = await open_store(make_settings(db_url, tmp_path))
        try:
            await store.record_request(request(fingerprint=fps[0], segments=(fps[0], fps[1], fps[2])))
            await store.record_request(request(fingerprint=fps[2], segments=(fps[1],)))
            written = await _index_rows(store)
            assert {k for k, _ in written} == {segment_key(fps[1]), segment_key(fps[2])}
            await downgrade(store, "0006_upstream_length_caps")
            async with store.engine.connect() as conn:
                old = {tuple(r) for r in (await conn.execute(text(
                    "SELECT fingerprint, request_seq FROM audit_segments"))).all()}  # fmt: skip
            assert {(segment_key(fp), seq) for fp, seq in old} == written
            await upgrade(store)
            assert await _index_rows(store) == written
            assert len([m async for m in match_fingerprint(store.engine, fps[1])]) == 2
        finally:
            await store.close()

    asyncio.run(body())


def test_a_fingerprint_no_record_can_hold_matches_nothing(db_url, tmp_path):
    """Records hold hex fingerprints only: anything else (empty, non-hex, digits of other scripts
    that int() would read) matches no request, and asking is no error."""
    fp = "ab" * 32

    async def body() -> None:
        store = await open_store(make_settings(db_url, tmp_path))
        try:
            await store.record_request(request(fingerprint=fp, segments=(fp, "cd" * 32)))
            for odd in ("", "not hex", "zz" * 32, "0x" + fp[:62], " " + fp[:63], "\u0661" * 64, "a_b"):
                assert [m async for m in match_fingerprint(store.engine, odd)] == [], odd
        finally:
            await store.close()

    asyncio.run(body())


def test_migration_0007_skips_fingerprints_older_writers_accepted(db_url, tmp_path):
    """Before 0007 a record's fingerprints had only to be alphanumeric: a database holding one
    that is no hex still upgrades (such a fingerprint cannot be matched: a document's is hex), and
    every hex segment is indexed as the writer would."""
    hexed = "1" * 64

    async def body() -> None:
        store = await open_store(make_settings(db_url, tmp_path))
        try:
            await store.record_request(request(fingerprint="2" * 64, segments=(hexed,)))
            await downgrade(store, "0006_upstream_length_caps")
            async with store.engine.begin() as conn:
                await conn.execute(text("UPDATE audit_requests SET segment_fps = segment_fps || ' zz9 \u00e9t\u00e9'"))
            await upgrade(store)
            assert {k for k, _ in await _index_rows(store)} == {segment_key(hexed)}
            assert len([m async for m in match_fingerprint(store.engine, hexed)]) == 1
        finally:
            await store.close()

    asyncio.run(body())


def test_migration_0007_pages_through_many_requests_and_gaps(db_url, tmp_path):
    """The rebuild reads requests a page at a time by seq (500 a page): over several pages, with
    gaps where outcome rows took seqs, every request's rows come back exactly as written."""
    shared = "3" * 64

    async def body() -> None:
        store = await open_store(make_settings(db_url, tmp_path))
        try:
            for i in range(1_200):
                own = f"{i:015x}" + uuid.uuid4().hex + uuid.uuid4().hex[:17]
                rid = f"r{i}"
                await store.record_request(request(request_id=rid, fingerprint="4" * 64, segments=(own, shared)))
                if i % 7 == 0:
                    await store.record_outcome(outcome(rid))  # a seq that is no request's
            written = await _index_rows(store)
            assert len(written) == 2_400
            await downgrade(store, "0006_upstream_length_caps")
            await upgrade(store)
            assert await _index_rows(store) == written
            assert len([m async for m in match_fingerprint(store.engine, shared)]) == 1_200
        finally:
            await store.close()

    asyncio.run(body())
