"""The vendor register in the dashboard, and the vendor's answers beside an exposure verdict.

One gateway for the module (on SQLite, then on PostgreSQL), in front of two vendors declared by
three upstreams, with a register whose answers are dated relative to today (one given before the
vendor's engine changed, one older than the review age) and real traffic from two tenants
through the ``openai`` SDK: the provider on each row is written by the gateway, never by this file.
"""

from __future__ import annotations

import html as htmllib
import json
import re
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import PG_ADMIN_DSN, _pg_admin_exec
from tests.dashboard.conftest import PASSWORD, _config, shot, sign_in
from tests.support import FakeUpstream
from tests.support.harness import FakeUpstreams, GatewayHarness

TODAY = datetime.now(UTC).date()
# Generous bounds for answers that must come, never speed assertions: httpx's default of 5 s per
# request is one (a sign-in is an Argon2id check; at load 13-24 here the first test's sign-in and
# two pages on PostgreSQL took 3 s together), and so was a 60 s wait on CREATE DATABASE that
# went on silently when it ran out or failed.
PAGE_TIMEOUT_S = 120.0
ADMIN_SQL_S = 120.0
ENGINE, OLD_ENGINE = "vLLM 0.11.2", "vLLM 0.10.1"


def _given(days_ago: int) -> str:
    return (TODAY - timedelta(days=days_ago)).isoformat()


def _answer(text: str, days_ago: int, engine: str | None = None, **kw: str) -> dict[str, Any]:
    return {"answer": text, "given": _given(days_ago), **({"engine": engine} if engine else {}), **kw}


REGISTER = {
    "review_after_days": 365,
    "providers": {
        "examplecloud": {
            "engine": ENGINE,
            # Given while the vendor still ran the old engine: due for review although recent.
            "tenant_isolation": _answer(
                "KV blocks are never shared across accounts.", 20, OLD_ENGINE, source="security questionnaire 4.2"
            ),  # fmt: skip
            "containment": _answer(
                "Within 4 hours of detection.", 20, ENGINE, example="2026-02 cache incident, contained in 3 hours."
            ),  # fmt: skip
            "serving_engine": _answer("vLLM, patched by the vendor within 14 days.", 400, ENGINE),  # too old
            "notification": _answer("By e-mail within 72 hours.", 20, short="yes", source="DPA 9.1"),
            "reconstruction": _answer(
                "We cannot list which customer requests an incident touched.", 20, ENGINE, short="no"
            ),  # fmt: skip
            "data_retention": _answer("30 days.", 20),
            "training_use": _answer("Never used for training.", 20, short="no"),
            "region": _answer("EU only.", 20),
            "contract": _answer("MSA 2026-17 with DPA.", 20, source="MSA 2026-17"),
        },
        # Registered, every answer current, able to reconstruct; no upstream declares it.
        "trustycloud": {
            "engine": "in-house 7",
            **{
                k: _answer(f"{k} answer.", 5, "in-house 7")
                for k in (
                    "tenant_isolation",
                    "containment",
                    "serving_engine",
                    "notification",
                    "data_retention",
                    "training_use",
                    "region",
                    "contract",
                )
            },
            "reconstruction": _answer("Affected request ids are listed per customer.", 5, "in-house 7", short="yes"),
        },  # fmt: skip
    },
}


@dataclass
class Env:
    gw: GatewayHarness

    @contextmanager
    def client(self, username: str) -> Iterator[httpx.Client]:
        """A browser-like client signed in as ``username``."""
        with httpx.Client(base_url=self.gw.url, timeout=PAGE_TIMEOUT_S) as client:
            token = _csrf(client.get("/admin/sign-in").text)
            resp = client.post("/admin/sign-in", data={"csrf_token": token, "username": username,
                                                       "password": PASSWORD, "next": "/admin/"})  # fmt: skip
            assert resp.status_code == 303, resp.text
            yield client


def _csrf(html: str) -> str:
    return re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)  # type: ignore[union-attr]  # no match fails the test right here


def _config_with_vendors(fakes: FakeUpstreams) -> dict[str, Any]:
    config = _config(fakes)
    vendor, local = config["upstreams"]
    eu = {**vendor, "name": "vendor-eu", "models": {"chat-eu": "@cf/example/eu-chat"}}
    other = {"name": "other", "base_url": fakes.base_url("other"), "kind": "shared", "provider": "OtherAI",
             "models": {"other-chat": "other-model"}, "timeouts": {"read": 10}}  # fmt: skip
    config["upstreams"] = [{**vendor, "provider": "ExampleCloud"}, {**eu, "provider": "examplecloud"}, other, local]
    return {**config, "vendors": REGISTER}


def _in_thread(sql: str) -> None:
    # Playwright's sync API may already run an event loop in this thread (asyncio.run would refuse).
    # The statement's own error, or its not finishing, fails here, not later as a missing database.
    failed: list[BaseException] = []

    def run() -> None:
        try:
            _pg_admin_exec(sql)
        except BaseException as exc:  # noqa: BLE001 -- handed to the test's thread and raised there
            failed.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    worker.join(ADMIN_SQL_S)
    assert not worker.is_alive(), f"{sql.split()[0]} {sql.split()[1]} did not finish in {ADMIN_SQL_S}s"
    if failed:
        raise failed[0]


@contextmanager
def _database(backend: str, tmp: Path) -> Iterator[str]:
    """A fresh database for the module: a SQLite file, or a PostgreSQL database dropped after."""
    if backend == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp / 'audit.db'}"
        return
    name = f"tg_{uuid.uuid4().hex[:12]}"
    _in_thread(f'CREATE DATABASE "{name}"')
    try:
        yield PG_ADMIN_DSN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+asyncpg://", 1) + f"/{name}"
    finally:
        _in_thread(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def env(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, classifier: Any) -> Iterator[Env]:
    from audit.admins import create_admin

    tmp = tmp_path_factory.mktemp("vendors")
    fakes = FakeUpstreams(FakeUpstream(name="vendor", kind="shared"), FakeUpstream(name="other", kind="shared"),
                          FakeUpstream(name="local", kind="onprem"))  # fmt: skip
    with fakes, _database(request.param, tmp) as db, \
            GatewayHarness(db, tmp, _config_with_vendors(fakes), classifier=classifier) as gw:  # fmt: skip
        for name, tenant in (("root", None), ("acme-admin", "acme"), ("globex-admin", "globex")):
            gw.admin(lambda st, n=name, t=tenant: create_admin(st.engine, n, PASSWORD, t))
        acme, globex = gw.openai(gw.create_key("acme")), gw.openai(gw.create_key("globex"))
        for client, model, text in (
            (acme, "chat", "What is the capital of France?"),
            (acme, "chat", "Please email bob@corp.example.com about the delay."),  # Tier 2, stripped
            (acme, "chat-eu", "Hello from the EU."),
            (globex, "chat", "What is the weather like?"),
            (globex, "other-chat", "Hello from globex."),
        ):  # fmt: skip
            client.chat.completions.create(model=model, messages=[{"role": "user", "content": text}])
        gw.settle()
        yield Env(gw)


def _section(html: str, provider: str) -> str:
    """One provider's card on the vendors page."""
    m = re.search(rf'<section class="card vendor" id="provider-{re.escape(provider)}".*?</section>', html, re.S)
    assert m, provider
    return m.group(0)


def _rows(html: str) -> dict[str, dict[str, str]]:
    """question -> status, given date, due reasons, answer text, of one answers table."""
    out = {}
    for m in re.finditer(r'<tr class="answer[^"]*" data-question="(\w+)" data-status="(\w+)">(.*?)</tr>', html, re.S):
        given = re.search(r'<td class="given">([^<]*)</td>', m.group(3)).group(1)  # type: ignore[union-attr]  # no match fails the test right here
        due = " | ".join(re.findall(r'<div class="small bad due-reason">([^<]*)</div>', m.group(3)))
        out[m.group(1)] = {"status": m.group(2), "given": given, "due": due, "html": m.group(3)}
    return out


def test_the_register_page_lists_answers_dates_and_due_flags(env: Env) -> None:
    """Each provider's answers with the day given; stale by age and by engine change are flagged,
    a fresh answer for the current engine is not; the upstreams declaring each provider are listed."""
    with env.client("root") as root:
        page = root.get("/admin/vendors")
        assert page.status_code == 200 and page.headers["cache-control"] == "no-store"
        html = page.text
        assert '<a href="/admin/vendors" class="active" aria-current="page">Vendors</a>' in html
        assert [m for m in re.findall(r'id="provider-([^"]+)" data-provider', html)] == [
            "examplecloud",
            "otherai",
            "trustycloud",
        ]  # the register's and the declared ones, case folded

        ex = _section(html, "examplecloud")
        rows = _rows(ex)
        assert list(rows) == ["tenant_isolation", "containment", "serving_engine", "notification", "reconstruction",
                              "data_retention", "training_use", "region", "contract"]  # fmt: skip
        assert rows["tenant_isolation"]["status"] == "due" and rows["tenant_isolation"]["given"] == _given(20)
        assert rows["tenant_isolation"]["due"] == f"given for {OLD_ENGINE}; the vendor now serves {ENGINE}"
        assert "KV blocks are never shared across accounts." in rows["tenant_isolation"]["html"]
        assert "security questionnaire 4.2" in rows["tenant_isolation"]["html"]
        assert rows["serving_engine"]["status"] == "due" and rows["serving_engine"]["given"] == _given(400)
        assert rows["serving_engine"]["due"] == f"given {_given(400)}, more than 365 days ago"
        assert rows["containment"]["status"] == "current" and rows["containment"]["due"] == ""
        assert "Example: 2026-02 cache incident, contained in 3 hours." in rows["containment"]["html"]
        # Not engine-bound: the engine change does not touch them.
        assert {
            k: rows[k]["status"] for k in ("notification", "data_retention", "training_use", "region", "contract")
        } == dict.fromkeys(  # fmt: skip
            ("notification", "data_retention", "training_use", "region", "contract"), "current"
        )
        assert 'data-due="2"' in ex and "2 of 9 answer(s) missing or due for review." in ex
        assert f"serving {ENGINE}" in ex
        assert "cannot fully reconstruct which of our requests an incident affected" in ex
        declared = re.findall(r'<a class="upstream" href="/admin/upstreams#upstream-([^"]+)">', ex)
        assert declared == ["vendor", "vendor-eu"] and "@cf/example/eu-chat" in ex

        trusty = _section(html, "trustycloud")
        assert set(s["status"] for s in _rows(trusty).values()) == {"current"}
        assert "All answers current." in trusty and "scope-doubt" not in trusty
        assert "no upstream declares this provider" in trusty

        other = _section(html, "otherai")
        assert "No answers on record for this provider in the vendor register." in other
        assert re.findall(r'<a class="upstream" href="/admin/upstreams#upstream-([^"]+)">', other) == ["other"]
        assert "has no answer on record on whether it can reconstruct" in other

        ups = root.get("/admin/upstreams").text
        assert 'href="/admin/vendors" id="vendor-register-link"' in ups
        assert ups.count('href="/admin/vendors#provider-examplecloud"') == 2  # vendor, vendor-eu
        assert 'href="/admin/vendors#provider-otherai"' in ups


def _traffic(html: str, provider: str) -> tuple[int, int]:
    m = re.search(r'class="traffic" data-requests="(\d+)" data-sensitive="(\d+)"', _section(html, provider))
    assert m, provider
    return int(m.group(1)), int(m.group(2))


def test_the_register_page_is_read_only_and_its_traffic_scoped_to_the_tenant(env: Env) -> None:
    """Tenant admins read the same answers; the traffic per vendor counts their own tenant's only."""
    with env.client("root") as root, env.client("acme-admin") as acme, env.client("globex-admin") as globex:
        everyone = root.get("/admin/vendors").text
        mine, theirs = acme.get("/admin/vendors").text, globex.get("/admin/vendors").text
        assert _traffic(everyone, "examplecloud") == (4, 1) and _traffic(everyone, "otherai") == (1, 0)
        assert _traffic(mine, "examplecloud") == (3, 1) and _traffic(mine, "otherai") == (0, 0)
        assert _traffic(theirs, "examplecloud") == (1, 0) and _traffic(theirs, "otherai") == (1, 0)
        assert "(tenant acme)" in mine and "(tenant" not in everyone
        assert _rows(_section(mine, "examplecloud")) == _rows(_section(everyone, "examplecloud"))
        assert "<form" not in mine.split("<main>", 1)[1]  # nothing to change here, for anyone
        assert acme.post("/admin/vendors", data={"csrf_token": _csrf(mine)}).status_code in (404, 405)
    with httpx.Client(base_url=env.gw.url) as anonymous:
        resp = anonymous.get("/admin/vendors")
        assert resp.status_code == 303 and "/admin/sign-in" in resp.headers["location"]


def _disclosure(providers: str, *, start: datetime, end: datetime, models: str = "") -> str:
    return (f"title: cross-talk\nreference: V-{providers}\nproviders: [{providers}]\n"
            + (f"models: [{models}]\n" if models else "")
            + f"window:\n  start: {start.isoformat()}\n  end: {end.isoformat()}\n")  # fmt: skip


def _assess(client: httpx.Client, disclosure: str) -> str:
    form = client.get("/admin/exposure").text
    resp = client.post("/admin/exposure", files={"file": ("", b"")},
                       data={"csrf_token": _csrf(form), "disclosure": disclosure})  # fmt: skip
    assert resp.status_code == 200, resp.text
    return resp.text


def _verdict(html: str) -> tuple[str, int]:
    verdict = re.search(r'data-verdict="(\w+)"', html).group(1)  # type: ignore[union-attr]  # no match fails the test right here
    return verdict, int(re.search(r'id="matching-total">(\d+)<', html).group(1))  # type: ignore[union-attr]  # no match fails the test right here


def _quoted(html: str) -> str:
    m = re.search(r'<section class="card" id="vendor-answers">.*?</section>', html, re.S)
    assert m
    return m.group(0)


def test_the_assessment_quotes_the_vendors_answers_next_to_the_verdict(env: Env) -> None:
    """Matched by provider and the vendor's model id: the verdict, the vendor's answers with their
    dates and due flags, and the note that a vendor unable to reconstruct only guessed the scope;
    the Markdown and JSON downloads say the same."""
    now = datetime.now(UTC)
    with env.client("root") as root:
        html = _assess(root, _disclosure("examplecloud", models="vendor-chat", start=now - timedelta(hours=1),
                                         end=now + timedelta(hours=1)))  # fmt: skip
        assert _verdict(html) == ("sensitive_data_may_be_exposed", 3)  # chat-eu's model id is another
        notes = re.findall(r'<p class="note scope-note">([^<]*)</p>', html)
        assert len(notes) == 1 and notes[0].startswith("SCOPE UNCERTAIN: examplecloud cannot fully reconstruct")
        assert "requests outside it may have been affected too" in notes[0]
        quoted = _quoted(html)
        rows = _rows(quoted)
        assert rows["tenant_isolation"]["status"] == "due" and rows["tenant_isolation"]["given"] == _given(20)
        assert OLD_ENGINE in rows["tenant_isolation"]["due"] and rows["serving_engine"]["status"] == "due"
        assert rows["reconstruction"]["status"] == "current" and "(no)" in rows["reconstruction"]["html"]
        assert 'href="/admin/vendors#provider-examplecloud"' in quoted and "otherai" not in quoted
        # Quoted after the verdict, before the counts, as in the report.
        assert html.index('id="verdict"') < html.index('id="vendor-answers"') < html.index('id="by-tier"')

        did = re.search(r"/admin/exposure/(\d+)/report/md", html).group(1)  # type: ignore[union-attr]  # no match fails the test right here
        md = root.get(f"/admin/exposure/{did}/report/md").text
        assert "## What the vendor told us in writing" in md and "### examplecloud (serving vLLM 0.11.2)" in md
        assert f"| {_given(20)} | {OLD_ENGINE} | **DUE FOR REVIEW**: given for {OLD_ENGINE}" in md
        assert "> **SCOPE UNCERTAIN: examplecloud cannot fully reconstruct" in md
        report = json.loads(root.get(f"/admin/exposure/{did}/report/json").text)
        (vendor,) = report["vendor_register"]
        assert vendor["provider"] == "examplecloud" and vendor["due_for_review"] == 2
        assert report["vendor_notes"] == [htmllib.unescape(notes[0])]


def test_nothing_matched_means_less_from_a_vendor_that_cannot_reconstruct(env: Env) -> None:
    """The same "nothing matched" reads as no all-clear from a vendor that cannot reconstruct, and
    plainly from one that said in writing, currently, that it can."""
    old = datetime(2020, 1, 1, tzinfo=UTC)
    with env.client("root") as root:
        html = _assess(root, _disclosure("examplecloud", start=old, end=old + timedelta(days=1)))
        assert _verdict(html) == ("nothing_matched", 0)
        (note,) = re.findall(r'<p class="note scope-note">([^<]*)</p>', html)
        assert "says only that none of our requests fits the vendor&#39;s description" in note
        assert "not that none was affected" in note

        plain = _assess(root, _disclosure("trustycloud", start=old, end=old + timedelta(days=1)))
        assert _verdict(plain) == ("nothing_matched", 0) and "scope-note" not in plain
        assert set(r["status"] for r in _rows(_quoted(plain)).values()) == {"current"}


def test_a_tenant_admins_assessment_quotes_the_vendor_for_their_own_requests(env: Env) -> None:
    """A tenant admin's assessment counts their tenant only, and still quotes the vendor's answers;
    a named vendor with no register entry reads as such, and its silence on reconstruction is doubt."""
    now = datetime.now(UTC)
    window = {"start": now - timedelta(hours=1), "end": now + timedelta(hours=1)}
    with env.client("globex-admin") as globex, env.client("acme-admin") as acme:
        mine = _assess(globex, _disclosure("examplecloud", models="vendor-chat", **window))
        assert _verdict(mine) == ("tier1_only", 1)
        assert _rows(_quoted(mine))["tenant_isolation"]["status"] == "due"
        none = _assess(acme, _disclosure("otherai", **window))
        assert _verdict(none) == ("nothing_matched", 0)  # globex's request to otherai is not acme's
        quoted = _quoted(none)
        assert "No answers on record for this provider in the vendor register." in quoted
        (note,) = re.findall(r'<p class="note scope-note">([^<]*)</p>', none)
        assert note.startswith("SCOPE UNCERTAIN: otherai has no answer on record")


@pytest.mark.browser
def test_vendor_register_in_the_browser(browser: Any, env: Env) -> None:
    """From the navigation and from an upstream's provider link to the provider's answers."""
    context = browser.new_context(base_url=env.gw.url, viewport={"width": 1400, "height": 900})
    context.set_default_timeout(15_000)
    pg = context.new_page()
    try:
        sign_in(pg, "root", start="/admin/upstreams")
        pg.click("tr[data-upstream=vendor-eu] a.provider-link")
        pg.wait_for_url(re.compile(r"/admin/vendors#provider-examplecloud$"))
        card = pg.locator("section[data-provider=examplecloud]")
        isolation = card.locator("tr[data-question=tenant_isolation]")
        assert isolation.get_attribute("data-status") == "due"
        assert f"given for {OLD_ENGINE}" in isolation.locator(".status").inner_text()
        assert card.locator("tr[data-question=containment] .status").inner_text() == "current"
        shot(pg, "vendor-register")
        pg.goto("/admin/")
        pg.click("header nav >> text=Vendors")
        pg.wait_for_url(re.compile(r"/admin/vendors$"))
        assert pg.locator("section.vendor").count() == 3
        pg.goto("/admin/exposure")
        now = datetime.now(UTC)
        pg.fill(
            "#disclosure", _disclosure("examplecloud", start=now - timedelta(hours=1), end=now + timedelta(hours=1))
        )
        pg.uncheck("#disclosure-record")
        pg.click("#assess")
        assert pg.get_attribute("#verdict", "data-verdict") == "sensitive_data_may_be_exposed"
        assert pg.locator("#verdict .scope-note").inner_text().startswith("SCOPE UNCERTAIN: examplecloud")
        quoted = pg.locator("#vendor-answers tr[data-question=tenant_isolation]")
        assert quoted.get_attribute("data-status") == "due" and quoted.locator(".given").inner_text() == _given(20)
        shot(pg, "exposure-vendor-answers")
    finally:
        context.close()
