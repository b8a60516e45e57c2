"""What splitting a body across workers is worth: the CPUs this process may really use."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway.cpus import cgroup_cpus, usable_cpus


@given(quota=st.integers(1, 10**7), period=st.integers(1, 10**6))
def test_a_quota_allows_its_whole_cpus_and_at_least_one(quota: int, period: int) -> None:
    n = cgroup_cpus(f"{quota} {period}\n")
    assert n == max(1, quota // period)
    assert n is not None and n * period <= max(quota, period)  # never more than the quota runs at once


@pytest.mark.parametrize("line", ["max 100000", "max", "", "abc 100000", "100000", "0 100000", "100000 0", "-1 100000"])
def test_no_quota_is_no_cap(line: str) -> None:
    assert cgroup_cpus(line) is None


def test_the_affinity_mask_and_the_quota_both_cap(tmp_path: Path) -> None:
    mask = len(os.sched_getaffinity(0))
    missing = tmp_path / "no-such-cpu.max"
    assert usable_cpus(missing) == mask
    one = tmp_path / "cpu.max"
    one.write_text("100000 100000\n")
    assert usable_cpus(one) == 1
    many = tmp_path / "many.max"
    many.write_text(f"{(mask + 8) * 100000} 100000\n")
    assert usable_cpus(many) == mask  # a quota above the mask does not add CPUs


def test_a_process_pinned_to_one_cpu_counts_one() -> None:
    """As ``taskset -c`` leaves a process (the benchmark pins the gateway so): one CPU."""
    code = "import os, sys; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); " \
           "from gateway.cpus import usable_cpus; print(usable_cpus())"  # fmt: skip
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root)
    assert out.stdout.strip() == "1"
