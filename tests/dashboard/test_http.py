"""The dashboard over plain HTTP (no browser needed): throttling, headers, redirects, the CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx

from gateway.dashboard.security import FailureWindow
from tests.dashboard.conftest import PASSWORD, Seeded, make_fakes, start_gateway


def _signin_form(client: httpx.Client, next_path: str = "/admin/") -> str:
    page = client.get("/admin/sign-in", params={"next": next_path})
    return re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]  # no match fails the test right here


def _attempt(client: httpx.Client, username: str, password: str, next_path: str = "/admin/") -> httpx.Response:
    token = _signin_form(client, next_path)
    return client.post("/admin/sign-in", data={"csrf_token": token, "username": username,
                                               "password": password, "next": next_path})  # fmt: skip


def _client_at(seeded: Seeded, address: str) -> httpx.Client:
    """A browser on another machine: its connections come from ``address`` (any 127/8 address
    reaches the gateway's loopback socket), so the gateway sees a different client."""
    return httpx.Client(base_url=seeded.url, transport=httpx.HTTPTransport(local_address=address))


def _same(a: httpx.Response, b: httpx.Response) -> bool:
    """Byte for byte the same answer (status, headers, body), but for the Date header."""

    def head(r: httpx.Response) -> list[tuple[bytes, bytes]]:
        return [(k, v) for k, v in r.headers.raw if k.lower() != b"date"]

    return a.status_code == b.status_code and head(a) == head(b) and a.content == b.content


def test_failed_sign_ins_lock_the_account_for_that_client(seeded: Seeded) -> None:
    """After five wrong passwords from one client, that client is refused even the right password,
    with the very answer a wrong password gets (nothing says "locked"); another admin is unaffected."""
    with httpx.Client(base_url=seeded.url) as client:
        token = _signin_form(client)

        def attempt(username: str, password: str) -> httpx.Response:
            return client.post("/admin/sign-in", data={"csrf_token": token, "username": username,
                                                       "password": password, "next": "/admin/"})  # fmt: skip

        first = attempt("locky", "wrong password!!")
        assert first.status_code == 401 and "retry-after" not in first.headers
        for _ in range(4):
            assert _same(attempt("locky", "wrong password!!"), first)
        right = attempt("locky", PASSWORD)
        assert _same(right, first) and "tg_admin_session" not in right.headers.get("set-cookie", "")
        assert "locked" not in right.text.lower()
        ok = attempt("globex-admin", PASSWORD)
        assert ok.status_code == 303 and "tg_admin_session=" in ok.headers["set-cookie"]


def test_unknown_user_wrong_password_and_lock_answer_alike(seeded: Seeded) -> None:
    """An unknown username, a known one with a wrong password, a disabled-looking guess and a
    locked pair all get byte-identical answers: the sign-in form tells no one which admins exist."""
    with _client_at(seeded, "127.0.0.3") as client:
        token = _signin_form(client)

        def attempt(username: str, password: str) -> httpx.Response:
            return client.post("/admin/sign-in", data={"csrf_token": token, "username": username,
                                                       "password": password, "next": "/admin/"})  # fmt: skip

        unknown = attempt("no-such-admin", "wrong password!!")
        known = attempt("acme-admin", "wrong password!!")
        assert unknown.status_code == 401
        assert _same(unknown, known), (unknown.headers, known.headers)
        assert "no-such-admin" not in unknown.text and "acme-admin" not in known.text
        for _ in range(6):  # past the lock threshold for both names, from this client
            assert _same(attempt("no-such-admin", "wrong password!!"), unknown)
            assert _same(attempt("acme-admin", "wrong password!!"), unknown)
        assert _same(attempt("acme-admin", PASSWORD), unknown)  # locked here: same answer


def test_lockout_from_one_client_spares_the_admin_elsewhere(seeded: Seeded) -> None:
    """An attacker at one address locking out ``victim`` does not lock out ``victim`` signing in
    from another address, while the attacker stays locked out even with the right password."""
    with _client_at(seeded, "127.0.0.2") as attacker, httpx.Client(base_url=seeded.url) as admin:
        for _ in range(8):
            assert _attempt(attacker, "victim", "guess guess guess").status_code == 401
        signed_in = _attempt(admin, "victim", PASSWORD)
        assert signed_in.status_code == 303 and "tg_admin_session=" in signed_in.headers["set-cookie"]
        assert _attempt(attacker, "victim", PASSWORD).status_code == 401  # still locked there
    locks = seeded.gw.rows("SELECT * FROM admin_sign_in_failures")
    assert all(b"victim" not in bytes(r["username_hash"]) for r in locks)  # no names at rest
    assert {r["client"] for r in locks if r["locked_until_us"]} >= {"127.0.0.2"}


def test_address_throttle_window() -> None:
    """One address gets ``limit`` failures per window across all usernames, then must wait."""
    now = [0.0]
    window = FailureWindow(3, 60, clock=lambda: now[0])
    for _ in range(3):
        assert window.retry_after("1.2.3.4") == 0
        window.fail("1.2.3.4")
    assert window.retry_after("1.2.3.4") == 61
    assert window.retry_after("5.6.7.8") == 0
    now[0] = 30
    assert 1 <= window.retry_after("1.2.3.4") <= 31
    now[0] = 60.5
    assert window.retry_after("1.2.3.4") == 0


def test_headers_cookie_and_open_redirect(seeded: Seeded) -> None:
    """Pages carry a strict CSP and no-store; the cookie is HttpOnly+SameSite; ``next`` stays local."""
    with httpx.Client(base_url=seeded.url) as client:
        resp = _attempt(client, "root", PASSWORD, next_path="//evil.example/phish")
        assert resp.status_code == 303 and resp.headers["location"] == "/admin/"
        cookie = resp.headers["set-cookie"]
        assert "HttpOnly" in cookie and "samesite=strict" in cookie.lower() and "Path=/admin" in cookie
        page = client.get("/admin/requests")
        assert page.status_code == 200
        csp = page.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp and "unsafe-inline" not in csp
        assert page.headers["cache-control"] == "no-store" and page.headers["x-frame-options"] == "DENY"
        assert "<script>" not in page.text  # no inline script anywhere
        # A form posted from another origin is refused before anything else is looked at.
        token = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]  # no match fails the test right here
        forged = client.post("/admin/keys", data={"csrf_token": token, "tenant": "x", "name": "y"},
                             headers={"origin": "http://evil.example"})  # fmt: skip
        assert forged.status_code == 403
        assert seeded.count("SELECT COUNT(*) FROM api_keys WHERE tenant = 'x'") == 0
        # Errors inside the dashboard are HTML pages that say nothing about what exists.
        bad = client.get("/admin/requests/" + "x" * 300)
        assert bad.status_code == 404 and "text/html" in bad.headers["content-type"]
        assert "x" * 300 not in bad.text
        out = client.post("/admin/sign-out", data={"csrf_token": token})
        assert out.status_code == 303
        assert client.get("/admin/requests").status_code == 303


def _cli(*args: str, stdin: str = "", state: Path) -> Any:
    # In-process: a fresh interpreter pays seconds of imports per call on a shared machine.
    import threading

    from click.testing import CliRunner

    from gateway.cli import main

    # A thread of its own: Playwright's sync API keeps an event loop running in this one, and the
    # command calls asyncio.run().
    box: list[Any] = []
    runner = CliRunner()
    worker = threading.Thread(target=lambda: box.append(runner.invoke(
        main, ["admin", *args], input=stdin, env={"TIERGATE_STATE_DIR": str(state)})))  # fmt: skip
    worker.start()
    worker.join(120)
    return box[0]


def test_admin_cli(sqlite_db: str, tmp_path: Path) -> None:
    """`tiergate admin` creates platform and tenant admins, lists them and refuses bad input."""
    state = tmp_path / "state"
    made = _cli("create-user", "ops", "--platform", "--password-stdin", "--db-url", sqlite_db,
                stdin="a very long password\n", state=state)  # fmt: skip
    assert made.exit_code == 0, made.output
    assert json.loads(made.stdout) == {"username": "ops", "tenant": None, "platform": True}
    dup = _cli("create-user", "ops", "--tenant", "acme", "--password-stdin", "--db-url", sqlite_db,
               stdin="a very long password\n", state=state)  # fmt: skip
    assert dup.exit_code != 0 and "already exists" in dup.output
    both = _cli("create-user", "x", "--password-stdin", "--db-url", sqlite_db, stdin="pw\n", state=state)
    assert both.exit_code != 0 and "exactly one of" in both.output
    short = _cli("create-user", "y", "--tenant", "acme", "--password-stdin", "--db-url", sqlite_db,
                 stdin="short\n", state=state)  # fmt: skip
    assert short.exit_code != 0 and "12 characters" in short.output
    assert _cli("disable", "ops", "--db-url", sqlite_db, state=state).exit_code == 0
    listed = _cli("list", "--db-url", sqlite_db, state=state)
    rows = [json.loads(line) for line in listed.stdout.splitlines()]
    assert [(r["username"], r["platform"], r["disabled"]) for r in rows] == [("ops", True, True)]
    assert "argon2" not in listed.stdout
    assert _cli("delete", "nobody", "--db-url", sqlite_db, state=state).exit_code != 0


def test_every_page_on_postgresql(postgres_db: str, tmp_path: Path, classifier: Any) -> None:
    """On PostgreSQL too, every page renders the rows of real traffic (tier, health, exposure)."""
    from audit.admins import create_admin

    with make_fakes() as fakes, start_gateway(postgres_db, tmp_path, fakes, classifier) as gw:
        gw.admin(lambda st: create_admin(st.engine, "root", PASSWORD, None))
        client = gw.openai(gw.create_key("acme"))
        client.chat.completions.create(model="chat", messages=[{"role": "user", "content": "hello"}])
        client.chat.completions.create(model="chat", messages=[{"role": "user", "content": "card 4556 0172 8390 6414"}])
        with httpx.Client(base_url=gw.url) as web:
            assert _attempt(web, "root", PASSWORD).status_code == 303
            overview = web.get("/admin/", params={"range": "1h"}).text
            assert re.search(r'id="total-requests">2<', overview) and re.search(r'id="tier3-total">1<', overview)
            rows = web.get("/admin/requests", params={"tier": "3"}).text
            assert rows.count("data-request-id=") == 1 and "<strong>1</strong> matching" in rows
            ups = web.get("/admin/upstreams").text
            assert "1 ok · 0 failed" in ups and "hardened" in ups
            assert "acme" in web.get("/admin/keys").text
            page = web.get("/admin/policy").text
            token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]  # no match fails the test right here
            disclosure = ("title: t\nreference: R\nupstreams: [local]\nwindow:\n"
                          "  start: 2020-01-01T00:00:00Z\n  end: 2099-01-01T00:00:00Z\n")  # fmt: skip
            result = web.post("/admin/exposure", data={"csrf_token": token, "disclosure": disclosure},
                              files={"file": ("", b"")}).text  # fmt: skip
            assert 'data-verdict="sensitive_data_may_be_exposed"' in result
            assert re.search(r'id="matching-total">1<', result)


def test_dashboard_settings_reach_the_pages(sqlite_db: str, tmp_path: Path, classifier: Any) -> None:
    """The ``dashboard:`` block of the settings is what the router runs with: the session cookie's
    lifetime, the address throttle and the requests page's size (not the built-in defaults)."""
    from audit.admins import create_admin
    from tests.dashboard.conftest import _config, _seed_old_rows
    from tests.support.harness import GatewayHarness

    knobs = {"session_lifetime_s": 120, "session_idle_s": 60, "ip_failures": 2, "page_size": 7}
    with make_fakes() as fakes, GatewayHarness(sqlite_db, tmp_path, {**_config(fakes), "dashboard": knobs},
                                               classifier=classifier) as gw:  # fmt: skip
        gw.admin(lambda st: create_admin(st.engine, "root", PASSWORD, None))
        _seed_old_rows(gw)
        with httpx.Client(base_url=gw.url) as web:
            signed_in = _attempt(web, "root", PASSWORD)
            assert signed_in.status_code == 303
            assert re.search(r"tg_admin_session=[^;]+;.*Max-Age=120", signed_in.headers["set-cookie"], re.I)
            assert web.get("/admin/requests").text.count("data-request-id=") == 7
        with _client_at(Seeded(gw, fakes, {}), "127.0.0.4") as other:
            for _ in range(2):
                assert "retry-after" not in _attempt(other, "nobody", "wrong password!!").headers
            assert "retry-after" in _attempt(other, "nobody", "wrong password!!").headers
