"""Quarantine from the dashboard's upstreams page: platform admins only, CSRF like every form,
routing changes at once in this gateway, release restores it; each change an event with its actor."""

from __future__ import annotations

import json
import re

import httpx
import openai

from audit.quarantine import active_quarantines, release
from tests.dashboard.conftest import PASSWORD, Seeded


def _csrf(html: str) -> str:
    return re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)  # type: ignore[union-attr]  # no match fails the test right here


def _signed_in(seeded: Seeded, username: str) -> httpx.Client:
    client = httpx.Client(base_url=seeded.url)
    token = _csrf(client.get("/admin/sign-in").text)
    resp = client.post("/admin/sign-in", data={"csrf_token": token, "username": username,
                                               "password": PASSWORD, "next": "/admin/upstreams"})  # fmt: skip
    assert resp.status_code == 303, resp.text
    return client


def _answered_by(seeded: Seeded) -> str:
    before = {n: len(seeded.fakes[n].ledger) for n in ("vendor", "local")}
    seeded.gw.openai(seeded.keys["acme"]).chat.completions.create(
        model="chat", messages=[{"role": "user", "content": "What is the capital of France?"}])  # fmt: skip
    (name,) = [n for n in before if len(seeded.fakes[n].ledger) > before[n]]
    return name


def test_quarantine_and_release_from_the_upstreams_page(seeded: Seeded) -> None:
    assert _answered_by(seeded) == "vendor"  # Tier 1 goes to the shared vendor first
    root = _signed_in(seeded, "root")
    try:
        page = root.get("/admin/upstreams").text
        assert 'id="quarantine-form"' in page and "Nothing is quarantined." in page
        form = {"target": "upstream:vendor", "reason": "vendor notice V-7"}
        assert root.post("/admin/upstreams/quarantine", data=form).status_code == 403  # no CSRF token
        assert root.post("/admin/upstreams/quarantine", data={**form, "csrf_token": _csrf(page)},
                         headers={"origin": "http://evil.example"}).status_code == 403  # fmt: skip
        bad = root.post("/admin/upstreams/quarantine",
                        data={"target": "provider:nobody", "reason": "r", "csrf_token": _csrf(page)})  # fmt: skip
        assert bad.status_code == 400 and "declares provider" in bad.text
        done = root.post("/admin/upstreams/quarantine", data={**form, "csrf_token": _csrf(page)})
        assert done.status_code == 303
        qid = int(done.headers["location"].rsplit("=", 1)[1])
        page = root.get(done.headers["location"]).text
        assert f"Quarantine #{qid} in force." in page and f"QUARANTINED #{qid}" in page
        assert "vendor notice V-7" in page
        # This gateway re-read at once: Tier 1 moves up to the on-prem upstream (higher trust).
        assert _answered_by(seeded) == "local"

        # A tenant admin sees the state but may not change it.
        acme = _signed_in(seeded, "acme-admin")
        try:
            apage = acme.get("/admin/upstreams").text
            assert f"QUARANTINED #{qid}" in apage and 'id="quarantine-form"' not in apage
            refused = acme.post(f"/admin/upstreams/quarantine/{qid}/release",
                                data={"reason": "mine now", "csrf_token": _csrf(apage)})  # fmt: skip
            assert refused.status_code == 403 and "Platform admins only" in refused.text
        finally:
            acme.close()

        blank = root.post(f"/admin/upstreams/quarantine/{qid}/release", data={"reason": " ", "csrf_token": _csrf(page)})
        assert blank.status_code == 400  # a release needs its reason too
        back = root.post(f"/admin/upstreams/quarantine/{qid}/release",
                         data={"reason": "vendor fixed it", "csrf_token": _csrf(page)})  # fmt: skip
        assert back.status_code == 303 and "Nothing is quarantined." in root.get("/admin/upstreams").text
        assert _answered_by(seeded) == "vendor"
        events = seeded.gw.rows("SELECT kind, detail FROM audit_events WHERE kind LIKE 'upstream_%' "
                                "ORDER BY seq DESC LIMIT 2")  # fmt: skip
        released, made = (json.loads(e["detail"]) for e in events)
        assert made["actor"] == "dashboard:root" and made["reason"] == "vendor notice V-7"
        assert released["actor"] == "dashboard:root" and released["reason"] == "vendor fixed it"
    finally:
        root.close()

        # The seeded gateway is shared by the session: never leave it quarantined.
        async def cleanup(store: object) -> None:
            for q in await active_quarantines(store.engine):  # type: ignore[attr-defined]  # the store the harness hands over is the real AuditStore
                await release(store, q.id, reason="test cleanup", actor="test")

        seeded.gw.admin(cleanup)


def test_tier3_refused_when_its_only_upstream_is_quarantined(seeded: Seeded) -> None:
    """The on-prem upstream is Tier 3's only home: quarantined, Tier 3 is refused (never shared)."""
    from audit.quarantine import quarantine

    seeded.gw.admin(lambda st: quarantine(st, upstream="local", reason="engine suspect", actor="test"))
    try:
        import time

        before = len(seeded.fakes["vendor"].ledger)
        client = seeded.gw.openai(seeded.keys["acme"])
        deadline = time.monotonic() + 5
        while True:  # this gateway reads the change at its next poll
            try:
                client.chat.completions.create(model="chat", messages=[{"role": "user",
                                               "content": "Refund card 4556 0172 8390 6414 today."}])  # fmt: skip
            except openai.APIStatusError as exc:
                assert exc.status_code == 503 and exc.body["code"] == "upstream_quarantined"  # type: ignore[index]  # an error body is a dict
                break
            assert time.monotonic() < deadline
            time.sleep(0.1)
        assert len(seeded.fakes["vendor"].ledger) == before
    finally:

        async def cleanup(store: object) -> None:
            for q in await active_quarantines(store.engine):  # type: ignore[attr-defined]  # the store the harness hands over is the real AuditStore
                await release(store, q.id, reason="test cleanup", actor="test")

        seeded.gw.admin(cleanup)
