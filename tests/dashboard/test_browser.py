"""The dashboard in real headless Chromium against the gateway on 127.0.0.1."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import openai
import pytest

from tests.dashboard.conftest import OLD_ROWS, PASSWORD, Seeded, shot, sign_in
from tests.support.servers import ServerThread

pytestmark = pytest.mark.browser

PAGES = ["/admin/", "/admin/requests", "/admin/exposure", "/admin/upstreams", "/admin/keys",
         "/admin/policy", "/admin/requests/some-id", "/admin/exposure/1"]  # fmt: skip


def _num(pg: Any, selector: str) -> int:
    return int(pg.inner_text(selector).strip())


def test_unauthenticated_visits_are_redirected_to_sign_in(page: Any) -> None:
    """Every dashboard page sends a signed-out browser to the sign-in form, remembering where it was."""
    for path in PAGES:
        page.goto(path)
        assert re.search(r"/admin/sign-in\?next=", page.url), path
        assert page.is_visible("#signin-form")
        assert not page.is_visible("#who")
    # Writes without a session are refused too (no cookie: sent to sign in, nothing done).
    for path in ("/admin/keys", "/admin/policy/try", "/admin/exposure", "/admin/sign-out"):
        resp = page.request.post(path, form={"csrf_token": "x"}, max_redirects=0)
        assert resp.status == 303 and "/admin/sign-in" in resp.headers["location"], path


def test_sign_in_and_sign_out(page: Any, browser: Any, seeded: Seeded) -> None:
    """A wrong password is refused; the right one signs in; signing out ends the session server-side."""
    page.goto("/admin/requests")
    page.fill("#username", "root")
    page.fill("#password", "not the password!")
    page.click("#sign-in")
    assert "Wrong username or password" in page.inner_text("#signin-error")
    assert page.input_value("#username") == ""  # a refusal echoes nothing back
    page.fill("#username", "root")
    page.fill("#password", PASSWORD)
    page.click("#sign-in")
    page.wait_for_selector("#who")
    assert page.url.endswith("/admin/requests")  # back where the visit started
    assert "root · platform admin" in page.inner_text("#who")
    cookie = next(c for c in page.context.cookies() if c["name"] == "tg_admin_session")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["path"] == "/admin"
    assert page.evaluate("document.cookie") == ""  # invisible to scripts
    page.click("#sign-out")
    page.wait_for_selector("#signin-form")
    page.goto("/admin/keys")
    assert "/admin/sign-in" in page.url
    # The old cookie, replayed in a fresh browser, is worth nothing: the session row is gone.
    other = browser.new_context(base_url=seeded.url)
    try:
        other.add_cookies([{"name": cookie["name"], "value": cookie["value"], "url": seeded.url + "/admin"}])
        replay = other.new_page()
        replay.goto("/admin/keys")
        assert "/admin/sign-in" in replay.url
    finally:
        other.close()


def test_overview_shows_seeded_traffic(page: Any, seeded: Seeded) -> None:
    """The overview's totals, tables and charts match the audit rows of the chosen time range."""
    sign_in(page, "root")
    page.wait_for_selector("body[data-charts=drawn]")
    recent = "SELECT COUNT(*) FROM audit_requests WHERE request_id NOT LIKE 'old-%'"
    assert _num(page, "#total-requests") == seeded.count(recent)
    for tier in (1, 2, 3):
        assert _num(page, f"#tier{tier}-total") == seeded.count(recent + f" AND tier = {tier}")
    assert _num(page, "#tier3-total") >= 1 and _num(page, "#tier2-total") >= 2
    assert "tier_not_allowed" in page.inner_text("#table-refusals")
    assert "EMAIL_ADDRESS" in page.inner_text("#table-stripped")
    assert _num(page, "#integrity-total") == 1
    assert _num(page, "#probe-alarms") == 1
    upstreams = page.inner_text("#table-upstreams")
    assert "vendor · vendor-chat" in upstreams and "local · local-chat" in upstreams
    for canvas in ("#chart-tiers", "#chart-upstreams", "#chart-refusals", "#chart-stripped"):
        assert page.eval_on_selector(canvas, "c => c.width > 0 && c.height > 0")
    shot(page, "overview")
    # The picker: the 7-day range also takes in the sixty rows from two days ago.
    page.click("a[data-range='7d']")
    page.wait_for_selector("body[data-charts=drawn]")
    assert _num(page, "#total-requests") == seeded.count("SELECT COUNT(*) FROM audit_requests")
    assert _num(page, "#total-requests") >= OLD_ROWS


def test_requests_filter_and_paging(page: Any, seeded: Seeded) -> None:
    """The requests page filters by tier and tenant and pages through older rows by keyset."""
    sign_in(page, "root", start="/admin/requests")
    total = seeded.count("SELECT COUNT(*) FROM audit_requests")
    assert f"{total} matching" in page.inner_text("#match-count")
    assert page.locator("#request-rows tbody tr").count() == 50
    page.click("#next-page")
    assert page.locator("#request-rows tbody tr").count() == total - 50
    ids = set(page.eval_on_selector_all("#request-rows tbody tr", "rs => rs.map(r => r.dataset.requestId)"))
    assert "old-globex-000" in ids  # the oldest row is on the last page
    page.goto("/admin/requests")
    page.select_option("select[name=tier]", "3")
    page.click("#apply-filters")
    rows = page.locator("#request-rows tbody tr")
    assert rows.count() == seeded.count("SELECT COUNT(*) FROM audit_requests WHERE tier = 3") >= 1
    assert set(page.eval_on_selector_all("#request-rows .tier-cell", "cs => cs.map(c => c.textContent)")) == {"3"}
    page.fill("input[name=tenant]", "globex")
    page.select_option("select[name=tier]", "")
    page.fill("input[name=min_tokens]", "150")
    page.click("#apply-filters")
    expected = seeded.count("SELECT COUNT(*) FROM audit_requests WHERE tenant = 'globex' AND prompt_tokens >= 150")
    assert f"{expected} matching" in page.inner_text("#match-count")
    page.click("#request-rows tbody tr:first-child a")
    assert page.inner_text("#detail-tenant") == "globex"
    shot(page, "request-detail")


def test_upstreams_keys_and_policy_pages(page: Any, seeded: Seeded) -> None:
    """Upstreams show kind, tier, safe length, engine manifest and last probe; keys and policy render."""
    sign_in(page, "root", start="/admin/upstreams")
    vendor = page.locator("tr[data-upstream=vendor]")
    local = page.locator("tr[data-upstream=local]")
    assert vendor.locator(".kind").inner_text() == "shared"
    assert vendor.locator(".max-tier").inner_text() == "Tier 2"
    assert "90000 tokens" in vendor.locator(".safe-tokens").inner_text()
    assert "FAILED" in vendor.locator(".probe").inner_text()
    outcomes = seeded.gw.rows(
        "SELECT o.status FROM audit_requests r JOIN audit_outcomes o ON o.request_id = r.request_id "
        "WHERE r.upstream = 'vendor' AND r.forwarded AND r.request_id NOT LIKE 'old-%'"
    )
    ok = sum(1 for o in outcomes if o["status"] == "ok")
    failed = len(outcomes) - ok
    assert failed >= 1  # the seeded integrity failure
    health = vendor.locator(".health").inner_text()
    assert f"{ok} ok · {failed} failed" in health
    assert health.startswith("failing" if failed * 10 > ok + failed else "healthy")
    assert local.locator(".kind").inner_text() == "onprem"
    assert local.locator(".hardened").inner_text() == "hardened"
    local.locator("details.manifest summary").click()
    assert "kv_zeroing" in local.locator(".manifest").inner_text()
    assert "passed" in local.locator(".probe").inner_text()
    shot(page, "upstreams")

    page.goto("/admin/keys")
    listed = set(page.eval_on_selector_all("#keys tbody tr", "rs => rs.map(r => r.dataset.keyId)"))
    stored = {r["key_id"] for r in seeded.gw.rows("SELECT key_id FROM api_keys")}
    assert stored <= listed
    assert "acme" in page.inner_text("#keys") and "globex" in page.inner_text("#keys")

    page.goto("/admin/policy")
    assert "dedicated, onprem" in page.inner_text("#rule-tier3")
    assert "CREDIT_CARD" in page.inner_text("#rule-tier3")
    before = seeded.count("SELECT COUNT(*) FROM audit_requests")
    sample = "Ask eve@corp.example.com about card 4556 0172 8390 6414 — TRYIT-SAMPLE-7731"
    page.fill("#sample", sample)
    page.click("#try-it")
    assert page.get_attribute("#try-result", "data-tier") == "3"
    marks = page.eval_on_selector_all(
        "#highlighted mark", "ms => ms.map(m => [m.dataset.entity, m.firstChild.textContent])"
    )
    assert ["EMAIL_ADDRESS", "eve@corp.example.com"] in marks
    assert ["CREDIT_CARD", "4556 0172 8390 6414"] in marks
    shot(page, "policy-try-it")
    # Nothing stored: no audit row, and the sample is nowhere in the database files.
    assert seeded.count("SELECT COUNT(*) FROM audit_requests") == before
    folder = seeded.gw.db_url.split("///", 1)[1].rsplit("/", 1)[0]
    from pathlib import Path

    for f in Path(folder).glob("audit.db*"):
        assert b"TRYIT-SAMPLE-7731" not in f.read_bytes()


DISCLOSURE = """title: Cross-talk on the vendor's shared pool
reference: VENDOR-2026-0099
upstreams: [vendor, local]
window:
  start: {start}
  end: 2099-01-01T00:00:00Z
"""


def test_exposure_flow_end_to_end(page: Any, seeded: Seeded, tmp_path: Any) -> None:
    """Paste a disclosure, see the verdict and matches, download Markdown and JSON that agree."""
    sign_in(page, "root", start="/admin/exposure")
    page.fill("#disclosure", "title: broken\nwindow: [")
    page.click("#assess")
    assert "line" in page.inner_text("#disclosure-error")
    recent = "2026-01-01T00:00:00Z"
    page.fill("#disclosure", DISCLOSURE.format(start=recent))
    page.click("#assess")
    expected = seeded.count("SELECT COUNT(*) FROM audit_requests WHERE forwarded AND upstream IN ('vendor','local')")
    assert page.get_attribute("#verdict", "data-verdict") == "sensitive_data_may_be_exposed"
    assert _num(page, "#matching-total") == expected
    assert "acme" in page.inner_text("#tenants-to-contact")
    assert page.locator("#tier3-rows tbody tr").count() >= 1
    shot(page, "exposure-assessment")
    with page.expect_download() as info:
        page.click("#download-md")
    md = Path(info.value.path()).read_text(encoding="utf-8")
    assert "Verdict: `sensitive_data_may_be_exposed`" in md and f"Matching requests: **{expected}**" in md
    with page.expect_download() as info:
        page.click("#download-json")
    report = json.loads(Path(info.value.path()).read_text(encoding="utf-8"))
    assert report["total"] == expected and report["verdict"] == "sensitive_data_may_be_exposed"
    assert report["disclosure"]["reference"] == "VENDOR-2026-0099"

    # Upload a file instead: a window long before any traffic matches nothing.
    old = tmp_path / "old.yaml"
    old.write_text(DISCLOSURE.format(start="2020-01-01T00:00:00Z").replace("2099-01-01", "2020-02-01"))
    page.goto("/admin/exposure")
    page.fill("#disclosure", "")
    page.set_input_files("#disclosure-file", str(old))
    page.click("#assess")
    assert page.get_attribute("#verdict", "data-verdict") == "nothing_matched"
    assert _num(page, "#matching-total") == 0


def test_key_created_in_page_works_with_openai_sdk(page: Any, seeded: Seeded) -> None:
    """A key created in the page answers through the official SDK; after revoking it, it is refused."""
    sign_in(page, "root", start="/admin/keys")
    page.fill("#key-tenant", "initech")
    page.fill("#key-name", "browser-made")
    page.select_option("#key-tier", "2")
    page.click("#create-key")
    key = page.inner_text("#new-key").strip()
    assert key.startswith("tg_")
    shot(page, "key-created")
    page.goto("/admin/keys")
    assert key not in page.content()  # shown once, never again
    client = seeded.gw.openai(key)
    before = len(seeded.fakes["vendor"].ledger)
    answer = client.chat.completions.create(model="chat", messages=[{"role": "user", "content": "hi there"}])
    assert answer.choices[0].message.content == "ok"
    assert len(seeded.fakes["vendor"].ledger) == before + 1
    rows = seeded.gw.rows("SELECT tenant FROM audit_requests ORDER BY seq DESC LIMIT 1")
    assert rows[0]["tenant"] == "initech"
    key_id = key.split("_")[1]
    page.click(f"tr[data-key-id='{key_id}'] button.revoke")
    assert key_id in page.inner_text("#revoked-flash")
    assert "revoked" in page.inner_text(f"tr[data-key-id='{key_id}'] .state")
    with pytest.raises(openai.AuthenticationError):
        client.chat.completions.create(model="chat", messages=[{"role": "user", "content": "hi"}])


def test_csrf_rejected(page: Any, browser: Any, seeded: Seeded) -> None:
    """A forged CSRF token and a cross-site form are refused, and neither creates a key."""
    count = "SELECT COUNT(*) FROM api_keys WHERE tenant = 'forged'"
    sign_in(page, "root", start="/admin/keys")
    page.fill("#key-tenant", "forged")
    page.fill("#key-name", "should-not-exist")
    page.eval_on_selector("#create-key-form input[name=csrf_token]", "i => i.value = 'forged-token'")
    page.click("#create-key")
    assert "Form expired or forged" in page.inner_text("h1")
    assert seeded.count(count) == 0
    shot(page, "csrf-rejected")

    # Another site (another origin on 127.0.0.1) auto-submits a form at the dashboard.
    html = (f'<form id="f" method="post" action="{seeded.url}/admin/keys">'
            '<input name="tenant" value="forged"><input name="name" value="x"></form>'
            '<script>document.getElementById("f").submit()</script>').encode()  # fmt: skip

    async def evil(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/html")]})
        await send({"type": "http.response.body", "body": html})

    with ServerThread(evil, lifespan="off") as attacker:
        other = page.context.new_page()
        other.goto(attacker.url.replace("127.0.0.1", "localhost"))
        other.wait_for_load_state("load")
        other.wait_for_url(re.compile(r"/admin/"))
        assert "/admin/sign-in" in other.url or "forged" in other.inner_text("h1")
    assert seeded.count(count) == 0
    # The sign-in form has its own token: a post without the matching cookie is refused.
    resp = page.context.request.post("/admin/sign-in", form={"username": "root", "password": PASSWORD,
                                                             "csrf_token": "guess"}, max_redirects=0)  # fmt: skip
    assert resp.status == 403


def test_tenant_admin_confined_to_own_tenant(page: Any, seeded: Seeded) -> None:
    """A tenant admin sees only their rows and keys; another tenant's rows by URL are 404."""
    sign_in(page, "acme-admin", start="/admin/requests?tenant=globex")
    assert "tenant acme" in page.inner_text("#who")
    tenants = set(
        page.eval_on_selector_all("#request-rows tbody tr td:nth-child(3)", "cs => cs.map(c => c.textContent)")
    )
    assert tenants == {"acme"}
    acme_total = seeded.count("SELECT COUNT(*) FROM audit_requests WHERE tenant = 'acme'")
    assert f"{acme_total} matching" in page.inner_text("#match-count")

    globex_id = seeded.request_ids["globex"][0]
    resp = page.goto(f"/admin/requests/{globex_id}")
    assert resp is not None and resp.status == 404
    assert globex_id not in page.content()
    page.goto("/admin/requests/old-globex-001")
    assert "Not found" in page.inner_text("h1")
    own = seeded.request_ids["acme"][0]
    page.goto(f"/admin/requests/{own}")
    assert page.inner_text("#detail-tenant") == "acme"

    page.goto("/admin/keys")
    key_tenants = set(page.eval_on_selector_all("#keys tbody tr td:nth-child(2)", "cs => cs.map(c => c.textContent)"))
    assert key_tenants == {"acme"}
    # Revoking globex's key with a valid CSRF token but a crafted URL: 404, and the key lives on.
    globex_key_id = seeded.keys["globex"].split("_")[1]
    page.eval_on_selector("#keys form", f"f => f.action = '/admin/keys/{globex_key_id}/revoke'")
    page.click("#keys form button")
    assert "Not found" in page.inner_text("h1")
    assert seeded.count("SELECT COUNT(*) FROM api_keys WHERE key_id = :k AND revoked_us IS NULL",
                        {"k": globex_key_id}) == 1  # fmt: skip

    page.goto("/admin/")
    assert _num(page, "#total-requests") == seeded.count(
        "SELECT COUNT(*) FROM audit_requests WHERE tenant = 'acme' AND request_id NOT LIKE 'old-%'"
    )
    page.goto("/admin/exposure")
    page.fill("#disclosure", DISCLOSURE.format(start="2020-01-01T00:00:00Z"))
    page.click("#assess")
    assert set(
        page.eval_on_selector_all("#by-tenant-key tbody td:first-child", "cs => cs.map(c => c.textContent)")
    ) == {"acme"}
    shot(page, "tenant-admin-exposure")
