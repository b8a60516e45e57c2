"""The ``tiergate`` entry point turns the collector off while a command's modules load
(``gateway/entry.py``) and never leaves it off: a real ``tiergate serve`` has it on, with what
start-up built frozen, once ``/readyz`` answers; any other command has it on when it runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.support.servers import free_port

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str, cwd: Path) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TIERGATE_")}
    env["PYTHONPATH"] = str(ROOT)
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, env=env, capture_output=True,
                         text=True, timeout=240)  # fmt: skip
    assert out.stdout.strip(), out.stderr[-3000:]
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def test_serve_has_the_collector_on_and_start_up_frozen_once_ready(tmp_path: Path) -> None:
    port = free_port()
    seen = _run(
        f"""
        import gc, json, os, sys, threading, time, urllib.request

        seen = {{}}

        def watch():
            while "imported" not in seen:
                if "gateway.commands.serve" in sys.modules:
                    seen["imported"] = gc.isenabled()
                time.sleep(0.001)
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                try:
                    urllib.request.urlopen("http://127.0.0.1:{port}/readyz", timeout=1)
                    break
                except Exception:
                    time.sleep(0.05)
            seen.update(ready=gc.isenabled(), frozen=gc.get_freeze_count())
            print(json.dumps(seen), flush=True)
            os._exit(0)

        threading.Thread(target=watch, daemon=True).start()
        sys.argv = ["tiergate", "serve", "--port", "{port}"]
        from gateway.entry import run
        run()
        """,
        tmp_path,
    )
    assert seen["imported"] is False  # off while the command's modules loaded
    assert seen["ready"] is True and isinstance(seen["frozen"], int) and seen["frozen"] > 0


def test_another_command_runs_with_the_collector_on(tmp_path: Path) -> None:
    seen = _run(
        """
        import atexit, gc, json, sys
        atexit.register(lambda: print(json.dumps({"on": gc.isenabled()}), flush=True))
        sys.argv = ["tiergate", "db", "current"]
        from gateway.entry import run
        run()
        """,
        tmp_path,
    )
    assert seen["on"] is True
