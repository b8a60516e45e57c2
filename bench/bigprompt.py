"""Where a big prompt's time goes: one 1 MB / 3 MB chat through the gateway, stage by stage.

    .venv/bin/python bench/bigprompt.py                 # stage table, 1 MB, 3 MB, 1 MB + ids, 3 MB + ids
    .venv/bin/python bench/bigprompt.py --profile 3     # and cProfile of the gateway process, 3 MB
    .venv/bin/python bench/bigprompt.py --source /tmp/wt-big   # the stages of another tree

Everything runs in this process on the real components: the app of ``create_app`` with its real
SQLite audit store and classification worker pool, driven through its ASGI entry with the body
delivered in 64 KiB messages (what uvicorn hands over), a mock upstream in a process of its own.
The stage rows call the same functions the request path calls, one at a time, on the same body:
CPU milliseconds of this process (``process_time``) or, for the worker round trip, wall time;
the median of ``--n`` runs with (min – max). The worker's own stages are timed here too (the
same code, the same classifier): the row "worker round trip" less the worker's stages is what
moving the job and its answer between the processes costs.
"""

from __future__ import annotations

import argparse
import asyncio
import copyreg
import cProfile
import gc
import io
import os
import pickle
import pstats
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _timed(fn: Callable[[], Any], n: int, clock: Callable[[], float] = time.process_time) -> tuple[list[float], Any]:
    out: list[float] = []
    result = None
    for _ in range(n):
        t0 = clock()
        result = fn()
        out.append((clock() - t0) * 1000)
    return out, result


def _cell(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} ({min(values):.2f} – {max(values):.2f})"


async def _asgi_call(app: Any, key: str, body: bytes) -> tuple[int, bytes]:
    """One POST through the app's ASGI entry, the body in 64 KiB messages."""
    chunks = [body[i : i + 65536] for i in range(0, len(body), 65536)]
    queue = [{"type": "http.request", "body": c, "more_body": i < len(chunks) - 1} for i, c in enumerate(chunks)]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if queue:
            return queue.pop(0)
        await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
        "path": "/v1/chat/completions", "raw_path": b"/v1/chat/completions", "query_string": b"",
        "root_path": "", "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8000),
        "headers": [(b"content-type", b"application/json"), (b"authorization", f"Bearer {key}".encode()),
                    (b"content-length", str(len(body)).encode())],
    }  # fmt: skip
    await app(scope, receive, send)
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    return status, b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


def phases(app: Any, key: str, bodies: list[bytes], loop: Any) -> list[tuple[str, list[float]]]:
    """Wall milliseconds of the request path's phases, by wrapping the pipeline's own steps."""
    from gateway import upstream as upstream_mod

    pipeline = app.state.gateway.pipeline
    spent: dict[str, float] = {}

    def wrap(owner: Any, name: str, label: str) -> Callable[[], None]:
        original = getattr(owner, name)

        async def timed(*a: Any, **k: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return await original(*a, **k)
            finally:
                spent[label] = spent.get(label, 0.0) + (time.perf_counter() - t0) * 1000

        setattr(owner, name, timed)
        if isinstance(owner, type):
            return lambda: setattr(owner, name, original)
        return lambda: delattr(owner, name)

    undo = [
        wrap(pipeline.classify, "run", "classify (worker round trip)"),
        wrap(pipeline, "_outbound", "forwarded body (build_outbound, thread)"),
        wrap(pipeline.store, "record_request", "write-ahead audit row (commit)"),
        wrap(pipeline.clients["mock"], "open", "upstream send (until its head)"),
        wrap(upstream_mod.UpstreamResponse, "aread", "upstream answer read"),
    ]
    rows: dict[str, list[float]] = {}
    started: list[float] = []

    def on_gc(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(time.perf_counter())
        elif started:
            label = f"of which garbage collection, generation {info['generation']} (gateway)"
            spent[label] = spent.get(label, 0.0) + (time.perf_counter() - started.pop()) * 1000

    gc.callbacks.append(on_gc)
    try:
        for body in bodies:
            spent.clear()
            t0 = time.perf_counter()
            status, _ = loop.run_until_complete(_asgi_call(app, key, body))
            whole = (time.perf_counter() - t0) * 1000
            assert status == 200, status
            for label, ms in spent.items():
                rows.setdefault(label, []).append(ms)
            rows.setdefault("rest (auth, read, relay, reply)", []).append(
                whole - sum(v for k, v in spent.items() if not k.startswith("of which"))
            )
            rows.setdefault("whole, wall", []).append(whole)
    finally:
        gc.callbacks.remove(on_gc)
        for u in undo:
            u()
    return list(rows.items())


def stages(app: Any, key: str, body: bytes, n: int) -> list[tuple[str, list[float]]]:
    """The request path's stages one by one on ``body`` (see the module docstring)."""
    from gateway import classify as classify_mod
    from gateway.outbound import _count, _encode, build_outbound
    from gateway.parsing import parse_body
    from tiers import apply_content, extract_content
    from tiers.types import Finding

    state = app.state.gateway
    step = state.pipeline.classify
    clf = step.classifier
    pipeline = state.pipeline
    rows: list[tuple[str, list[float]]] = []
    chunks = [body[i : i + 65536] for i in range(0, len(body), 65536)]
    rows.append(("body read (join of 64 KiB messages)", _timed(lambda: b"".join(chunks), n)[0]))
    t, parsed = _timed(lambda: parse_body("chat", body), n)
    rows.append(("JSON decode + checks (worker)", t))
    t, content = _timed(lambda: extract_content("chat", parsed.body, decode_tokens=None, max_segments=100_000), n)
    rows.append(("text extraction (worker)", t))
    from tiers.types import Tier

    t, decision = _timed(lambda: clf.classify(content, tenant="bench", floor=Tier.GENERAL), n)
    rows.append((f"classification (worker; {len(decision.findings)} findings)", t))
    t, fps = _timed(lambda: step._fingerprints(content), n)
    rows.append(("fingerprints (worker)", t))
    stripped = None
    if decision.findings:
        t, stripped = _timed(lambda: clf.strip(content, decision), n)
        rows.append(("stripping (worker)", t))
    rows.append(
        (
            "job to the worker: pickle (endpoint, raw, …)",
            _timed(lambda: pickle.dumps(("chat", body, "bench", 1), -1), n)[0],
        )
    )
    result = classify_mod.Classified(parsed, content, decision, fps[0], fps[1], stripped)
    # As the worker pickles it: the pool's pickler, with the tree's own reducers if it has any.
    table = dict(copyreg.dispatch_table)
    if hasattr(classify_mod, "_finding_args"):
        table[Finding] = classify_mod._finding_args

    def dumps() -> bytes:
        buf = io.BytesIO()
        pickler = pickle.Pickler(buf, -1)
        pickler.dispatch_table = table
        pickler.dump(result)
        return buf.getvalue()

    blob = dumps()
    rows.append((f"answer from the worker: pickle ({len(blob) / 1e6:.1f} MB)", _timed(dumps, n)[0]))
    rows.append(("answer from the worker: unpickle (gateway)", _timed(lambda: pickle.loads(blob), n)[0]))

    async def round_trip() -> list[float]:
        out = []
        for _ in range(n):
            t0 = time.perf_counter()
            await step.run("chat", body, "bench", Tier.GENERAL)
            out.append((time.perf_counter() - t0) * 1000)
        return out

    loop = asyncio.get_event_loop()
    rows.append(("worker round trip, wall (gateway waits)", loop.run_until_complete(round_trip())))
    candidate = state.pipeline.router.choose("bench", decision.tier, step.rule("bench", decision.tier),
                                             hardened=pipeline.hardened, wire="openai").candidates[0]  # fmt: skip
    counter = pipeline.counters[candidate.name]

    def outbound() -> Any:
        return build_outbound(candidate, endpoint="chat", body=parsed.body, content=content, decision=decision,
                              strip=step.strip, counter=counter, tenant="bench", salt_key=pipeline.salt_key,
                              stream=False, stripped=stripped)  # fmt: skip

    t, out = _timed(outbound, n)
    rows.append(("forwarded body: build_outbound whole (gateway, a thread)", t))
    if out.mapping and stripped is not None:
        rows.append(("  of which apply_content (write back stripped text)",
                     _timed(lambda: apply_content(parsed.body, stripped.content, content), n)[0]))  # fmt: skip
    rows.append(("  of which JSON encode", _timed(lambda: _encode(dict(parsed.body)), n)[0]))
    rows.append(("  of which token count", _timed(lambda: _count(counter, __import__("gateway.protocols", fromlist=["PROTOCOLS"]).PROTOCOLS["chat"], out.content, dict(parsed.body)), n)[0]))  # fmt: skip
    return rows


def transport(app: Any, body: bytes, rounds: int) -> None:
    """Paired, alternating (ABBA) in this process: the worker's answer pickled the default way
    against the pool's finding reducer, and the answer's restorer built eagerly against on demand."""
    import re

    from gateway import classify as classify_mod
    from tiers.restore import Restorer
    from tiers.types import Finding, Tier

    step = app.state.gateway.pipeline.classify
    result = step.work("chat", body, "bench", Tier.GENERAL, strip=True)
    table = {**copyreg.dispatch_table, Finding: classify_mod._finding_args}

    def round_trip(before: bool) -> float:
        t0 = time.process_time()
        buf = io.BytesIO()
        pickler = pickle.Pickler(buf, -1)
        if not before:
            pickler.dispatch_table = table
        pickler.dump(result)
        pickle.loads(buf.getvalue())
        return (time.process_time() - t0) * 1000

    mapping = result.stripped.mapping if result.stripped else {}
    answer = "The answer is short."

    def restore(before: bool) -> float:
        re.purge()  # a request's placeholders are seldom another's: no cached pattern
        t0 = time.process_time()
        if before:  # what Restorer did before: the alternation compiled with the restorer
            keys = sorted(mapping, key=len, reverse=True)
            re.compile("|".join(re.escape(k) for k in keys))
        Restorer(mapping).restore(answer)
        return (time.process_time() - t0) * 1000

    def collect(before: bool) -> float:
        if before:  # the heap as it was: every start-up object in the oldest generation
            gc.unfreeze()
        else:
            gc.freeze()
        t0 = time.process_time()
        gc.collect()
        spent = (time.process_time() - t0) * 1000
        gc.freeze()  # as the app leaves it (gateway/app.py)
        return spent

    rows = (("answer pickled and unpickled", round_trip), ("restorer built and used", restore),
            ("full garbage collection of the gateway process", collect))  # fmt: skip
    for name, fn in rows:
        a: list[float] = []
        b: list[float] = []
        for r in range(rounds):
            for before in (r % 2 == 0, r % 2 != 0):
                (a if before else b).append(fn(before))
        print(f"{name} ({len(result.decision.findings)} findings, {len(mapping)} placeholders): "
              f"before {_cell(a)} ms, now {_cell(b)} ms, CPU", flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=7)
    parser.add_argument("--profile", type=int, default=0, help="cProfile the gateway process for this many MB")
    parser.add_argument("--transport", action="store_true", help="only the paired transport and restorer rows")
    parser.add_argument("--whole-only", action="store_true", help="only the whole request: wall and CPU")
    parser.add_argument("--source", type=Path, default=None, help="the tree to measure (default: this one)")
    args = parser.parse_args()
    source = (args.source or ROOT).resolve()
    sys.path.insert(0, str(source))
    sys.path.insert(1, str(ROOT))
    from bench.overhead import MB, chat_body, process_tree_cpu, start_upstream
    from gateway.app import create_app
    from gateway.settings import Settings
    from migrations import upgrade
    from tests.support.harness import SECRETS
    from tests.support.servers import free_port

    up_port = free_port()
    upstream = start_upstream(up_port)
    try:
        with tempfile.TemporaryDirectory(prefix="tg-big-") as tmp_s:
            tmp = Path(tmp_s)
            settings = Settings(secrets=SECRETS, state_dir=str(tmp / "var"), server={"max_body_bytes": 16 * MB},
                                audit={"url": f"sqlite+aiosqlite:///{tmp / 'a.db'}", "checkpoint_dir": str(tmp / "cp")},
                                upstreams=[{"name": "mock", "base_url": f"http://127.0.0.1:{up_port}/v1", "kind": "shared",
                                            "max_tier": 2, "models": {"bench": "m"}, "context_window": 10_000_000}])  # fmt: skip
            app = create_app(settings)
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)

            async def enter() -> Any:
                cm = app.lifespan()
                await cm.__aenter__()
                await upgrade(app.state.gateway.store)
                key, _ = await app.state.gateway.store.create_key("bench", "n", 3, None)
                return cm, key

            cm, key = loop.run_until_complete(enter())
            import gateway.classify

            print(f"source: {source} (gateway from {Path(gateway.classify.__file__).parent})", flush=True)
            for size, ids in ((MB, False), (3 * MB, False), (MB, True), (3 * MB, True)):
                prefix, suffix = chat_body(size, seed=size, identifiers=ids)
                body = (prefix + "1" + suffix).encode()
                if args.transport:
                    if ids:
                        print(f"{size // MB} MB + ids:", end=" ")
                        transport(app, body, args.n)
                    continue
                status, _ = loop.run_until_complete(_asgi_call(app, key, body))
                assert status == 200, status
                whole, cpu = [], []
                for i in range(args.n):
                    b = (prefix + str(10 + i) + suffix).encode()
                    c0 = process_tree_cpu(os.getpid()) - process_tree_cpu(upstream.p.pid)
                    t0 = time.perf_counter()
                    loop.run_until_complete(_asgi_call(app, key, b))
                    whole.append((time.perf_counter() - t0) * 1000)
                    cpu.append((process_tree_cpu(os.getpid()) - process_tree_cpu(upstream.p.pid) - c0) * 1000)
                if args.whole_only:
                    print(f"{source.name} {size // MB} MB{' + ids' if ids else ''}: wall {_cell(whole)} ms, "
                          f"CPU of the gateway and its workers {_cell(cpu)} ms", flush=True)  # fmt: skip
                    continue
                print(
                    f"\n### {size // MB} MB{' + ids' if ids else ''} ({len(body)} bytes), median (min – max) ms of {args.n}"
                )
                print("| stage | ms |\n|---|---|")
                print(f"| whole request in the gateway process (ASGI in → reply out), wall | {_cell(whole)} |")
                print(f"| the same, CPU of the gateway and its workers | {_cell(cpu)} |")
                more = [(prefix + str(50 + i) + suffix).encode() for i in range(args.n)]
                for name, values in phases(app, key, more, loop):
                    print(f"| phase: {name} | {_cell(values)} |", flush=True)
                for name, values in stages(app, key, body, args.n):
                    print(f"| {name} | {_cell(values)} |", flush=True)
                if args.profile and size == args.profile * MB and not ids:
                    prof = cProfile.Profile()
                    prof.enable()
                    for i in range(args.n):
                        loop.run_until_complete(_asgi_call(app, key, (prefix + str(100 + i) + suffix).encode()))
                    prof.disable()
                    s = io.StringIO()
                    pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(25)
                    print(s.getvalue())
            try:
                loop.run_until_complete(cm.__aexit__(None, None, None))
            except RuntimeError:  # litestar's lifespan task group was entered in another task
                pass
    finally:
        upstream.stop()


if __name__ == "__main__":
    main()
