"""Exposure: a seeded incident gives exact counts; verdicts and exit codes; document matching;
query output formats. Real SQLite and PostgreSQL throughout (``db_url``)."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import textwrap
from datetime import UTC, date, datetime
from pathlib import Path

from click.testing import CliRunner
from sqlalchemy import text

from audit import fingerprint, normalize_for_fingerprint
from audit.assessment import Verdict, assess
from audit.batch import segment_key
from audit.disclosures import parse_disclosure
from audit.queries import ExposureFilter, count_rows, stream_rows
from gateway.cli import main
from tests.audit.conftest import FP_KEY, make_settings, open_store, outcome, request, write_cli_config

START = datetime(2026, 8, 27, tzinfo=UTC)
END = datetime(2026, 9, 9, 23, 59, 59, tzinfo=UTC)

DISCLOSURE = textwrap.dedent("""\
    title: Long-prompt KV cross-talk
    reference: EXC-1
    providers: [examplecloud]
    models: [big-1]
    window:
      start: 2026-08-27T00:00:00Z
      end: 2026-09-09T23:59:59Z
    conditions:
      min_prompt_tokens: 1000
""")


def _at(day: int, hour: int = 12) -> datetime:
    return datetime(2026, 8, day, hour, tzinfo=UTC) if day > 9 else datetime(2026, 9, day, hour, tzinfo=UTC)


def incident_records():
    """7 records that match the disclosure, 7 that must not."""
    vendor = {"provider": "examplecloud", "upstream": "ec-shared", "model": "big-1"}
    matching = [
        request(at=_at(28), tenant="acme", key_id="k1", tokens=2000, **vendor),
        request(at=_at(28, 13), tenant="acme", key_id="k1", tokens=5000, **vendor),
        request(at=_at(30), tenant="acme", key_id="k9", tokens=1000, **vendor),
        request(at=END, tenant="acme", key_id="k1", tokens=1500, **vendor),  # window end inclusive
        request(at=_at(1), tenant="beta", key_id="k2", tokens=3000, tier=2, stripped=True,
                findings={"EMAIL_ADDRESS": 2}, **vendor),
        request(at=_at(2), tenant="beta", key_id="k2", tokens=3000, tier=2, stripped=True,
                findings={"EMAIL_ADDRESS": 1, "PHONE_NUMBER": 1}, **vendor),
        request(at=_at(3), tenant="gamma", key_id="k3", tokens=9000, tier=3, kind="shared",
                findings={"CUSTOMER_ID": 1}, **vendor),
    ]  # fmt: skip
    other = dict(vendor)
    not_matching = [
        request(at=_at(28), tokens=999, tier=3, **vendor),  # below min_prompt_tokens
        request(at=_at(28), tokens=5000, tier=3, provider="examplecloud", upstream="ec-shared",
                model="big-2"),  # another model
        request(at=datetime(2026, 8, 26, 23, 59, 59, tzinfo=UTC), tokens=5000, tier=2, **vendor),
        request(at=datetime(2026, 9, 10, tzinfo=UTC), tokens=5000, tier=2, **vendor),
        request(at=_at(28), tokens=5000, tier=2, provider="othercloud", upstream="oc",
                model="big-1"),
        request(at=_at(29), tokens=5000, tier=1, provider=None, upstream="onprem-1",
                model="big-1", kind="onprem"),
    ]  # fmt: skip
    refused = request(at=_at(29), tokens=5000, tier=3, **other)
    return matching, not_matching, refused


async def _seed(store) -> None:
    matching, not_matching, refused = incident_records()
    for rec in matching + not_matching:
        await store.record_request(rec)
        await store.record_outcome(outcome(rec.request_id))
    await store.record_refusal(refused, outcome(refused.request_id, "refused", 403))


def test_seeded_incident_exact_counts(db_url, tmp_path):
    """The assessment of a seeded incident returns exactly the expected numbers."""

    async def body():
        store = await open_store(make_settings(db_url, tmp_path))
        try:
            await _seed(store)
            return await assess(store.engine, parse_disclosure(DISCLOSURE))
        finally:
            await store.close()

    a = asyncio.run(body())
    assert a.total == 7
    assert a.by_tier == {1: 4, 2: 2, 3: 1}
    assert a.verdict is Verdict.SENSITIVE and a.verdict.exit_code == 20
    assert a.tenants_to_contact == ("beta", "gamma")
    assert [(t.tenant, t.key_id, t.requests, t.max_tier) for t in a.by_tenant_key] == [
        ("acme", "k1", 3, 1), ("beta", "k2", 2, 2), ("acme", "k9", 1, 1), ("gamma", "k3", 1, 3),
    ]  # fmt: skip
    assert a.by_day == ((date(2026, 8, 28), 2), (date(2026, 8, 30), 1), (date(2026, 9, 1), 1),
                        (date(2026, 9, 2), 1), (date(2026, 9, 3), 1), (date(2026, 9, 9), 1))  # fmt: skip
    assert a.earliest == _at(28) and a.latest == END
    ents = {e.entity_type: (e.requests, e.occurrences, e.stripped_requests, e.unstripped_requests)
            for e in a.entities}  # fmt: skip
    assert ents == {"EMAIL_ADDRESS": (2, 3, 2, 0), "PHONE_NUMBER": (1, 1, 1, 0),
                    "CUSTOMER_ID": (1, 1, 0, 1)}  # fmt: skip
    assert a.tier3_total == 1 and a.tier3_shared == 1 and a.tier3[0].tenant == "gamma"
    assert any("POLICY BREACH" in n for n in a.notes)
    assert [r.prompt_tokens for r in a.longest][:3] == [9000, 5000, 3000]


def _seeded(db_url, tmp_path) -> Path:
    async def body():
        store = await open_store(make_settings(db_url, tmp_path))
        try:
            await _seed(store)
        finally:
            await store.close()

    asyncio.run(body())
    return write_cli_config(tmp_path, db_url)


def test_three_verdicts_three_exit_codes(db_url, tmp_path):
    """`exposure assess` exits 0 / 10 / 20 for nothing / Tier 1 only / sensitive."""
    cfg = _seeded(db_url, tmp_path)
    runner = CliRunner()
    cases = {
        0: DISCLOSURE.replace("models: [big-1]", "models: [never-used]"),
        10: DISCLOSURE.replace("providers: [examplecloud]", "upstreams: [onprem-1]"),
        20: DISCLOSURE,
    }
    for code, source in cases.items():
        path = tmp_path / f"d{code}.yaml"
        path.write_text(source)
        res = runner.invoke(main, ["exposure", "assess", str(path), "--config", str(cfg),
                                   "--format", "json"])  # fmt: skip
        assert res.exit_code == code, res.output
        doc = json.loads(res.stdout)
        assert doc["exit_code"] == code
        assert doc["verdict"] == {0: "nothing_matched", 10: "tier1_only",
                                  20: "sensitive_data_may_be_exposed"}[code]  # fmt: skip
    md = runner.invoke(main, ["exposure", "assess", str(tmp_path / "d20.yaml"), "--config", str(cfg)])
    assert md.exit_code == 20 and "POLICY BREACH" in md.stdout and "| 2 | 2 |" in md.stdout


def test_assess_rejects_bad_file_with_line(sqlite_db, tmp_path):
    """A broken disclosure makes `exposure assess` fail (exit 1) naming the line."""
    cfg = write_cli_config(tmp_path, sqlite_db)
    path = tmp_path / "bad.yaml"
    path.write_text(DISCLOSURE.replace("min_prompt_tokens: 1000", "min_prompt_tokens: many"))
    res = CliRunner().invoke(main, ["exposure", "assess", str(path), "--config", str(cfg)])
    assert res.exit_code == 1 and "line 9" in res.output


def test_match_document_exact_only(db_url, tmp_path):
    """--document finds the request that sent it whole and the one that sent it as one message."""
    doc = "Quarterly numbers for Project Nightjar:\nrevenue 12.4M, churn 3%."
    other = "Quarterly numbers for Project Nightjar:\nrevenue 12.4M, churn 4%."
    fp = lambda s: fingerprint(FP_KEY, normalize_for_fingerprint(s))
    whole = request(fingerprint=fp(doc), segments=(fp(doc),))
    part = request(fingerprint=fp(doc + " hello"), segments=(fp("system prompt"), fp(doc)))
    unrelated = request(fingerprint=fp(other), segments=(fp(other),))

    async def body():
        store = await open_store(make_settings(db_url, tmp_path))
        try:
            for rec in (whole, part, unrelated):
                await store.record_request(rec)
            async with store.engine.connect() as conn:
                indexed = (await conn.execute(text("SELECT fp_key FROM audit_segments"))).scalars().all()
        finally:
            await store.close()
        # Only the multi-message prompt needs index rows: a one-message prompt's segment is its
        # whole-prompt fingerprint, which is matched directly.
        assert sorted(indexed) == sorted([segment_key(fp("system prompt")), segment_key(fp(doc))])

    asyncio.run(body())
    cfg = write_cli_config(tmp_path, db_url)
    runner = CliRunner()

    def match(text: str) -> dict[str, str]:
        path = tmp_path / "doc.txt"
        path.write_text(text)
        res = runner.invoke(main, ["exposure", "match", "--document", str(path), "--config", str(cfg),
                                   "--format", "json"])  # fmt: skip
        assert res.exit_code == 0, res.output
        return {r["request_id"]: r["matched_on"] for r in json.loads(res.stdout)}

    assert match(doc) == {whole.request_id: "whole_prompt", part.request_id: "segment"}
    # Re-wrapped, with a zero-width space: the same document after normalisation.
    assert match(doc.replace("\n", "  \n ").replace("Nightjar", "Night\u200bjar")) == {
        whole.request_id: "whole_prompt", part.request_id: "segment"}  # fmt: skip
    assert match(doc.replace("3%", "3.0%")) == {}
    assert match(other) == {unrelated.request_id: "whole_prompt"}


def test_query_filters_and_formats(db_url, tmp_path):
    """`exposure query` filters like the assessment and writes parseable CSV, JSON and Markdown."""
    cfg = _seeded(db_url, tmp_path)
    runner = CliRunner()
    base = ["exposure", "query", "--config", str(cfg), "--provider", "examplecloud", "--model",
            "big-1", "--since", "2026-08-27T00:00:00Z", "--until", "2026-09-09T23:59:59Z",
            "--min-tokens", "1000"]  # fmt: skip
    res = runner.invoke(main, base + ["--format", "csv"])
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    assert len(rows) == 7 and {r["status"] for r in rows} == {"ok"}
    assert [r["created_at"] for r in rows] == sorted(r["created_at"] for r in rows)
    res = runner.invoke(main, base + ["--format", "json", "--tier", "2", "--tier", "3"])
    assert sorted(r["tenant"] for r in json.loads(res.stdout)) == ["beta", "beta", "gamma"]
    res = runner.invoke(main, base + ["--format", "markdown", "--tenant", "acme"])
    assert len([line for line in res.stdout.splitlines() if line.startswith("| ")]) == 1 + 4
    res = runner.invoke(main, base + ["--count", "--include-refused"])
    assert res.stdout.strip() == "8"
    res = runner.invoke(main, ["exposure", "query", "--config", str(cfg), "--status", "refused",
                               "--include-refused", "--format", "json"])  # fmt: skip
    assert [r["forwarded"] for r in json.loads(res.stdout)] == [False]
    res = runner.invoke(main, base + ["--since", "2026-08-27T00:00:00"])
    assert res.exit_code == 2 and "time zone" in res.output


def test_query_streams_in_order(db_url, tmp_path):
    """stream_rows yields rows in time order and count_rows agrees with it."""

    async def body():
        store = await open_store(make_settings(db_url, tmp_path))
        try:
            await _seed(store)
            flt = ExposureFilter(start=START, end=END, models=("big-1",))
            rows = [r async for r in stream_rows(store.engine, flt)]
            assert len(rows) == await count_rows(store.engine, flt) == 10
            assert [r.created_at for r in rows] == sorted(r.created_at for r in rows)
            pending = ExposureFilter(statuses=("pending",))
            assert await count_rows(store.engine, pending) == 0
        finally:
            await store.close()

    asyncio.run(body())


def test_query_progress_goes_to_stderr(sqlite_db, tmp_path):
    """--progress reports counts on stderr and leaves stdout a clean CSV."""
    cfg = _seeded(sqlite_db, tmp_path)
    res = CliRunner().invoke(main, ["exposure", "query", "--config", str(cfg), "--format", "csv",
                                    "--progress"])  # fmt: skip
    assert res.exit_code == 0
    assert "13 rows…" in res.stderr and "13 matching request(s)" in res.stderr
    assert len(list(csv.reader(io.StringIO(res.stdout)))) == 1 + 13


def test_a_write_ahead_row_marked_not_forwarded_is_no_exposure(db_url, tmp_path):
    """A write-ahead row that committed after its client was told 503 carries a not_forwarded
    outcome (the gateway writes it): the assessment and the exposure query do not count it."""
    from audit.types import NOT_FORWARDED

    async def body():
        store = await open_store(make_settings(db_url, tmp_path))
        try:
            await _seed(store)
            before = await assess(store.engine, parse_disclosure(DISCLOSURE))
            late = request(
                request_id="late-1",
                at=_at(29),
                tenant="delta",
                key_id="k7",
                tier=3,
                tokens=4000,
                provider="examplecloud",
                upstream="ec-shared",
                model="big-1",
            )
            await store.record_request(late)
            with_late = await assess(store.engine, parse_disclosure(DISCLOSURE))
            await store.record_outcome(outcome("late-1", NOT_FORWARDED, 503))
            after = await assess(store.engine, parse_disclosure(DISCLOSURE))
            counted = await count_rows(store.engine, ExposureFilter(tenants=("delta",)))
            return before.total, with_late.total, after.total, counted
        finally:
            await store.close()

    before, with_late, after, counted = asyncio.run(body())
    assert with_late == before + 1  # without its outcome it is counted: the safe direction
    assert after == before and counted == 0
