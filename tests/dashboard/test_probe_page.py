"""The probes page and the upstreams page show ladders per rung; a failure opens its exposure
assessment; a ladder-lowered safe length shows on the upstreams page. A gateway of its own (the
session's seeded one must keep its configured lengths)."""

from __future__ import annotations

import asyncio
import html
import json
import re
from pathlib import Path
from typing import Any

import httpx
import yaml

from audit.admins import create_admin
from audit.length_caps import active_caps
from audit.timeutil import from_us
from gateway.probes.plan import ladder_plan
from gateway.probes.record import record_ladder
from gateway.probes.runner import run_ladder
from gateway.probes.settings import LadderSettings, ProbeSettings
from gateway.upstream import UpstreamClient
from tests.dashboard.conftest import PASSWORD, make_fakes, start_gateway
from tests.support.incident import Incident, echo_markers

RUNGS = [512, 2048, 4096]


def _csrf(page: str) -> str:
    return re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]  # no match fails the test right here


def _climb_and_record(gw: Any, lower: bool) -> Any:
    up = gw.settings.upstream("vendor")
    cfg = LadderSettings(rungs=RUNGS)

    async def climb() -> Any:
        client = UpstreamClient(up)
        try:
            plan = ladder_plan(upstream="vendor", model="vendor-chat", context_window=8192, safe_prompt_tokens=None,
                               cfg=cfg, budget=10**6)  # fmt: skip
            return await run_ladder(client, plan, ProbeSettings(ladder=cfg), salt_key=None)
        finally:
            await client.aclose()

    report = asyncio.run(climb())
    gw.admin(lambda st: record_ladder(report, record_event=st.record_event, metrics=None, store=st,
                                      lower_safe_length=lower, safe_tokens=up.safe_tokens))  # fmt: skip
    return report


def test_probe_page_links_a_failed_ladder_to_its_exposure_assessment(tmp_path: Path, classifier: Any) -> None:
    with make_fakes() as fakes:
        db = f"sqlite+aiosqlite:///{tmp_path / 'audit.db'}"
        with start_gateway(db, tmp_path, fakes, classifier) as gw:
            gw.admin(lambda st: create_admin(st.engine, "root", PASSWORD, None))
            vendor = fakes["vendor"]
            vendor.script = echo_markers
            passed = _climb_and_record(gw, lower=True)
            vendor.script = Incident(3000, lambda body: vendor.prompt_tokens("/v1/chat/completions", body))  # type: ignore[arg-type]  # Incident is called as the fake's script (tests/support/incident.py)
            failed = _climb_and_record(gw, lower=True)
            assert passed.passed and not failed.passed
            client = httpx.Client(base_url=gw.url)
            token = _csrf(client.get("/admin/sign-in").text)
            assert client.post("/admin/sign-in", data={"csrf_token": token, "username": "root", "password": PASSWORD,
                                                       "next": "/admin/probes"}).status_code == 303  # fmt: skip
            page = client.get("/admin/probes").text
            rows = re.findall(
                r'<tr id="run-(\d+)" data-seq="\d+" data-kind="ladder_probe" class="probe-run (\w+)"', page
            )
            assert [state for _seq, state in rows] == ["bad", "good"]  # newest first
            assert re.search(r'<tr class="rung bad" data-rung="4096">', page)
            assert re.search(r'<tr class="rung good" data-rung="2048">', page)
            assert page.count('class="assess"') == 1  # only the failure offers an assessment
            draft = html.unescape(
                re.search(r"<textarea name=\"disclosure\" hidden>(.*?)</textarea>", page, re.S).group(1)
            )  # type: ignore[union-attr]  # no match fails the test right here
            spec = yaml.safe_load(draft)
            assert spec["upstreams"] == ["vendor"] and spec["conditions"] == {"min_prompt_tokens": 2049}
            # The window opens when the same probe of the same upstream last passed.
            ladder_events = gw.rows("SELECT created_us FROM audit_events WHERE kind = 'ladder_probe' ORDER BY seq")
            assert spec["window"]["start"] == from_us(ladder_events[0]["created_us"]).isoformat()
            assert spec["window"]["end"] == from_us(ladder_events[1]["created_us"]).isoformat()
            assessed = client.post("/admin/exposure", data={"disclosure": draft, "csrf_token": _csrf(page)})
            assert assessed.status_code == 200, assessed.text[:500]
            assert f"probe-{rows[0][0]}" in assessed.text
            ups = client.get("/admin/upstreams").text
            vendor_row = ups[ups.index('<tr data-upstream="vendor">') :]
            vendor_row = vendor_row[: vendor_row.index("</tr>")]
            assert '<span class="bad lowered">2048 tokens</span>' in vendor_row
            assert 'data-rung="4096"' in vendor_row and "never climbed" not in vendor_row
            assert 'href="/admin/probes"' in ups  # the nav links the probes page
            restore = "/admin/upstreams/vendor/safe-length/restore"
            assert client.post(restore, data={"reason": "fixed"}).status_code == 403  # no CSRF token
            gw.admin(lambda st: create_admin(st.engine, "acme-admin", PASSWORD, "acme"))
            tenant = httpx.Client(base_url=gw.url)
            token = _csrf(tenant.get("/admin/sign-in").text)
            tenant.post("/admin/sign-in", data={"csrf_token": token, "username": "acme-admin", "password": PASSWORD,
                                                "next": "/admin/upstreams"})  # fmt: skip
            tpage = tenant.get("/admin/upstreams").text
            assert "restore-length" not in tpage
            refused = tenant.post(restore, data={"reason": "mine", "csrf_token": _csrf(tpage)})
            assert refused.status_code == 403 and "Platform admins only" in refused.text
            tenant.close()
            assert client.post(restore, data={"reason": " ", "csrf_token": _csrf(ups)}).status_code == 400
            done = client.post(restore, data={"reason": "vendor fixed the pool", "csrf_token": _csrf(ups)})
            assert done.status_code == 303
            after = client.get(done.headers["location"]).text
            assert 'id="restored-flash"' in after and "bad lowered" not in after
            assert gw.admin(lambda st: active_caps(st.engine)) == ()
            (event,) = gw.rows("SELECT detail FROM audit_events WHERE kind = 'safe_length_restored'")
            assert json.loads(event["detail"])["actor"] == "dashboard:root"
            client.close()


def test_probe_page_lists_isolation_probes_with_sparse_details(seeded: Any) -> None:
    """The seeded isolation-probe events (older, sparser details) render; the failed one offers an
    assessment of the vendor upstream without a length condition."""
    client = httpx.Client(base_url=seeded.url)
    token = _csrf(client.get("/admin/sign-in").text)
    client.post("/admin/sign-in", data={"csrf_token": token, "username": "root", "password": PASSWORD,
                                        "next": "/admin/probes"})  # fmt: skip
    page = client.get("/admin/probes")
    client.close()
    assert page.status_code == 200
    rows = re.findall(r'data-kind="isolation_probe" class="probe-run (\w+)"', page.text)
    assert sorted(rows) == ["bad", "good"]
    draft = html.unescape(re.search(r"<textarea name=\"disclosure\" hidden>(.*?)</textarea>", page.text, re.S).group(1))  # type: ignore[union-attr]  # no match fails the test right here
    spec = yaml.safe_load(draft)
    assert spec["upstreams"] == ["vendor"] and "conditions" not in spec
