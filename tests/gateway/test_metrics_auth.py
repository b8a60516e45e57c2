"""``/metrics`` behind a bearer token (``server.metrics_token_env``): open without the setting;
with it, only ``Authorization: Bearer <the variable's value>`` is served, every other way in is a
401 in the OpenAI error shape, and a named variable that is unset refuses everything."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from click.testing import CliRunner

from tests.gateway.conftest import base_config
from tests.support.harness import FakeUpstreams, GatewayHarness

TOKEN_ENV = "TIERGATE_TEST_METRICS_TOKEN"
TOKEN = "scrape-3f9c2a7d41b84e6a9f0c"


@pytest.fixture
def guarded(fakes: FakeUpstreams, sqlite_db: str, tmp_path: Path, classifier: Any,
            monkeypatch: pytest.MonkeyPatch) -> Iterator[GatewayHarness]:  # fmt: skip
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    cfg = base_config(fakes, server={"metrics_token_env": TOKEN_ENV})
    with GatewayHarness(sqlite_db, tmp_path, cfg, classifier=classifier) as gw:
        yield gw


def _refused(r: httpx.Response) -> bool:
    return (r.status_code == 401 and r.json()["error"]["type"] == "authentication_error"
            and r.headers.get("www-authenticate", "").startswith("Bearer")
            and "tiergate_requests" not in r.text and TOKEN not in r.text)  # fmt: skip


def test_metrics_open_without_the_setting(gateway: GatewayHarness) -> None:
    r = httpx.get(gateway.url + "/metrics")
    assert r.status_code == 200 and "tiergate_requests" in r.text


def test_metrics_need_the_bearer_token(guarded: GatewayHarness) -> None:
    """Only the exact token in a Bearer header is served; near misses, other schemes, the client
    key header and a token in the query string are all refused."""
    url = guarded.url + "/metrics"
    ok = httpx.get(url, headers={"authorization": f"Bearer {TOKEN}"})
    assert ok.status_code == 200 and "tiergate_requests" in ok.text
    assert httpx.get(url, headers={"authorization": f"bearer {TOKEN}"}).status_code == 200  # scheme is case-blind
    attempts: list[dict[str, Any]] = [
        {},
        {"headers": {"authorization": "Bearer"}},
        {"headers": {"authorization": f"Bearer {TOKEN[:-1]}"}},
        {"headers": {"authorization": f"Bearer {TOKEN}x"}},
        {"headers": {"authorization": f"Bearer {TOKEN.upper()}"}},
        {"headers": {"authorization": f"Basic {TOKEN}"}},
        {"headers": {"authorization": TOKEN}},
        {"headers": {"api-key": TOKEN}},
        {"params": {"token": TOKEN}},
        {"headers": {"authorization": f"Bearer {guarded.create_key()}"}},  # a client key is not a scrape token
    ]
    bad = [a for a in attempts if not _refused(httpx.get(url, **a))]
    assert bad == []


def test_unset_token_variable_refuses_every_scrape(fakes: FakeUpstreams, sqlite_db: str, tmp_path: Path,
                                                   classifier: Any, monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """Fail closed: a setting naming a variable that is missing (or empty) never serves metrics."""
    monkeypatch.setenv(TOKEN_ENV, "")
    cfg = base_config(fakes, server={"metrics_token_env": TOKEN_ENV})
    with GatewayHarness(sqlite_db, tmp_path, cfg, classifier=classifier) as gw:
        for headers in ({}, {"authorization": "Bearer"}, {"authorization": "Bearer x"}):
            assert _refused(httpx.get(gw.url + "/metrics", headers=headers)), headers


def test_config_check_names_the_unset_metrics_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gateway.cli import main

    monkeypatch.delenv(TOKEN_ENV, raising=False)
    cfg = tmp_path / "tiergate.yaml"
    cfg.write_text(yaml.safe_dump({
        "server": {"metrics_token_env": TOKEN_ENV}, "state_dir": str(tmp_path / "var"),
        "audit": {"url": f"sqlite+aiosqlite:///{tmp_path / 'audit.db'}"},
        "upstreams": [{"name": "vendor", "base_url": "http://127.0.0.1:9/v1", "kind": "shared",
                       "models": {"chat": "c"}}],
    }))  # fmt: skip
    result = CliRunner().invoke(main, ["config", "check", "--config", str(cfg)])
    assert result.exit_code != 0 and f"server.metrics_token_env: environment variable {TOKEN_ENV}" in result.output
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    result = CliRunner().invoke(main, ["config", "check", "--config", str(cfg)])
    assert result.exit_code == 0, result.output
