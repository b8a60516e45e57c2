"""The plugin's AMX request, in fresh interpreters (the permission is per process, cleared by exec)."""

from __future__ import annotations

import json
import subprocess
import sys

from engine.plugin.amx import cpu_has_amx

_PROBE = """
import json
from engine.plugin.amx import amx_permitted, request_amx
before = amx_permitted()
answer = request_amx()
print(json.dumps([before, answer, amx_permitted(), request_amx()]))
"""


def _probe() -> list[bool]:
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True, timeout=120)
    result: list[bool] = json.loads(out.stdout)
    return result


def test_a_fresh_process_may_use_amx_only_after_asking_where_the_cpu_has_it() -> None:
    before, answer, after, again = _probe()
    assert before is False  # exec cleared it: nothing grants it for free, so vLLM's kernels would trap
    assert answer is after is again is cpu_has_amx()  # asking twice is harmless


def test_the_cpu_flag_agrees_with_torchs_own_detection() -> None:
    import torch

    assert cpu_has_amx() is torch.cpu._is_amx_tile_supported()
