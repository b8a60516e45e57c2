"""Prefill/decode disaggregation, hardened: the KV guard connector and the split router.

- ``engine.pd.guard``     ``TiergateKVGuard``, a vLLM v1 KV connector wrapping any other: boundary
                          check, per-block checksums, deferred release of blocks in flight
- ``engine.pd.router``    fronts a prefill and a decode instance; aborts both halves together
- ``engine.pd.settings``  the guard's settings and the ``--kv-transfer-config`` it is enabled with

The guard module imports vLLM and torch; nothing here does at import time, so the gateway can
import ``engine.pd.settings`` without them.
"""

from engine.pd.settings import GUARD_CONNECTOR, PROTECTIONS, TRANSFER_ID_KEY, GuardSettings, guard_transfer_config

__all__ = ["GUARD_CONNECTOR", "PROTECTIONS", "TRANSFER_ID_KEY", "GuardSettings", "guard_transfer_config"]
