"""The `tiergate` command: keys create/list/revoke, config check, and `serve` as a real process."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import openai
import pytest
import yaml
from click.testing import CliRunner

from gateway.cli import main
from tests.support import FakeUpstream, GatewayProcess, serve
from tests.support.harness import SECRETS


def _config(tmp_path: Path, upstream_url: str = "http://127.0.0.1:9/v1", **extra: object) -> Path:
    cfg = {
        "audit": {"url": f"sqlite+aiosqlite:///{tmp_path / 'audit.db'}", "checkpoint_dir": str(tmp_path / "cp")},
        "state_dir": str(tmp_path / "var"),
        "secrets": SECRETS,
        "limits": {"auth_cache_s": 0},
        "upstreams": [{"name": "vendor", "base_url": upstream_url, "kind": "shared", "max_tier": 2,
                       "models": {"chat": "vendor-chat"}}],
        **extra,
    }  # fmt: skip
    path = tmp_path / "tiergate.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _run(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_keys_create_list_revoke(tmp_path: Path) -> None:
    """A created key is printed once; list shows it without the secret; revoke marks it revoked."""
    cfg = str(_config(tmp_path))
    created = json.loads(_run("keys", "create", "--config", cfg, "--tenant", "acme", "--name", "ci",
                              "--max-tier", "2", "--model", "chat").splitlines()[0])  # fmt: skip
    assert created["key"].startswith("tg_") and created["max_tier"] == 2 and created["models"] == ["chat"]
    listed = [json.loads(line) for line in _run("keys", "list", "--config", cfg).splitlines()]
    assert [k["key_id"] for k in listed] == [created["key_id"]]
    assert created["key"] not in json.dumps(listed) and listed[0]["revoked_at"] is None
    _run("keys", "revoke", "--config", cfg, created["key_id"])
    (after,) = [json.loads(line) for line in _run("keys", "list", "--config", cfg, "--tenant", "acme").splitlines()]
    assert after["revoked_at"] is not None
    again = CliRunner().invoke(main, ["keys", "revoke", "--config", cfg, "nope"])
    assert again.exit_code != 0


def test_config_check(tmp_path: Path) -> None:
    """`config check` passes a valid file and fails an invalid one naming the wrong key."""
    good = _config(tmp_path)
    assert "ok: 1 upstreams, 1 models" in _run("config", "check", "--config", str(good))
    bad = tmp_path / "bad.yaml"
    bad.write_text(good.read_text() + "limitz: {}\n")
    result = CliRunner().invoke(main, ["config", "check", "--config", str(bad)])
    assert result.exit_code != 0 and "limitz" in result.output
    missing_env = _config(tmp_path)
    data = yaml.safe_load(missing_env.read_text())
    data["upstreams"][0]["api_key_env"] = "TIERGATE_TEST_SURELY_UNSET_VAR"
    missing_env.write_text(yaml.safe_dump(data))
    result = CliRunner().invoke(main, ["config", "check", "--config", str(missing_env)])
    assert result.exit_code != 0 and "TIERGATE_TEST_SURELY_UNSET_VAR" in result.output


def test_config_check_warns_of_a_vendor_without_provider(tmp_path: Path) -> None:
    """A shared upstream without ``provider`` passes, with a warning naming it; declared, none."""
    res = CliRunner().invoke(main, ["config", "check", "--config", str(_config(tmp_path))])
    assert res.exit_code == 0 and "upstreams.0.provider: vendor (shared) declares no provider" in res.stderr
    data = yaml.safe_load(_config(tmp_path).read_text())
    data["upstreams"][0]["provider"] = "examplecloud"
    (tmp_path / "tiergate.yaml").write_text(yaml.safe_dump(data))
    res = CliRunner().invoke(main, ["config", "check", "--config", str(tmp_path / "tiergate.yaml")])
    assert res.exit_code == 0 and "warning" not in res.stderr and res.stdout.startswith("ok:")


@pytest.mark.timeout(180)
def test_serve_process_end_to_end(tmp_path: Path) -> None:
    """`tiergate serve` in its own process: healthz, readyz, and a chat through the SDK with a key
    made by `tiergate keys create`; the audit row lands in the SQLite file."""
    fake = FakeUpstream(name="vendor")
    with serve(fake.app, lifespan="off") as up:
        cfg = _config(tmp_path, up.url + "/v1")
        key = json.loads(_run("keys", "create", "--config", str(cfg), "--tenant", "acme", "--name", "x")
                         .splitlines()[0])["key"]  # fmt: skip
        with GatewayProcess(cfg, cwd=tmp_path, log=tmp_path / "gateway.log") as gw:
            assert httpx.get(gw.url + "/readyz").json()["status"] == "ready"
            client = openai.OpenAI(api_key=key, base_url=gw.url + "/v1", max_retries=0)
            reply = client.chat.completions.create(model="chat", messages=[{"role": "user", "content": "hi"}])
            assert reply.choices[0].message.content == "ok"
    assert len(fake.ledger) == 1
    import sqlite3

    with sqlite3.connect(tmp_path / "audit.db") as db:
        assert db.execute("SELECT count(*) FROM audit_requests WHERE tenant = 'acme'").fetchone()[0] == 1
