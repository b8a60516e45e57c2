"""Orphan watchdog: takes vLLM's whole process group down once its supervisor is gone.

``engine.launcher`` starts this first, as the leader of a new process group, with the read end of
a pipe as its stdin, and then starts vLLM inside that group. The supervisor holds the only write
end, so stdin reaches EOF exactly when the supervisor process ends, however it ends (SIGKILL and
OOM kills included). Then every process of the group gets SIGTERM, and SIGKILL after the grace.

Why a process and not only ``PR_SET_PDEATHSIG``: the death signal reaches only the direct child
(vLLM's API server), and vLLM 0.32 loses a SIGTERM that arrives while it is still starting (its
engine core and workers then come up and serve on, unsupervised).

Run by path with ``python -I`` (stdlib only, nothing of the project imported), so that it starts
in milliseconds and no ``PYTHONPATH`` can change what it does:
``python -I engine/watchdog.py GRACE_S``.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

__all__ = ["group_members", "main"]

_POLL_S = 0.1


def group_members(pgid: int) -> list[int] | None:
    """Live (non-zombie) processes of ``pgid`` other than this one; None where /proc is missing."""
    proc = Path("/proc")
    if not proc.is_dir():
        return None
    me = os.getpid()
    members: list[int] = []
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # exited while we looked
        # "pid (comm) state ppid pgrp ...": comm may contain spaces and parentheses.
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(entry.name))
    return members


def _say(message: str) -> None:
    # stdout is vLLM's log file: the one place an operator looks for why vLLM went away.
    print(f"tiergate engine watchdog (pid {os.getpid()}): {message}", flush=True)


def main(argv: list[str]) -> int:
    grace_s = float(argv[1])
    stdin = sys.stdin.buffer
    while stdin.read(4096):
        pass  # nothing is ever written; only the EOF matters
    pgid = os.getpgrp()
    # Our own SIGTERM to the group must not end us before the escalation. Until this point a
    # SIGTERM ends us at once: that is how a live supervisor's stop() disposes of us.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _say(f"supervisor gone: SIGTERM to vLLM process group {pgid}")
    os.killpg(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        members = group_members(pgid)
        if members == []:
            return 0
        time.sleep(_POLL_S)
    _say(f"still running after {grace_s:g}s: SIGKILL to process group {pgid}")
    os.killpg(pgid, signal.SIGKILL)  # ends this process too
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
