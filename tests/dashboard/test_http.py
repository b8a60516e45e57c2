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
    return re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]


def _attempt(client: httpx.Client, username: str, password: str, next_path: str = "/admin/") -> httpx.Response:
    token = _signin_form(client, next_path)
    return client.post("/admin/sign-in", data={"csrf_token": token, "username": username,
                                               "password": password, "next": next_path})  # fmt: skip


def test_failed_sign_ins_lock_the_account(seeded: Seeded) -> None:
    """After five wrong passwords the account answers 429 with Retry-After, even to the right one."""
    with httpx.Client(base_url=seeded.url) as client:
        for _ in range(4):
            assert _attempt(client, "locky", "wrong password!!").status_code == 401
        locked = _attempt(client, "locky", "wrong password!!")
        assert locked.status_code == 429 and int(locked.headers["retry-after"]) >= 1
        assert "locked" in locked.text
        right = _attempt(client, "locky", PASSWORD)
        assert right.status_code == 429 and "tg_admin_session" not in right.headers.get("set-cookie", "")
        # Another admin is unaffected.
        ok = _attempt(client, "globex-admin", PASSWORD)
        assert ok.status_code == 303 and "tg_admin_session=" in ok.headers["set-cookie"]


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
        token = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
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
        client.chat.completions.create(model="chat", messages=[{"role": "user", "content": "card 4111 1111 1111 1111"}])
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
            token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]
            disclosure = ("title: t\nreference: R\nupstreams: [local]\nwindow:\n"
                          "  start: 2020-01-01T00:00:00Z\n  end: 2099-01-01T00:00:00Z\n")  # fmt: skip
            result = web.post("/admin/exposure", data={"csrf_token": token, "disclosure": disclosure},
                              files={"file": ("", b"")}).text  # fmt: skip
            assert 'data-verdict="sensitive_data_may_be_exposed"' in result
            assert re.search(r'id="matching-total">1<', result)
