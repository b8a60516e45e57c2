"""Zero every newly allocated KV block before use, in the vLLM process this runs in.

vLLM 0.32 already carries the mechanism: when ``KVCacheConfig.needs_kv_cache_zeroing`` is true,
the scheduler's block managers record each newly allocated attention block, the scheduler ships
those ids in ``SchedulerOutput.new_block_ids_to_zero``, and the model runner zeroes them before
the step that writes them. Stock vLLM turns it on only for Mamba and mixed-precision caches, so a
plain attention model reuses freed blocks with the previous request's K/V still in them.

That property is private, so this module refuses to run on a vLLM it was not tested with (unless
``TIERGATE_KV_PLUGIN_ALLOW_UNTESTED=1``; ``TIERGATE_KV_PLUGIN_ALSO_CHECK_VERSION`` makes it judge
a second version too, which can only add a refusal), checks that every piece it relies on
exists, and wraps the zeroing functions so that a silent skip (the GPU runner returns without
zeroing when its zeroer was never built) becomes an error that stops the engine instead.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from engine.plugin import (
    ENV_ALLOW_UNTESTED,
    ENV_ALSO_CHECK_VERSION,
    ENV_STATE_DIR,
    PLUGIN_VERSION,
)
from engine.plugin.amx import amx_permitted
from engine.plugin.state import ZeroCounter, write_process_record, write_refusal

__all__ = [
    "TESTED_VLLM_VERSIONS",
    "PluginRefused",
    "check_version_pin",
    "counter",
    "install",
]

TESTED_VLLM_VERSIONS = frozenset({"0.32.0"})


class PluginRefused(RuntimeError):
    """The plugin cannot guarantee zeroing here; raised from ``register`` so vLLM does not start."""


_counter: ZeroCounter | None = None


def counter() -> ZeroCounter | None:
    """This process's zeroing counter, or None before ``install``."""
    return _counter


def _always(_self: object) -> bool:
    return True


def _wrap(cls: type, name: str, check: Callable[[Any, list[int]], None]) -> None:
    original = getattr(cls, name, None)
    if original is None or getattr(original, "__tiergate_wrapped__", False):
        if original is None:
            raise PluginRefused(f"vLLM has no {cls.__name__}.{name}; KV zeroing cannot be verified")
        return

    def wrapped(self: Any, block_ids: list[int]) -> None:
        check(self, block_ids)
        original(self, block_ids)
        if block_ids and _counter is not None:
            _counter.add(len(block_ids))

    wrapped.__tiergate_wrapped__ = True  # type: ignore[attr-defined]  # our marker on vLLM's function
    wrapped.__wrapped__ = original  # type: ignore[attr-defined]  # as functools.wraps would set it
    setattr(cls, name, wrapped)


def _no_check(_self: Any, _block_ids: list[int]) -> None:
    return None


def _gpu_zeroer_built(self: Any, block_ids: list[int]) -> None:
    if block_ids and getattr(self, "_meta", None) is None:
        raise PluginRefused("KV zeroer has no metadata: blocks would be handed out unzeroed")


def _gpu_runner_has_zeroer(self: Any, block_ids: list[int]) -> None:
    if block_ids and not hasattr(self, "_kv_block_zeroer"):
        raise PluginRefused("model runner has no KV zeroer: blocks would be handed out unzeroed")


def _patch_runners() -> None:
    from vllm.platforms import current_platform

    if current_platform.is_cpu():
        from vllm.v1.worker.cpu_model_runner import CPUModelRunner

        _wrap(CPUModelRunner, "_zero_block_ids", _no_check)
        return
    from vllm.v1.worker.gpu_model_runner import GPUModelRunner
    from vllm.v1.worker.utils import KVBlockZeroer

    # Only the zeroer counts: GPUModelRunner._zero_block_ids delegates to it.
    _wrap(KVBlockZeroer, "zero_block_ids", _gpu_zeroer_built)
    original = GPUModelRunner._zero_block_ids
    if not getattr(original, "__tiergate_wrapped__", False):

        def checked(self: Any, block_ids: list[int]) -> None:
            _gpu_runner_has_zeroer(self, block_ids)
            original(self, block_ids)

        checked.__tiergate_wrapped__ = True  # type: ignore[attr-defined]  # our marker on vLLM's function
        GPUModelRunner._zero_block_ids = checked  # type: ignore[method-assign]  # patching vLLM is the plugin's job


def check_version_pin(vllm_version: str, environ: Mapping[str, str]) -> bool:
    """Raise ``PluginRefused`` for an untested vLLM unless overridden; True when overridden.

    ``ENV_ALSO_CHECK_VERSION`` adds a version to judge besides ``vllm_version``: both must pass.
    """
    judged = [vllm_version]
    extra = environ.get(ENV_ALSO_CHECK_VERSION, "").strip()
    if extra:
        judged.append(extra)
    untested = [v for v in judged if v not in TESTED_VLLM_VERSIONS]
    if not untested:
        return False
    if environ.get(ENV_ALLOW_UNTESTED) == "1":
        return True
    raise PluginRefused(
        f"tiergate KV hygiene plugin {PLUGIN_VERSION} is tested with vLLM "
        f"{sorted(TESTED_VLLM_VERSIONS)}, not {untested[-1]}; set allow_untested_vllm: true in "
        f"the engine config ({ENV_ALLOW_UNTESTED}=1 for a vLLM started by hand) to override"
    )


def install() -> None:
    """Turn zero-on-allocate on in this process; idempotent; raises ``PluginRefused``.

    A refusal is also recorded in the state dir (when set) for the supervisor to report.
    """
    raw_dir = os.environ.get(ENV_STATE_DIR)
    state_dir = Path(raw_dir) if raw_dir else None
    try:
        _install(state_dir)
    except PluginRefused as exc:
        if state_dir is not None:
            write_refusal(state_dir, str(exc))
        raise


def _install(state_dir: Path | None) -> None:
    global _counter
    if _counter is not None:
        return
    import vllm

    version = str(getattr(vllm, "__version__", "unknown"))
    override = check_version_pin(version, os.environ)
    from vllm.v1.core.sched.output import SchedulerOutput
    from vllm.v1.kv_cache_interface import KVCacheConfig

    if not isinstance(KVCacheConfig.__dict__.get("needs_kv_cache_zeroing"), property):
        raise PluginRefused("vLLM's KVCacheConfig.needs_kv_cache_zeroing is missing")
    if "new_block_ids_to_zero" not in getattr(SchedulerOutput, "__dataclass_fields__", {}):
        raise PluginRefused("vLLM's SchedulerOutput.new_block_ids_to_zero is missing")
    _patch_runners()
    KVCacheConfig.needs_kv_cache_zeroing = property(  # type: ignore[method-assign,assignment]  # patching vLLM is the plugin's job
        _always, doc="Always zero new KV blocks (tiergate KV hygiene plugin)."
    )
    _counter = ZeroCounter(state_dir)
    if state_dir is not None:
        write_process_record(
            state_dir,
            {
                "plugin_version": PLUGIN_VERSION,
                "vllm_version": version,
                "version_override": override,
                "zeroing": True,
                "amx": amx_permitted(),
            },
        )
