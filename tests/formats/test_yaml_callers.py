"""Each of the five YAML files refuses a duplicated key through its real loading entry point,
naming the file (where it has one) and the line: the policy, a disclosure, the engine config, a
recognizer file and the gateway's settings all go through formats.yaml_model."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.audit.test_disclosures import GOOD as DISCLOSURE
from tests.engine.test_config import BASE as ENGINE, _write as write_engine
from tests.tiers.test_policy import GOOD as POLICY


def _expect(exc: pytest.ExceptionInfo[BaseException], where: str, line: int, key: object) -> None:
    text = str(exc.value)
    assert f"{where}:{line}: " in text and f"duplicate key {key!r}" in text, text


def test_policy(tmp_path: Path) -> None:
    from tiers.errors import PolicyError
    from tiers.policy import load_policy

    path = tmp_path / "policy.yaml"
    path.write_text(POLICY.replace("  2: {allow:", "  1: {allow: [onprem]}\n  2: {allow:"), "utf-8")  # line 5
    with pytest.raises(PolicyError) as err:
        load_policy(path)
    _expect(err, str(path), 5, 1)


def test_disclosure(tmp_path: Path) -> None:
    from audit.disclosures import load_disclosure
    from audit.errors import DisclosureError

    path = tmp_path / "d.yaml"
    path.write_text(DISCLOSURE.replace("  stream_only: true", "  stream_only: true\n  min_prompt_tokens: 1"))
    with pytest.raises(DisclosureError) as err:
        load_disclosure(str(path))
    assert err.value.line == 11 and "duplicate key 'min_prompt_tokens' (first on line 9)" in str(err.value)


def test_engine_config(tmp_path: Path) -> None:
    from engine.config import EngineConfigError, load_engine_config

    path = write_engine(tmp_path, ENGINE + "cache_salt:\n  require: true\n  require: false\n")  # line 7
    with pytest.raises(EngineConfigError) as err:
        load_engine_config(path)
    _expect(err, str(path), 7, "require")


def test_recognizer_file(tmp_path: Path) -> None:
    from tiers.config import TiersConfig
    from tiers.errors import RecognizerError
    from tiers.recognizers.registry import build_registry

    path = tmp_path / "recs.yaml"
    path.write_text("recognizers:\n  - name: Codes\n    supported_entity: CODE\n    patterns:\n"
                    "      - {name: code, regex: 'C-[0-9]+', score: 0.9}\n    supported_entity: OTHER\n")  # fmt: skip
    with pytest.raises(RecognizerError) as err:
        build_registry(TiersConfig(recognizer_files=(path,)))
    _expect(err, str(path), 6, "supported_entity")


def test_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gateway.settings import ConfigError, load_settings

    monkeypatch.chdir(tmp_path)
    path = tmp_path / "tiergate.yaml"
    path.write_text("upstreams:\n  - name: a\n    base_url: http://x/v1\n    kind: shared\n    kind: onprem\n")
    with pytest.raises(ConfigError) as err:
        load_settings(path)
    _expect(err, str(path), 5, "kind")


def test_settings_validation_errors_name_the_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gateway.settings import ConfigError, load_settings

    monkeypatch.chdir(tmp_path)
    path = tmp_path / "tiergate.yaml"
    path.write_text("server: {port: 80}\nupstreams:\n  - name: a\n    base_url: http://x/v1\n    kind: cloud\n")
    with pytest.raises(ConfigError) as err:
        load_settings(path)
    assert f"{path}:5: upstreams.0.kind: " in str(err.value) and "cloud" not in str(err.value)
