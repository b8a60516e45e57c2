"""Audit log benchmark: write rate, exposure query and assessment over 10M rows, verify rate.

    .venv/bin/python bench/audit.py                      # everything, SQLite and PostgreSQL
    .venv/bin/python bench/audit.py --rows 1000000 --backends sqlite

1. Write rate: concurrent ``record_request`` callers (each released only after COMMIT), group
   commit (``max_batch=1000``) against the baseline of one transaction per record
   (``max_batch=1``), measured in the same run.
2. Exposure query and a 13-day assessment over ``--rows`` synthetic rows spread over 180 days.
   The rows are generated inside the database (``generate_series`` / a recursive CTE: no Python
   round trip per row) with the indexes dropped, then the migration's indexes are rebuilt. Their
   ``hash`` column is a placeholder: these rows exist to be searched, not verified. The plans are
   printed to show which index each query uses.
3. Verify rate over a real chain written by the store.
4. ``--part c1``: the request path's writes at concurrency 1 (a write-ahead row, then its outcome
   lazily, as ``gateway/pipeline.py`` writes them) over a log that already holds ``--c1-rows``
   requests written by the store, once with the gateway's request ids
   (``gateway.context.new_request_id``: time first) and once with random ones (the ids before
   2026-12-07), alternating in one run: CPU per request of this process (the writer thread too).
   Each request carries six segment fingerprints as an agent's turn does: a system prompt of 20,
   four earlier turns of 5,000, its own new last message.

PostgreSQL: a throw-away database on $TIERGATE_BENCH_PG (default the test server), dropped after.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import random
import statistics
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import asyncpg
from sqlalchemy import text

from audit import AuditSettings, AuditStore, RequestRecord
from audit.types import Outcome
from gateway.context import new_request_id
from audit.assessment import assess
from audit.disclosures import parse_disclosure
from audit.queries import ExposureFilter, count_rows, rows_select, stream_rows
from audit.report import write_rows
from migrations import upgrade

PG_ADMIN = os.environ.get("TIERGATE_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/test")
FP_KEY = b"bench-fingerprint-key"
CP_KEY = b"bench-checkpoint-key"
DAYS = 180
BASE = datetime(2026, 3, 1, tzinfo=UTC)
BASE_US = int(BASE.timestamp()) * 1_000_000
REQUEST_INDEXES = {
    "ix_audit_requests_created": "created_us",
    "ix_audit_requests_model_created": "provider_model, created_us",
    "ix_audit_requests_upstream_created": "upstream, created_us",
    "ix_audit_requests_provider_created": "provider, created_us",
    "ix_audit_requests_tenant_created": "tenant, created_us",
    "ix_audit_requests_fingerprint": "fingerprint",
}


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


class Backend:
    def __init__(self, name: str, workdir: Path) -> None:
        self.name = name
        self.workdir = workdir
        self.pg_name: str | None = None

    async def fresh_url(self) -> str:
        if self.name == "sqlite":
            path = self.workdir / f"bench-{uuid.uuid4().hex[:8]}.db"
            return f"sqlite+aiosqlite:///{path}"
        await self.drop()
        self.pg_name = f"tg_bench_{uuid.uuid4().hex[:10]}"
        conn = await asyncpg.connect(PG_ADMIN)
        try:
            await conn.execute(f'CREATE DATABASE "{self.pg_name}"')
        finally:
            await conn.close()
        base = PG_ADMIN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+asyncpg://", 1)
        return f"{base}/{self.pg_name}"

    async def kept_url(self, keep: Path, rows: int) -> tuple[str, bool]:
        """A database kept between runs (``--keep``) for the 10M-row queries: (url, needs filling).
        Filling takes many minutes; the queries are what is measured."""
        if self.name == "sqlite":
            path = keep / f"bench-{rows}.db"
            return f"sqlite+aiosqlite:///{path}", not path.exists()
        name = f"tg_bench_keep_{rows}"
        conn = await asyncpg.connect(PG_ADMIN)
        try:
            exists = await conn.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", name)
            if not exists:
                await conn.execute(f'CREATE DATABASE "{name}"')
        finally:
            await conn.close()
        base = PG_ADMIN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+asyncpg://", 1)
        return f"{base}/{name}", not exists

    async def drop(self) -> None:
        if self.pg_name:
            conn = await asyncpg.connect(PG_ADMIN)
            try:
                await conn.execute(f'DROP DATABASE IF EXISTS "{self.pg_name}" WITH (FORCE)')
            finally:
                await conn.close()
            self.pg_name = None


async def open_store(url: str, workdir: Path, **kw: object) -> AuditStore:
    # One checkpoint folder per database: checkpoints pin one chain each.
    folder = workdir / f"checkpoints-{uuid.uuid5(uuid.NAMESPACE_URL, url).hex[:12]}"
    settings = AuditSettings(url=url, checkpoint_dir=str(folder), **kw)
    store = await AuditStore.open(settings, fingerprint_key=FP_KEY, checkpoint_key=CP_KEY)
    await upgrade(store)
    return store


def record(i: int) -> RequestRecord:
    return RequestRecord(
        request_id=uuid.uuid4().hex, created_at=datetime.now(UTC), tenant=f"tenant-{i % 50}",
        key_id=f"key-{i % 200}", endpoint="chat", client_model="gpt-x", upstream="shared-1",
        upstream_kind="shared", provider_model="model-1", prompt_chars=4000, prompt_tokens=1000,
        tier=1 + (i % 3 == 0), findings={"EMAIL_ADDRESS": 1} if i % 3 == 0 else {},
        stripped=i % 3 == 0, fingerprint=f"{i:064x}", segment_fingerprints=(f"{i:064x}",),
        provider="vendor-a",
    )  # fmt: skip


async def write_rate(backend: Backend, workdir: Path, max_batch: int, total: int,
                     concurrency: int) -> tuple[float, float]:  # fmt: skip
    """(records/s, CPU microseconds per record in this process: the gateway's share)."""
    url = await backend.fresh_url()
    store = await open_store(url, workdir, max_batch=max_batch, write_timeout_s=600)
    try:
        for i in range(50):  # warm the pool and SQLAlchemy's statement cache
            await store.record_request(record(10**12 + i))
        queue = iter(range(total))

        async def worker() -> None:
            for i in queue:
                await store.record_request(record(i))

        t0, c0 = time.perf_counter(), time.process_time()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    finally:
        await store.close()
        await backend.drop()
    return total / elapsed, cpu / total * 1e6


SQLITE_FILL = """
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < :n)
INSERT INTO audit_requests (seq, hash, request_id, created_us, tenant, key_id, endpoint,
  client_model, upstream, upstream_kind, provider, provider_model, prompt_chars, prompt_tokens,
  tier, findings, stripped, stream, forwarded, fingerprint, segment_fps)
SELECT x, zeroblob(32), 'r' || x, :base + x * :step, 'tenant-' || ((x * 31) % 200),
  'key-' || ((x * 31) % 200) || '-' || (x % 5), 'chat', 'model-' || ((x * 7) % 20),
  'upstream-' || ((x * 7) % 20 % 8), CASE WHEN x % 8 = 0 THEN 'onprem' ELSE 'shared' END,
  'vendor-' || ((x * 7) % 20 % 5), 'model-' || ((x * 7) % 20),
  ((x * 2654435761) % 200000) * 4, (x * 2654435761) % 200000,
  CASE WHEN x % 20 = 0 THEN 3 WHEN x % 7 = 0 THEN 2 ELSE 1 END,
  CASE WHEN x % 20 = 0 THEN '{"CUSTOMER_ID"\\:1}' WHEN x % 7 = 0 THEN '{"EMAIL_ADDRESS"\\:2}'
       ELSE '{}' END,
  x % 7 = 0, x % 3 = 0, 1, printf('%064x', x), printf('%064x', x)
FROM c
"""

PG_FILL = """
INSERT INTO audit_requests (seq, hash, request_id, created_us, tenant, key_id, endpoint,
  client_model, upstream, upstream_kind, provider, provider_model, prompt_chars, prompt_tokens,
  tier, findings, stripped, stream, forwarded, fingerprint, segment_fps)
SELECT x, '\\x00'::bytea, 'r' || x, CAST(:base AS bigint) + x * CAST(:step AS bigint), 'tenant-' || ((x * 31) % 200),
  'key-' || ((x * 31) % 200) || '-' || (x % 5), 'chat', 'model-' || ((x * 7) % 20),
  'upstream-' || ((x * 7) % 20 % 8), CASE WHEN x % 8 = 0 THEN 'onprem' ELSE 'shared' END,
  'vendor-' || ((x * 7) % 20 % 5), 'model-' || ((x * 7) % 20),
  ((x * 2654435761) % 200000) * 4, (x * 2654435761) % 200000,
  CASE WHEN x % 20 = 0 THEN 3 WHEN x % 7 = 0 THEN 2 ELSE 1 END,
  CASE WHEN x % 20 = 0 THEN '{"CUSTOMER_ID"\\:1}' WHEN x % 7 = 0 THEN '{"EMAIL_ADDRESS"\\:2}'
       ELSE '{}' END,
  x % 7 = 0, x % 3 = 0, true, lpad(to_hex(x), 64, '0'), lpad(to_hex(x), 64, '0')
FROM generate_series(CAST(1 AS bigint), CAST(:n AS bigint)) AS x
"""


async def fill(store: AuditStore, rows: int) -> float:
    sqlite = store.engine.url.get_backend_name() == "sqlite"
    step = DAYS * 86_400_000_000 // rows
    t0 = time.perf_counter()
    async with store.engine.begin() as conn:
        for name in REQUEST_INDEXES:
            await conn.execute(text(f"DROP INDEX {name}"))
        if not sqlite:
            await conn.execute(text("ALTER TABLE audit_requests DROP CONSTRAINT uq_audit_requests_request_id"))
            await conn.execute(text("SET LOCAL synchronous_commit = off"))  # bulk load only
        await conn.execute(text(PG_FILL if not sqlite else SQLITE_FILL),
                           {"n": rows, "base": BASE_US, "step": step})  # fmt: skip
        log(f"  {rows} rows inserted in {time.perf_counter() - t0:.0f}s; building indexes")
        for name, cols in REQUEST_INDEXES.items():
            await conn.execute(text(f"CREATE INDEX {name} ON audit_requests ({cols})"))
        if not sqlite:
            await conn.execute(text("ALTER TABLE audit_requests ADD CONSTRAINT "
                                    "uq_audit_requests_request_id UNIQUE (request_id)"))  # fmt: skip
    async with store.engine.begin() as conn:
        await conn.execute(text("ANALYZE" if sqlite else "ANALYZE audit_requests"))
    return time.perf_counter() - t0


async def plan(store: AuditStore, flt: ExposureFilter) -> str:
    sqlite = store.engine.url.get_backend_name() == "sqlite"
    stmt = rows_select(flt)
    compiled = stmt.compile(store.engine.sync_engine, compile_kwargs={"literal_binds": True})
    async with store.engine.connect() as conn:
        rows = (await conn.execute(text(("EXPLAIN QUERY PLAN " if sqlite else "EXPLAIN ") + str(compiled)))).all()
    return " / ".join(str(r[-1]) for r in rows)[:400]


async def timed(coro_fn, repeat: int = 3) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = await coro_fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


async def big_queries(backend: Backend, workdir: Path, rows: int, keep: Path | None = None,
                      fill_only: bool = False) -> dict[str, object]:  # fmt: skip
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        url, needs_fill = await backend.kept_url(keep, rows)
    else:
        url, needs_fill = await backend.fresh_url(), True
    store = await open_store(url, workdir)
    out: dict[str, object] = {}
    try:
        if needs_fill:
            log(f"{backend.name}: generating {rows} rows")
            out["fill_s"] = await fill(store, rows)
            log(f"{backend.name}: filled in {out['fill_s']:.0f}s")
        else:
            log(f"{backend.name}: reusing the {rows}-row database kept in {keep}")
        if fill_only:
            return out
        start = BASE + timedelta(days=100)
        end = start + timedelta(days=13) - timedelta(microseconds=1)
        incident = ExposureFilter(start=start, end=end, providers=("vendor-2",),
                                  models=("model-2",), min_prompt_tokens=150_000)  # fmt: skip

        async def query_csv() -> int:
            sink = io.StringIO()
            return await write_rows(stream_rows(store.engine, incident), "csv", sink)

        out["query_s"], out["query_rows"] = await timed(query_csv)
        out["query_plan"] = await plan(store, incident)
        out["count_s"], out["count"] = await timed(lambda: count_rows(store.engine, incident))
        spec = parse_disclosure(
            f"title: bench\nreference: B-1\nproviders: [vendor-2]\nwindow:\n"
            f"  start: {start.isoformat()}\n  end: {end.isoformat()}\n"
        )
        out["assess_s"], a = await timed(lambda: assess(store.engine, spec), repeat=2)
        out["assess_rows"] = a.total  # type: ignore[attr-defined]  # timed() returns the awaited value untyped
        wide = spec.model_copy(update={"providers": (), "upstreams": tuple(f"upstream-{i}" for i in range(8))})
        out["assess_all_s"], a2 = await timed(lambda: assess(store.engine, wide), repeat=1)
        out["assess_all_rows"] = a2.total  # type: ignore[attr-defined]  # timed() returns the awaited value untyped
    finally:
        await store.close()
        await backend.drop()
    return out


async def verify_rate(backend: Backend, workdir: Path, total: int) -> tuple[float, float]:
    url = await backend.fresh_url()
    store = await open_store(url, workdir)
    try:
        queue = iter(range(total))

        async def worker() -> None:
            for i in queue:
                await store.record_request(record(i))

        await asyncio.gather(*(worker() for _ in range(256)))
        await store.write_checkpoint()
        c0 = time.process_time()
        elapsed, report = await timed(lambda: store.verify(), repeat=1)
        cpu = time.process_time() - c0
        assert report.ok, report.problems  # type: ignore[attr-defined]  # timed() returns the awaited value untyped
    finally:
        await store.close()
        await backend.drop()
    return total / elapsed, total / cpu


def random_id() -> str:
    """A request id as every tree before 2026-12-07 made one: 32 random hex digits."""
    return "req_" + os.urandom(16).hex()


# fingerprints an agent sends again and again: 20 system prompts, 5,000 earlier turns. Random hex
# as the HMACs are (a segment row's key is a fingerprint's first 60 bits: small numbers written
# as hex would all share key 0 and one leaf)
_SEEN = random.Random(11)
_SYSTEM_FPS = [_SEEN.randbytes(32).hex() for _ in range(20)]
_TURN_FPS = [_SEEN.randbytes(32).hex() for _ in range(5000)]


def agent_record(rng: random.Random, make_id: Callable[[], str]) -> RequestRecord:
    """A request as an agent's turn makes one: a system prompt and four earlier turns seen
    before, a new last message."""
    segments = (rng.choice(_SYSTEM_FPS), *(rng.choice(_TURN_FPS) for _ in range(4)), os.urandom(32).hex())
    return RequestRecord(
        request_id=make_id(), created_at=datetime.now(UTC), tenant=f"tenant-{rng.randrange(50)}",
        key_id=f"key-{rng.randrange(200)}", endpoint="chat", client_model="gpt-x", upstream="shared-1",
        upstream_kind="shared", provider_model="model-1", prompt_chars=4000, prompt_tokens=1000, tier=1,
        fingerprint=os.urandom(32).hex(), segment_fingerprints=segments, provider="vendor-a",
    )  # fmt: skip


async def fill_agent_log(store: AuditStore, rows: int, rng: random.Random, make_id: Callable[[], str]) -> None:
    """``rows`` requests of :func:`agent_record` and their outcomes, through the store in batches
    of 1,000 (its indexes as it writes them, not rows built in the database)."""
    for start in range(0, rows, 1000):
        batch = [agent_record(rng, make_id) for _ in range(min(1000, rows - start))]
        await asyncio.gather(*(store.record_request(r) for r in batch))
        await asyncio.gather(*(store.record_outcome(_ok(r.request_id)) for r in batch))


async def c1_writes(backend: Backend, workdir: Path, rows: int, n: int, make_id: Callable[[], str]) -> float:
    """CPU microseconds per request of the request path's writes at concurrency 1, over a log of
    ``rows`` requests (each with its outcome) written by the store with ``make_id``'s ids."""
    url = await backend.fresh_url()
    store = await open_store(url, workdir, write_timeout_s=600)
    rng = random.Random(7)
    try:
        await fill_agent_log(store, rows, rng, make_id)
        pending: list[asyncio.Future[int]] = []

        async def one() -> None:
            rec = agent_record(rng, make_id)
            await store.record_request(rec)
            pending.append(asyncio.ensure_future(store.record_outcome(_ok(rec.request_id), lazy=True)))

        for _ in range(200):
            await one()
        c0 = time.process_time()
        for _ in range(n):
            await one()
        cpu = time.process_time() - c0
        await asyncio.gather(*pending)
    finally:
        await store.close()
        await backend.drop()
    return cpu / n * 1e6


def _ok(request_id: str) -> Outcome:
    return Outcome(request_id=request_id, status="ok", http_status=200, latency_ms=1.0)


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--backends", default="sqlite,postgres")
    ap.add_argument("--writes", type=int, default=20_000)
    ap.add_argument("--unbatched-writes", type=int, default=1_000)
    ap.add_argument("--verify-rows", type=int, default=50_000)
    ap.add_argument("--concurrency", type=int, default=1024, help="concurrent writers: a gateway's in-flight requests")
    ap.add_argument("--skip", default="", help="comma list of: write,query,verify,c1")
    ap.add_argument("--part", default=None, help="only this part: write, query, verify or c1")
    ap.add_argument("--c1-rows", type=int, default=200_000, help="requests in the log before the c1 part")
    ap.add_argument("--c1-writes", type=int, default=3_000)
    ap.add_argument("--c1-rounds", type=int, default=2)
    ap.add_argument(
        "--keep",
        type=Path,
        default=None,
        help="keep the 10M-row databases here (SQLite file; PostgreSQL database "
        "tg_bench_keep_N) and reuse them on the next run instead of refilling",
    )
    ap.add_argument("--fill-only", action="store_true", help="with --keep: fill, measure nothing")
    args = ap.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    if args.part:
        skip = {"write", "query", "verify", "c1"} - {args.part}
    workdir = Path(tempfile.mkdtemp(prefix="tg-bench-"))
    try:
        for name in args.backends.split(","):
            backend = Backend(name, workdir)
            if "write" not in skip:
                unbatched, ucpu = await write_rate(backend, workdir, 1, args.unbatched_writes,
                                                   args.concurrency)  # fmt: skip
                batched, bcpu = await write_rate(backend, workdir, 1000, args.writes, args.concurrency)
                log(f"{name}: write rate, {args.concurrency} concurrent callers each released "
                    f"only after COMMIT: group commit {batched:,.0f}/s ({bcpu:.0f} us CPU/record, "
                    f"CPU-bound ceiling {1e6 / bcpu:,.0f}/s on one core); one transaction per record "
                    f"{unbatched:,.0f}/s ({ucpu:.0f} us CPU/record); ratio {batched / unbatched:.1f}x")  # fmt: skip
            if "c1" not in skip:
                modes = {"time-ordered ids": new_request_id, "random ids": random_id}
                cpu: dict[str, list[float]] = {m: [] for m in modes}
                for k in range(args.c1_rounds):
                    for mode in modes if k % 2 == 0 else reversed(modes):
                        cpu[mode].append(await c1_writes(backend, workdir, args.c1_rows, args.c1_writes, modes[mode]))
                        log(
                            f"{name}: c=1 writes over {args.c1_rows:,} requests, {mode}: {cpu[mode][-1]:.0f} us CPU/request"
                        )
                cells = {m: f"{statistics.median(v):.0f} ({min(v):.0f} – {max(v):.0f})" for m, v in cpu.items()}
                ratio = statistics.median(cpu["random ids"]) / statistics.median(cpu["time-ordered ids"])
                log(
                    f"{name}: c=1 writes over {args.c1_rows:,} requests, us CPU/request: "
                    + ", ".join(f"{m} {c}" for m, c in cells.items())
                    + f"; random / time-ordered {ratio:.2f}x"
                )
            if "verify" not in skip:
                rate, cpu_rate = await verify_rate(backend, workdir, args.verify_rows)
                log(f"{name}: verify {rate:,.0f} records/s over {args.verify_rows} records "
                    f"({cpu_rate:,.0f} records per CPU-second)")  # fmt: skip
            if "query" not in skip:
                if args.fill_only:
                    await big_queries(backend, workdir, args.rows, args.keep, fill_only=True)
                    continue
                r = await big_queries(backend, workdir, args.rows, args.keep)
                log(f"{name}: over {args.rows:,} rows: query (CSV, {r['query_rows']} rows) "
                    f"{r['query_s']:.3f}s, count {r['count_s']:.3f}s; 13-day assessment "
                    f"({r['assess_rows']} rows) {r['assess_s']:.2f}s; all-vendor 13-day "
                    f"assessment ({r['assess_all_rows']} rows) {r['assess_all_s']:.2f}s")  # fmt: skip
                log(f"{name}: query plan: {r['query_plan']}")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
