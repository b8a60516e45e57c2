"""Every route of the real app is enumerated and classified by path; each admin route refuses every
unauthenticated way in (no session, a forged cookie, a client API key, path tricks, forwarded-for
headers), each API route needs a client key, and a route that fits no class fails the test, so
routes added later (the dashboard's included) are covered without editing this file."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.faults._gw import one_upstream
from tests.support import FakeUpstream
from tests.support.harness import FakeUpstreams, GatewayHarness

# Open by design, each for a reason; anything else under these prefixes is not open.
PUBLIC = {
    "/healthz": "liveness probe",
    "/readyz": "readiness probe (says only ok / unavailable)",
    "/metrics": "Prometheus scrape: counts without tenants, keys or prompt data",
    "/admin/sign-in": "the sign-in form itself (POST needs the pre-sign CSRF cookie)",
}
PUBLIC_PREFIXES = {
    "/schema": "the OpenAPI document of the gateway's own routes (not the dashboard, not the proxy routes)",
    "/admin/static/": "stylesheet and scripts",
}
API_PREFIX = "/v1/"
ADMIN_PREFIX = "/admin"
SAMPLE = {"request_id": "req_0123", "disclosure_id": "1", "fmt": "json", "key_id": "abc123", "model": "chat",
          "file_path": "style.css", "path": "x"}  # fmt: skip
_PARAM = re.compile(r"\{(\w+)(?::\w+)?\}")


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, classifier: Any) -> Iterator[tuple[GatewayHarness, str, Any]]:
    from gateway.app import create_app

    tmp: Path = tmp_path_factory.mktemp("routes")
    with FakeUpstreams(FakeUpstream(name="vendor")) as fakes:
        cfg = {"upstreams": [one_upstream(fakes.base_url("vendor"))]}
        with GatewayHarness(f"sqlite+aiosqlite:///{tmp / 'audit.db'}", tmp, cfg, classifier=classifier) as gw:
            app = create_app(gw.settings)  # the same route table the server runs; only listed here
            yield gw, gw.create_key(), app


def _concrete(path: str) -> str:
    return _PARAM.sub(lambda m: SAMPLE.get(m.group(1), "x"), path)


def _classify(path: str) -> str:
    if path in PUBLIC or any(path.startswith(p) for p in PUBLIC_PREFIXES):
        return "public"
    if path.startswith(API_PREFIX):
        return "api"
    if path == ADMIN_PREFIX or path.startswith(ADMIN_PREFIX + "/"):
        return "admin"
    return "unclassified"


def _routes(app: Any) -> list[tuple[str, str, str]]:
    out = []
    for route in app.routes:
        # A plain-ASGI route (the proxy's hot path) declares no methods: it serves POST and answers
        # every other method with 405 itself (tested below).
        methods = route.methods - {"OPTIONS", "HEAD"} if route.methods else {"POST"}
        for method in sorted(methods):
            out.append((_classify(route.path), method, route.path))
    return out


def _asgi_paths(app: Any) -> list[str]:
    return [route.path for route in app.routes if not route.methods]


def _refused(r: httpx.Response) -> bool:
    """Refused: a redirect to sign-in, 401/403/404/405, or a 4xx error page; never admin content."""
    if r.status_code in (301, 302, 303, 307, 308):
        return "/admin/sign-in" in r.headers.get("location", "") or not r.headers.get("location", "").startswith(
            "/admin/"
        )
    return r.status_code in (400, 401, 403, 404, 405, 413, 422, 429)


def test_every_route_is_classified(env: tuple[GatewayHarness, str, Any]) -> None:
    """No route falls outside the public / API / admin classes (a new prefix must be decided on)."""
    _gw, _key, app = env
    routes = _routes(app)
    assert [r for r in routes if r[0] == "unclassified"] == []
    assert {c for c, _m, _p in routes} >= {"public", "api"}


def test_admin_routes_refuse_every_unauthenticated_way_in(env: tuple[GatewayHarness, str, Any]) -> None:
    """Each admin route, with no session, a forged session cookie, a client API key, spoofed proxy
    headers or a disguised path, is refused (sign-in redirect or 4xx), never served."""
    gw, key, app = env
    admin = [(m, p) for c, m, p in _routes(app) if c == "admin"]
    attempts = [
        {},
        {"cookies": {"tg_admin_session": "forged-session-token"}},
        {"headers": {"authorization": f"Bearer {key}"}},
        {
            "headers": {
                "x-forwarded-for": "127.0.0.1",
                "x-real-ip": "127.0.0.1",
                "x-original-url": "/admin/sign-in",
                "x-forwarded-user": "admin",
                "remote-user": "admin",
            }
        },  # fmt: skip
    ]
    served: list[str] = []
    with httpx.Client(base_url=gw.url, timeout=30, follow_redirects=False) as client:
        for method, path in admin:
            url = _concrete(path)
            disguises = {url, url + "/", url.upper(), "/" + url, url.replace("/admin", "/admin/.", 1),
                         url.replace("/admin", "/v1/../admin", 1), url.replace("/admin/", "/admin%2F", 1),
                         url + "?admin=1", url + ";jsessionid=x"}  # fmt: skip
            # Every credential trick on the real path; every path trick with no credentials.
            tries = [(url, extra) for extra in attempts] + [(t, {}) for t in sorted(disguises - {url})]
            for target, extra in tries:
                client.cookies.clear()
                for name, value in extra.get("cookies", {}).items():
                    client.cookies.set(name, value)
                data = {"csrf_token": "guess"} if method != "GET" else None
                # Absolute, so that "//admin/…" reaches the server as a path (relative to the base
                # URL, httpx reads it as a host named "admin" and asks for "/metrics" instead).
                r = client.request(method, gw.url + target, data=data, headers=extra.get("headers"))
                if not _refused(r):
                    served.append(f"{method} {target} {sorted(extra)} -> {r.status_code}")
    assert len(admin) >= 1
    assert served == []


def _error_kind(path: str, r: httpx.Response) -> str | None:
    """The error's code in its protocol's shape: Anthropic's (``{"type": "error", "error": {"type":
    …}}``) on /v1/messages, OpenAI's (``{"error": {"code": …}}``) everywhere else."""
    body = r.json()
    if path.startswith("/v1/messages"):
        return body["error"]["type"] if body.get("type") == "error" else None
    return body["error"]["code"]


def test_api_routes_need_a_client_key(env: tuple[GatewayHarness, str, Any]) -> None:
    """Each /v1 route without a key, with a malformed or unknown key, gets 401 in its protocol's
    error shape."""
    gw, key, app = env
    api = [(m, p) for c, m, p in _routes(app) if c == "api"]
    body = {"model": "chat", "messages": [{"role": "user", "content": "hi"}], "prompt": "hi", "input": "hi"}
    bad: list[str] = []
    for method, path in api:
        for headers in ({}, {"authorization": "Bearer"}, {"authorization": "Basic YWRtaW46YWRtaW4="},
                        {"authorization": "Bearer tg_0000000000000000_" + "0" * 40},
                        {"authorization": f"Bearer {key[:-2]}xx"}, {"api-key": "nope"}):  # fmt: skip
            r = httpx.request(method, gw.url + _concrete(path), headers=headers, timeout=30,
                              json=body if method == "POST" else None)  # fmt: skip
            if r.status_code != 401 or _error_kind(path, r) not in ("invalid_api_key", "authentication_error"):
                bad.append(f"{method} {path} {headers} -> {r.status_code}")
    assert len(api) >= 3 and bad == []


def test_proxy_routes_refuse_other_methods(env: tuple[GatewayHarness, str, Any]) -> None:
    """The plain-ASGI proxy routes answer any method but POST with 405 in their protocol's error
    shape, with or without a key, and forward nothing."""
    gw, key, app = env
    paths = _asgi_paths(app)
    assert set(paths) >= {"/v1/chat/completions", "/v1/completions", "/v1/embeddings"}
    bad: list[str] = []
    for path in paths:
        for method in ("GET", "PUT", "DELETE", "PATCH"):
            for headers in ({}, {"authorization": f"Bearer {key}"}):
                r = httpx.request(method, gw.url + path, headers=headers, timeout=30)
                if r.status_code != 405 or _error_kind(path, r) not in ("method_not_allowed", "invalid_request_error"):
                    bad.append(f"{method} {path} {sorted(headers)} -> {r.status_code}")
    assert bad == []
