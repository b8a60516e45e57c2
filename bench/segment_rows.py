"""What an audit transaction costs the SQLite writer's thread, by the segment index's key (issue 15).

    .venv/bin/python bench/segment_rows.py                 # 5 and 20 segments a request, 2 rounds
    .venv/bin/python bench/segment_rows.py --segments 0 5 --transactions 3000

Every request writes its row, its outcome and one ``audit_segments`` row per distinct message
(``exposure match --document`` finds a document sent as one message among others). This times
``SqliteBatchWriter._write`` (the whole transaction: chain links, inserts, head, COMMIT with its
fsync) on a file in ``build/``, four requests and the four outcomes before them a transaction, as
the gateway batches them at c=8, with the index keyed two ways, alternated: ``text``, the 64 hex
characters of migrations before 0007 (a rowid table with its primary-key index), and ``key``, the
fingerprint's first 60 bits (``audit.batch.segment_key``; the table is its primary key). Prints
the thread's CPU (user and system) per request.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sqlite3
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sqlalchemy import create_engine  # noqa: E402 -- after the sys.path line above

import audit.sqlite_batch as sqlite_batch  # noqa: E402 -- after the sys.path line above
from audit.batch import LinkedBatch, PendingRow, link_batch  # noqa: E402 -- after the sys.path line above
from audit.chain import ChainHasher  # noqa: E402 -- after the sys.path line above
from audit.db import configure_sqlite  # noqa: E402 -- after the sys.path line above
from audit.models import Base  # noqa: E402 -- after the sys.path line above
from audit.records import outcome_row, request_row  # noqa: E402 -- after the sys.path line above
from audit.types import Outcome, RequestRecord  # noqa: E402 -- after the sys.path line above

PER_TXN = 4


def _text_keyed(head_seq: int, head_hash: bytes, batch: list[list[PendingRow]], hasher: ChainHasher) -> LinkedBatch:
    """``link_batch`` with the index rows of migrations before 0007: (fingerprint, request_seq)."""
    linked = link_batch(head_seq, head_hash, batch, hasher)
    rows = [(fp, seq) for item, seqs in zip(batch, linked.seqs, strict=True)
            for row, seq in zip(item, seqs, strict=True) for fp in row.segments]  # fmt: skip
    if rows:
        linked.rows["audit_segments"] = rows
    return linked


def _request(segments: int) -> tuple[str, PendingRow]:
    rid = "req_" + secrets.token_hex(16)
    rec = RequestRecord(request_id=rid, created_at=datetime.now(UTC), tenant="bench", key_id="k_0123456789",
                        endpoint="chat", client_model="bench", upstream="mock", upstream_kind="shared",
                        provider_model="mock-model", prompt_chars=1000, prompt_tokens=250, tier=1,
                        fingerprint=secrets.token_hex(32),
                        segment_fingerprints=tuple(secrets.token_hex(32) for _ in range(segments)), provider="openai")  # fmt: skip
    return rid, request_row(rec, forwarded=True)


def _outcome(rid: str) -> PendingRow:
    out = Outcome(request_id=rid, status="ok", http_status=200, upstream_status=200, usage_prompt_tokens=250,
                  usage_completion_tokens=5, latency_ms=3.2)  # fmt: skip
    return outcome_row(out, time.time_ns() // 1000)


def run(kind: str, segments: int, transactions: int, where: Path) -> tuple[float, float]:
    where.mkdir(parents=True, exist_ok=True)
    path = where / f"{kind}-{segments}.db"
    Base.metadata.create_all(create_engine(f"sqlite:///{path}"))
    conn = sqlite3.connect(path)
    configure_sqlite(conn, "FULL")
    if kind == "text":
        conn.execute("DROP TABLE audit_segments")
        # the table of migrations before 0007, under today's column name (the INSERT's)
        conn.execute("CREATE TABLE audit_segments (fp_key VARCHAR(64) NOT NULL, request_seq BIGINT NOT NULL, "
                     "PRIMARY KEY (fp_key, request_seq))")  # fmt: skip
        conn.execute("CREATE INDEX ix_audit_segments_request_seq ON audit_segments (request_seq)")
    conn.execute("INSERT INTO audit_chain_head (id, seq, hash) VALUES (1, 0, ?)", (bytes(32),))
    conn.commit()
    conn.close()
    sqlite_batch.link_batch = _text_keyed if kind == "text" else link_batch
    writer = sqlite_batch.SqliteBatchWriter(str(path), ChainHasher(b"k" * 32))
    answered: list[str] = []
    batches = []
    for _ in range(transactions + 100):
        batch = [[_outcome(rid)] for rid in answered[-PER_TXN:]]
        made = [_request(segments) for _ in range(PER_TXN)]
        batch = [[row] for _, row in made] + batch
        answered += [rid for rid, _ in made]
        batches.append(batch)
    for batch in batches[:100]:  # the connection, the first pages
        writer._write(batch)
    t0, c0 = os.times(), time.thread_time()
    for batch in batches[100:]:
        writer._write(batch)
    t1, c1 = os.times(), time.thread_time()
    writer.close()
    requests = transactions * PER_TXN
    return (c1 - c0) / requests * 1e3, (t1.system - t0.system) / requests * 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--segments", type=int, nargs="+", default=[5, 20])
    ap.add_argument("--transactions", type=int, default=3000)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    (ROOT / "build").mkdir(exist_ok=True)
    print("| segments a request | index key | round | writer CPU per request | of it system |")
    print("|---:|---|---:|---:|---:|")
    with tempfile.TemporaryDirectory(dir=ROOT / "build") as tmp:
        for segments in args.segments:
            for r in range(args.rounds):
                for kind in ("text", "key") if r % 2 == 0 else ("key", "text"):
                    cpu, system = run(kind, segments, args.transactions, Path(tmp) / f"r{r}")
                    print(f"| {segments} | {kind} | {r} | {cpu:.3f} ms | {system:.3f} ms |", flush=True)


if __name__ == "__main__":
    main()
