"""Cross-tenant reads: with traffic from two tenants, tenant A's API key, tenant A's dashboard admin
and `tiergate exposure query --tenant A` never show a row (id or tenant name) of tenant B, while
each of them does show tenant A's own rows (so the check cannot pass on an empty page)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from click.testing import CliRunner

from gateway.cli import main
from tests.faults._gw import chat_body, one_upstream
from tests.support import FakeUpstream
from tests.support.harness import SECRETS, FakeUpstreams, GatewayHarness

PASSWORD = "correct horse battery staple 42"


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, classifier: Any) -> Iterator[dict[str, Any]]:
    tmp: Path = tmp_path_factory.mktemp("tenants")
    db_url = f"sqlite+aiosqlite:///{tmp / 'audit.db'}"
    with FakeUpstreams(FakeUpstream(name="vendor")) as fakes:
        upstreams = [one_upstream(fakes.base_url("vendor"))]
        with GatewayHarness(db_url, tmp, {"upstreams": upstreams}, classifier=classifier) as gw:
            keys = {t: gw.create_key(t) for t in ("acmecorp", "betaworks")}
            ids: dict[str, list[str]] = {t: [] for t in keys}
            for tenant, key in keys.items():
                for i in range(3):
                    r = httpx.post(gw.url + "/v1/chat/completions", json=chat_body(f"Hello number {i}."),
                                   headers={"authorization": f"Bearer {key}"}, timeout=30)  # fmt: skip
                    assert r.status_code == 200
                    ids[tenant].append(r.headers["x-request-id"])
            from audit.admins import create_admin

            gw.admin(lambda st: create_admin(st.engine, "acme-admin", PASSWORD, "acmecorp"))
            config = tmp / "tiergate.yaml"
            config.write_text(yaml.safe_dump({"upstreams": upstreams, "secrets": SECRETS, "state_dir": str(tmp),
                                              "audit": {"url": db_url, "checkpoint_dir": str(tmp / "cp")}}))  # fmt: skip
            yield {"gw": gw, "keys": keys, "ids": ids, "config": config}


def _leaks(text: str, ids: list[str]) -> list[str]:
    return [s for s in [*ids, "betaworks"] if s in text]


def test_api_key_sees_only_its_own_tenant(env: dict[str, Any]) -> None:
    """Tenant A's key on every readable /v1 route gets nothing of tenant B."""
    gw, key = env["gw"], env["keys"]["acmecorp"]
    for path in ("/v1/models", "/v1/models/chat", f"/v1/models/{env['ids']['betaworks'][0]}"):
        r = httpx.get(gw.url + path, headers={"authorization": f"Bearer {key}"}, timeout=30)
        assert r.status_code in (200, 404)
        assert _leaks(r.text, env["ids"]["betaworks"]) == []


def _sign_in(client: httpx.Client, username: str, password: str) -> None:
    form = client.get("/admin/sign-in")
    token = re.search(r'name="csrf_token" value="([^"]+)"', form.text)
    assert token, "the sign-in form carries a CSRF token"
    r = client.post("/admin/sign-in", data={"username": username, "password": password,
                                            "csrf_token": token.group(1)},
                    headers={"origin": str(client.base_url).rstrip("/")})  # fmt: skip
    assert r.status_code in (200, 302, 303) and "tg_admin_session" in client.cookies


def test_tenant_admin_dashboard_sees_only_its_own_tenant(env: dict[str, Any]) -> None:
    """A tenant-scoped admin's pages list tenant A's requests and none of tenant B's, even when
    asking for B by filter or by request id."""
    gw, ids = env["gw"], env["ids"]
    with httpx.Client(base_url=gw.url, timeout=30, follow_redirects=True) as client:
        _sign_in(client, "acme-admin", PASSWORD)
        listing = client.get("/admin/requests")
        assert listing.status_code == 200
        assert any(i in listing.text for i in ids["acmecorp"])  # positive control
        pages = ["/admin", "/admin/overview", "/admin/requests", "/admin/requests?tenant=betaworks",
                 "/admin/keys", "/admin/exposure", "/admin/upstreams"]  # fmt: skip
        leaked = {p: _leaks(client.get(p).text, ids["betaworks"]) for p in pages}
        assert {p: v for p, v in leaked.items() if v} == {}
        for rid in ids["betaworks"]:
            r = client.get(f"/admin/requests/{rid}")
            assert r.status_code == 404 and rid not in r.text
        own = client.get(f"/admin/requests/{ids['acmecorp'][0]}")
        assert own.status_code == 200 and ids["acmecorp"][0] in own.text


def test_cli_tenant_filter_returns_only_that_tenant(env: dict[str, Any]) -> None:
    """`tiergate exposure query --tenant A --format json` prints A's rows and none of B's."""
    result = CliRunner().invoke(main, ["exposure", "query", "--config", str(env["config"]),
                                       "--tenant", "acmecorp", "--format", "json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert all(i in out for i in env["ids"]["acmecorp"])
    assert _leaks(out, env["ids"]["betaworks"]) == []
