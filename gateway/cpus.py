"""How many CPUs this process can use at once: what splitting one body across workers is worth.

``os.cpu_count()`` counts the machine's CPUs. A process pinned with ``taskset`` or a cpuset sees
fewer in its affinity mask, and a container started with ``--cpus`` gets a CFS quota (cgroup v2
``cpu.max``) below both. Reading one body in parts on two workers pays for the parts' overlap and
hand-off; it is a gain only where the parts really run at once (measured, bench/RESULTS.md).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cgroup_cpus", "usable_cpus"]

_CPU_MAX = Path("/sys/fs/cgroup/cpu.max")


def cgroup_cpus(cpu_max: str) -> int | None:
    """Whole CPUs a cgroup v2 ``cpu.max`` line allows ("200000 100000": 2, "150000 100000": 1),
    at least one; None for no quota ("max 100000") or a line that is no quota."""
    parts = cpu_max.split()
    if len(parts) != 2 or parts[0] == "max":
        return None
    try:
        quota, period = int(parts[0]), int(parts[1])
    except ValueError:
        return None
    if quota <= 0 or period <= 0:
        return None
    return max(1, quota // period)


def usable_cpus(cpu_max: Path = _CPU_MAX) -> int:
    """The CPUs of this process's affinity mask, capped by its cgroup's quota where one is set."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity masks on this platform (macOS, Windows)
        n = os.cpu_count() or 1
    try:
        quota = cgroup_cpus(cpu_max.read_text())
    except OSError:  # no cgroup v2 here, or not readable: the mask is all there is to know
        quota = None
    return max(1, min(n, quota) if quota is not None else n)
