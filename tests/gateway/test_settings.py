"""Settings: YAML + environment, unknown keys named, secrets generated once in embedded mode."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from gateway.settings import ConfigError, Settings, load_settings, with_embedded_secrets

UPSTREAMS = """
upstreams:
  - name: vendor
    base_url: http://127.0.0.1:9/v1
    kind: shared
    max_tier: 2
    models: {chat: vendor-chat}
  - name: local
    base_url: http://127.0.0.1:10/v1
    kind: onprem
    max_tier: 3
    models: {chat: llama}
    context_window: 4096
    safe_prompt_tokens: 2048
aliases:
  - {name: chat, upstreams: [local, vendor]}
"""


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "tiergate.yaml"
    path.write_text(body)
    return path


def test_yaml_and_env_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The YAML file is read, and a TIERGATE_ nested env variable overrides one of its values."""
    monkeypatch.chdir(tmp_path)
    path = _write(tmp_path, "server: {port: 7000}\n" + UPSTREAMS)
    monkeypatch.setenv("TIERGATE_SERVER__PORT", "7100")
    s = load_settings(path)
    assert s.server.port == 7100
    assert [u.name for u in s.upstreams] == ["vendor", "local"]
    assert s.upstream("local").safe_tokens == 2048
    assert s.aliases[0].upstreams == ["local", "vendor"]


@pytest.mark.parametrize(
    ("body", "key"),
    [
        ("server: {port: 1, colour: red}\n", "server.colour"),
        ("nonsense: 1\n", "nonsense"),
        (UPSTREAMS.replace("kind: shared", "kind: shared\n    secret_sauce: 1"), "upstreams.0.secret_sauce"),
        ("tiers: {polcy: x}\n", "tiers.polcy"),
        ("audit: {urll: x}\n", "audit.urll"),
    ],
)
def test_unknown_keys_rejected_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str, key: str) -> None:
    """An unknown key anywhere in the tree fails loading, and the message names its dotted path."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as err:
        load_settings(_write(tmp_path, body))
    assert key in str(err.value)


def test_bad_references_and_trust_rejected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An alias naming a missing upstream, and a shared upstream allowed Tier 3, are config errors."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match="unknown upstream 'nowhere'"):
        load_settings(_write(tmp_path, UPSTREAMS.replace("[local, vendor]", "[local, nowhere]")))
    with pytest.raises(ConfigError, match="never receive Tier 3"):
        load_settings(_write(tmp_path, UPSTREAMS.replace("max_tier: 2", "max_tier: 3")))


def test_embedded_secrets_generated_once_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Embedded mode invents missing secrets once, in 0600 files, and reads the same ones next time."""
    monkeypatch.chdir(tmp_path)
    first = load_settings(None)
    second = load_settings(None)
    for name in ("fingerprint_key", "checkpoint_key", "cache_salt_key"):
        path = tmp_path / "var" / "secrets" / name
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        a = getattr(first.secrets, name).get_secret_value()
        assert a == getattr(second.secrets, name).get_secret_value()
        assert len(a) == 64
    assert "*" in repr(first.secrets.fingerprint_key)  # SecretStr never prints its value


def test_secrets_required_outside_embedded_mode(tmp_path: Path) -> None:
    """On PostgreSQL, replicas must share secrets: a missing one is an error naming the key."""
    s = Settings(audit={"url": "postgresql+asyncpg://db/x"}, state_dir=str(tmp_path))
    with pytest.raises(ConfigError, match="secrets.fingerprint_key"):
        with_embedded_secrets(s)
    assert not (tmp_path / "secrets").exists()


def test_example_config_is_valid(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The shipped, commented tiergate.example.yaml loads without error."""
    example = Path(__file__).resolve().parents[2] / "tiergate.example.yaml"
    monkeypatch.chdir(tmp_path)
    s = load_settings(example)
    assert s.upstreams and s.aliases


def test_dashboard_block_is_validated_and_documented(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The dashboard's knobs are settings like any other: validated, unknown keys refused, and the
    example file shows exactly the defaults."""
    from gateway.settings import DashboardSettings

    monkeypatch.chdir(tmp_path)
    example = Path(__file__).resolve().parents[2] / "tiergate.example.yaml"
    assert load_settings(example).dashboard == DashboardSettings()
    assert load_settings(None, dashboard={"page_size": 7}).dashboard.page_size == 7
    with pytest.raises(ConfigError, match="session_idle_s is longer than session_lifetime_s"):
        load_settings(None, dashboard={"session_lifetime_s": 600, "session_idle_s": 900})
    with pytest.raises(ConfigError, match="dashboard.pagesize"):
        load_settings(_write(tmp_path, "dashboard: {pagesize: 5}\n"))
    with pytest.raises(ConfigError, match="dashboard.ip_failures"):
        load_settings(None, dashboard={"ip_failures": 0})


def test_every_setting_is_documented() -> None:
    """Each field of every settings model carries a docstring (docs stay complete)."""
    from gateway import settings as mod

    models = [mod.ServerSettings, mod.LimitsSettings, mod.TimeoutSettings, mod.UpstreamSettings,
              mod.ModelAlias, mod.SecretsSettings, mod.TracingSettings, mod.SiemSinkSettings, mod.SiemSettings,
              mod.AlertWebhookSettings, mod.AlertsSettings, mod.DashboardSettings, mod.Settings]  # fmt: skip
    source = Path(mod.__file__).read_text()
    for model in models:
        for name in model.model_fields:
            marker = f"    {name}:"
            idx = source.find(marker, source.find(f"class {model.__name__}("))
            assert idx >= 0, name
            after = source[idx:].splitlines()[1:3]
            assert any(line.strip().startswith('"""') for line in after), f"{model.__name__}.{name}"
