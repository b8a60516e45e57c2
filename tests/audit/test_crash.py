"""kill -9 under load: every record whose write returned is in the log, and the chain verifies."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap

from sqlalchemy import select

from audit.models import AuditRequest
from tests.audit.conftest import make_settings, open_store

CHILD = textwrap.dedent("""
    import asyncio, sys, uuid
    from pathlib import Path
    sys.path.insert(0, {root!r})
    from tests.audit.conftest import make_settings, open_store, request

    async def writer(store):
        while True:
            rec = request(request_id=uuid.uuid4().hex)
            await store.record_request(rec)
            print(rec.request_id, flush=True)  # only after the write returned

    async def main():
        store = await open_store(make_settings({url!r}, Path({tmp!r})))
        await asyncio.gather(*(writer(store) for _ in range(16)))

    asyncio.run(main())
""")


def test_kill_9_loses_no_acknowledged_record(db_url, tmp_path):
    """SIGKILL mid-load: all acknowledged request ids are present and the chain is intact."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    code = CHILD.format(root=root, url=db_url, tmp=str(tmp_path))
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    acked: list[str] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            acked.append(line.strip())
            if len(acked) >= 400:
                break
        os.kill(proc.pid, signal.SIGKILL)
        rest, _ = proc.communicate(timeout=30)
        acked += [line.strip() for line in rest.splitlines() if line.strip()]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert len(acked) >= 400

    async def check():
        store = await open_store(make_settings(db_url, tmp_path))
        try:
            async with store.engine.connect() as conn:
                stored = set((await conn.execute(select(AuditRequest.request_id))).scalars())
            return stored, await store.verify()
        finally:
            await store.close()

    stored, report = asyncio.run(check())
    missing = [r for r in acked if r not in stored]
    assert not missing, f"{len(missing)} acknowledged records lost"
    assert report.ok, report.problems
    assert report.records == len(stored)
