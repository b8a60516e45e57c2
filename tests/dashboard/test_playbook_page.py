"""The disclosure page as an incident: loading starts the clock, steps are recorded by the signed-in
admin (CSRF like every form), the timeline and time left are on the page and in the downloads."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from audit.html_report import CSP

from tests.audit.test_playbook import PLAYBOOKS
from tests.dashboard.conftest import PASSWORD, _config, make_fakes
from tests.support.harness import GatewayHarness


def _csrf(html: str) -> str:
    return re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)  # type: ignore[union-attr]  # no match fails the test right here


def _sign_in(gw: GatewayHarness, username: str) -> httpx.Client:
    client = httpx.Client(base_url=gw.url)
    token = _csrf(client.get("/admin/sign-in").text)
    assert client.post("/admin/sign-in", data={"csrf_token": token, "username": username, "password": PASSWORD,
                                               "next": "/admin/exposure"}).status_code == 303  # fmt: skip
    return client


def test_incident_timeline_in_the_dashboard(postgres_db: str, tmp_path: Path, classifier: Any) -> None:
    from audit.admins import create_admin

    with make_fakes() as fakes:
        config = {**_config(fakes), "playbooks": PLAYBOOKS}
        with GatewayHarness(postgres_db, tmp_path, config, classifier=classifier) as gw:
            for name, tenant in (("root", None), ("acme-admin", "acme")):
                gw.admin(lambda st, n=name, t=tenant: create_admin(st.engine, n, PASSWORD, t))
            gw.openai(gw.create_key("acme")).chat.completions.create(
                model="chat", messages=[{"role": "user", "content": "Please email bob@corp.example.com"}])  # fmt: skip
            now = datetime.now(UTC)
            disclosure = (f"title: cross-talk\nreference: V-1\nupstreams: [vendor]\nwindow:\n"
                          f"  start: {(now - timedelta(hours=1)).isoformat()}\n"
                          f"  end: {(now + timedelta(hours=1)).isoformat()}\n")  # fmt: skip
            root = _sign_in(gw, "root")
            form = root.get("/admin/exposure").text
            assert 'id="disclosure-record" checked' in form
            page = root.post("/admin/exposure", files={"file": ("", b"")},
                             data={"csrf_token": _csrf(form), "disclosure": disclosure, "record": "1"}).text  # fmt: skip
            assert 'data-verdict="sensitive_data_may_be_exposed"' in page and 'id="timeline"' in page
            did = int(re.search(r"/admin/exposure/(\d+)/step", page).group(1))  # type: ignore[union-attr]  # no match fails the test right here
            assert re.findall(r'data-step="(\w+)"', page) == ["loaded", "assessed"]
            assert re.search(r'id="clock" class="">2[34] h \d\d min left<', page)
            assert "dashboard:root" in page and "ops on call" in page  # actor, and the owner per playbook
            assert "DRILL" not in page

            step = f"/admin/exposure/{did}/step"
            token = _csrf(page)
            assert root.post(step, data={"step": "decided", "reportable": "yes", "reason": "r"}).status_code == 403
            missing = root.post(step, data={"csrf_token": token, "step": "decided", "reportable": "yes"})
            assert missing.status_code == 400 and 'id="step-error"' in missing.text and "reason" in missing.text
            early = root.post(step, data={"csrf_token": token, "step": "notified", "party": "body", "to": "x"})
            assert early.status_code == 400 and "record `decided` first" in early.text

            acme = _sign_in(gw, "acme-admin")  # a platform-wide incident is not a tenant admin's to run
            apage = acme.get(f"/admin/exposure/{did}").text
            assert acme.post(step, data={"csrf_token": _csrf(apage), "step": "closed"}).status_code == 404
            acme.close()

            done = root.post(step, data={"csrf_token": token, "step": "decided", "reportable": "yes",
                                         "reason": "Tier 2 sent to the vendor"})  # fmt: skip
            assert done.status_code == 303
            root.post(step, data={"csrf_token": token, "step": "notified", "party": "customers", "to": "acme sec"})
            page = root.get(f"/admin/exposure/{did}").text
            assert re.findall(r'data-step="(\w+)"', page) == ["loaded", "assessed", "decided", "notified"]
            assert re.search(r'id="clock" class="good">stopped 2[34] h \d\d min before the deadline<', page)
            assert "REPORTABLE: Tier 2 sent to the vendor" in page

            md = root.get(f"/admin/exposure/{did}/report/md").text
            assert "## Playbook and clock" in md and "| notified body | the supervisory authority |" in md
            doc = json.loads(root.get(f"/admin/exposure/{did}/report/json").text)
            assert [s["actor"] for s in doc["timeline"]["steps"]] == ["dashboard:root"] * 4
            assert doc["timeline"]["done"] is True and doc["drill"] is False
            root.close()


def test_drill_button(seeded: Any) -> None:
    """The exposure page's drill button: CSRF-checked, a DRILL disclosure for the admin's scope
    (a tenant admin's drill sees only that tenant's rows), its page marked as a drill."""
    acme = _sign_in(seeded.gw, "acme-admin")
    try:
        form = acme.get("/admin/exposure").text
        assert 'id="run-drill"' in form
        assert acme.post("/admin/exposure/drill").status_code == 403  # no CSRF token
        started = acme.post("/admin/exposure/drill", data={"csrf_token": _csrf(form)})
        assert started.status_code == 303 and started.headers["location"].startswith("/admin/exposure/")
        page = acme.get(started.headers["location"]).text
        assert 'id="drill-banner"' in page and "<h1>DRILL: rehearsal of the incident playbook" in page
        assert re.findall(r'data-step="(\w+)"', page) == ["loaded", "assessed"]
        assert "dashboard:acme-admin" in page
        did = int(started.headers["location"].split("/")[3].split("?")[0])
        (row,) = seeded.gw.rows("SELECT tenant, reference FROM disclosures WHERE id = :i", {"i": did})
        assert row["tenant"] == "acme" and row["reference"].startswith("DRILL-")
        acme_rows = seeded.count("SELECT COUNT(*) FROM audit_requests WHERE tenant = 'acme' AND forwarded "
                                 "AND created_us >= (SELECT MAX(created_us) FROM audit_requests) - 86400000000")  # fmt: skip
        doc = json.loads(acme.get(f"/admin/exposure/{did}/report/json").text)
        assert doc["drill"] is True and doc["total"] <= acme_rows
        assert {t["tenant"] for t in doc["by_tenant_key"]} <= {"acme"}
        printable = acme.get(f"/admin/exposure/{did}/report/html")
        assert printable.status_code == 200 and printable.headers["content-type"].startswith("text/html")
        assert printable.headers["content-security-policy"] == CSP and 'id="drill-banner"' in printable.text
        pdf = acme.get(f"/admin/exposure/{did}/report/pdf")
        assert pdf.status_code == 200 and pdf.headers["content-type"] == "application/pdf"
        assert pdf.content.startswith(b"%PDF-") and f"exposure-{did}-drill.pdf" in pdf.headers["content-disposition"]
        assert 'id="download-pdf"' in page and 'id="report-html"' in page
    finally:
        acme.close()
