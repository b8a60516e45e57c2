"""The KV hygiene plugin's vLLM version pin, judged without importing vLLM.

The refusal on a real vLLM (and what the engine start makes of it) is in test_lifecycle.py.
"""

from __future__ import annotations

import pytest

from engine.plugin import ENV_ALLOW_UNTESTED, ENV_ALSO_CHECK_VERSION
from engine.plugin.zeroing import PluginRefused, check_version_pin


def test_tested_version_passes_without_override() -> None:
    """vLLM 0.32.0 with no settings loads and is not reported as overridden."""
    assert check_version_pin("0.32.0", {}) is False


def test_untested_version_is_refused_naming_the_config_key() -> None:
    """Another vLLM version is refused; the message names it and the engine.yaml override."""
    with pytest.raises(PluginRefused) as refused:
        check_version_pin("0.33.1", {})
    assert "tested with vLLM ['0.32.0'], not 0.33.1" in str(refused.value)
    assert "allow_untested_vllm: true" in str(refused.value)


def test_also_checked_version_adds_a_refusal() -> None:
    """On the tested vLLM, an untested second version to check is refused as if it were vLLM's."""
    with pytest.raises(PluginRefused, match="not 0.33.0"):
        check_version_pin("0.32.0", {ENV_ALSO_CHECK_VERSION: "0.33.0"})


def test_also_checked_version_cannot_lift_a_refusal() -> None:
    """Naming the tested version as the second one does not let an untested vLLM through."""
    with pytest.raises(PluginRefused, match="not 0.33.0"):
        check_version_pin("0.33.0", {ENV_ALSO_CHECK_VERSION: "0.32.0"})


@pytest.mark.parametrize(("version", "extra"), [("0.33.0", ""), ("0.32.0", "0.33.0")])
def test_override_admits_an_untested_version_and_says_so(version: str, extra: str) -> None:
    """With the override an untested version loads, reported as overridden (for the manifest)."""
    env = {ENV_ALLOW_UNTESTED: "1", ENV_ALSO_CHECK_VERSION: extra}
    assert check_version_pin(version, env) is True
