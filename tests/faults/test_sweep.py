"""The final sweep: after traffic that planted unique markers through every path (answered, stripped,
refused, streamed, failed upstream, integrity error, malformed, unauthenticated, probed), no marker
is found in the database files, the SQLite WAL, the PostgreSQL tables and WAL segments, the
checkpoints or the log: prompts are never at rest."""

from __future__ import annotations

import logging
import os
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy.engine import make_url

from gateway.probe import probe_upstream, record_probe
from gateway.probes.settings import ProbeSettings
from gateway.upstream import UpstreamClient
from tests.faults._gw import chat_body, one_upstream
from tests.faults.conftest import admin
from tests.support import FakeUpstream, Received, Scripted
from tests.support.crosstalk import echo
from tests.support.harness import FakeUpstreams, GatewayHarness, fetch_rows


def _encodings(marker: str) -> list[bytes]:
    return [marker.encode(), marker.encode("utf-16-le"), marker.upper().encode()]


def _scan(paths: list[Path], markers: list[str]) -> list[str]:
    hits = []
    needles = [(m, e) for m in markers for e in _encodings(m)]
    for path in paths:
        data = path.read_bytes()
        hits.extend(f"{path.name}: {m}" for m, e in needles if e in data)
    return hits


def _script(r: Received) -> Scripted:
    text = str(r.body.get("messages") or r.body.get("prompt") or r.body.get("input"))
    if "fail-upstream" in text:
        return Scripted(status=500)
    if "lie-about-usage" in text:
        return Scripted(content="fluent answer", prompt_tokens=1)
    return echo(r) if r.body.get("messages") else Scripted(content=text)


def _traffic(gw: GatewayHarness, key: str, m: list[str]) -> list[int]:
    auth = {"authorization": f"Bearer {key}"}
    url = gw.url + "/v1"
    out = []

    def post(path: str, **kw: Any) -> None:
        out.append(httpx.post(url + path, timeout=30, **{"headers": auth, **kw}).status_code)

    post("/chat/completions", json=chat_body(f"Summarise the memo about {m[0]} for the team."))
    post("/chat/completions", json=chat_body(f"Reply to maria.keller@corp-mail.example.org about {m[1]}."))
    post("/chat/completions", json=chat_body(f"STRICTLY CONFIDENTIAL. SSN 078-05-1120, case {m[2]}."))
    post("/chat/completions", json=chat_body(f"Stream a story about {m[3]}.", stream=True))
    post("/completions", json={"model": "chat", "prompt": f"Complete this: {m[4]}"})
    post("/embeddings", json={"model": "chat", "input": [f"embed {m[5]}", "second"]})
    post("/chat/completions", json=chat_body(f"fail-upstream {m[6]}"))
    post("/chat/completions", json=chat_body(f"lie-about-usage {m[7]} " + "long prompt words " * 40))
    post("/chat/completions", content=f'{{"model": "chat", "messages": [{{"content": "{m[8]}"'.encode())
    post("/chat/completions", json=chat_body(f"unknown model {m[9]}", model="nope"))
    post("/chat/completions", json=chat_body(f"no key {m[10]}"), headers={"authorization": "Bearer tg_bad"})
    post("/chat/completions", json=chat_body(f"too long {m[11]} " + "x" * 600_000))
    return out


def test_no_prompt_marker_at_rest(db_url: str, tmp_path: Path, classifier: Any) -> None:
    """Twelve paths through the gateway plus a probe leave zero markers in any file or table."""
    markers = [f"sweep{uuid.uuid4().hex[:12]}m{i}" for i in range(12)]
    log_file = tmp_path / "gateway.log"
    handler = logging.FileHandler(log_file, encoding="utf-8")
    handler.setLevel(logging.DEBUG)
    root = logging.getLogger()
    old = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    started = time.time()
    try:
        with FakeUpstreams(FakeUpstream(name="vendor", script=_script)) as fakes:
            cfg = {"upstreams": [one_upstream(fakes.base_url("vendor"), context_window=50_000)],
                   "server": {"max_body_bytes": 4 * 1024 * 1024}}  # fmt: skip
            with GatewayHarness(db_url, tmp_path, cfg, classifier=classifier) as gw:
                statuses = _traffic(gw, gw.create_key(), markers)

                async def probe(store: Any) -> None:
                    client = UpstreamClient(gw.settings.upstreams[0])
                    try:
                        report = await probe_upstream(client, settings=ProbeSettings(requests=4))
                        await record_probe(report, record_event=store.record_event, metrics=None)
                    finally:
                        await client.aclose()

                admin(db_url, tmp_path, probe)
                admin(db_url, tmp_path, lambda st: st.write_checkpoint())
                live = _sqlite_files(db_url)  # while the server holds it open: the WAL exists
                live_hits = _scan(live, markers)
            seen = fakes["vendor"].ledger.raw_text()
    finally:
        root.removeHandler(handler)
        root.setLevel(old)
        handler.close()
    # The traffic really took each path, and the markers really travelled where they may.
    assert statuses[:6] == [200, 200, 403, 200, 200, 200] and statuses[6] == 502 and statuses[7] == 502
    assert all(400 <= s < 500 for s in statuses[8:]), statuses
    assert markers[0] in seen and markers[2] not in seen

    files = [log_file, *sorted((tmp_path / "checkpoints").glob("**/*"))]
    if make_url(db_url).get_backend_name() == "sqlite":
        assert any(p.name.endswith("-wal") for p in live) and live_hits == []
        files += _sqlite_files(db_url)
    else:
        files += _postgres_wal(db_url, started)
        tables = fetch_rows(db_url, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        dump = "".join(
            str(r) for t in tables for r in fetch_rows(db_url, f'SELECT t::text AS row FROM "{t["tablename"]}" t')
        )
        assert len(dump) > 1000 and [m for m in markers if m in dump] == []
    files = [p for p in files if p.is_file()]
    assert _scan(files, markers) == []


def _sqlite_files(db_url: str) -> list[Path]:
    url = make_url(db_url)
    if url.get_backend_name() != "sqlite":
        return []
    db = Path(url.database or "")
    return [p for p in db.parent.glob(db.name + "*") if p.is_file()]


def _postgres_wal(db_url: str, since: float) -> list[Path]:
    """WAL segments the server wrote during the test (the server is shared: only recent ones)."""
    fetch_rows(db_url, "SELECT pg_switch_wal()")
    data_dir = Path(fetch_rows(db_url, "SHOW data_directory")[0]["data_directory"])
    wal = data_dir / "pg_wal"
    segments = [p for p in wal.iterdir() if p.is_file() and len(p.name) == 24 and os.stat(p).st_mtime >= since - 1]
    assert segments, "no WAL segment written during the test"
    return segments
