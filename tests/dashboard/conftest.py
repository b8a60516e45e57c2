"""Fixtures for the dashboard: one seeded gateway on 127.0.0.1 and real headless Chromium.

The gateway (``create_app`` under uvicorn, in front of two ledgered fake upstreams) is built once
per session and seeded with real traffic through the ``openai`` SDK (Tier 1, 2 stripped, 3 on-prem,
refusals, one integrity failure), sixty older synthetic rows, probe events and three admins.
Chromium is Debian's (``scripts/install-browser.sh``); a missing browser fails the run.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.support import FakeUpstream, Scripted
from tests.support.harness import FakeUpstreams, GatewayHarness

CHROMIUM = os.environ.get("TIERGATE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "dashboard"
PASSWORD = "correct horse battery staple"
ADMINS = {"root": None, "acme-admin": "acme", "globex-admin": "globex", "locky": "acme", "victim": "globex"}
OLD_ROWS = 60  # synthetic globex rows two days ago: more than one page of the requests list
UNDERCOUNT = "UNDERCOUNT-MARKER"


@dataclass
class Seeded:
    gw: GatewayHarness
    fakes: FakeUpstreams
    keys: dict[str, str]  # tenant -> plaintext key
    request_ids: dict[str, list[str]] = field(default_factory=dict)  # tenant -> real request ids

    @property
    def url(self) -> str:
        return self.gw.url

    def count(self, sql: str, params: dict[str, Any] | None = None) -> int:
        return int(next(iter(self.gw.rows(sql, params)[0].values())))


def _vendor_script(received: Any) -> Scripted:
    # Answer as if the prompt had been cut to one token: the gateway's integrity check must fire.
    if UNDERCOUNT in received.text:
        return Scripted(prompt_tokens=1)
    return Scripted()


def _config(fakes: FakeUpstreams) -> dict[str, Any]:
    return {
        "upstreams": [
            {"name": "vendor", "base_url": fakes.base_url("vendor"), "kind": "shared", "max_tier": 2,
             "models": {"chat": "vendor-chat"}, "context_window": 100_000,
             "safe_prompt_tokens": 90_000, "timeouts": {"read": 10}},
            {"name": "local", "base_url": fakes.base_url("local"), "kind": "onprem", "max_tier": 3,
             "models": {"chat": "local-chat"}, "context_window": 32_768, "timeouts": {"read": 10}},
        ],
        # A long key cache: a key revoked in the dashboard must be refused at once all the same.
        "limits": {"auth_cache_s": 600},
        "tiers": {"internal_domains": ["corp.example.com"]},
    }  # fmt: skip


def _seed_old_rows(gw: GatewayHarness) -> None:
    from audit.types import Outcome, RequestRecord

    base = datetime.now(UTC) - timedelta(days=2)

    async def work(store: Any) -> None:
        for i in range(OLD_ROWS):
            rid = f"old-globex-{i:03d}"
            await store.record_request(RequestRecord(
                request_id=rid, created_at=base + timedelta(seconds=i), tenant="globex",
                key_id="oldkey", endpoint="chat", client_model="chat", upstream="vendor",
                upstream_kind="shared", provider_model="vendor-chat", prompt_chars=400 + i,
                prompt_tokens=100 + i, tier=1))  # fmt: skip
            await store.record_outcome(Outcome(rid, "ok", 200, 200, 100 + i, 1))
        await store.record_event("isolation_probe", {"upstream": "vendor", "passed": False,
                                                     "reasons": ["2 answers carried another request's marker"],
                                                     "sent": 8, "crossed": 2})  # fmt: skip
        await store.record_event("isolation_probe", {"upstream": "local", "passed": True,
                                                     "reasons": [], "sent": 8, "crossed": 0})  # fmt: skip

    gw.admin(work)


def _traffic(seeded: Seeded) -> None:
    import openai

    def send(tenant: str, text: str, key: str | None = None) -> None:
        client = seeded.gw.openai(key or seeded.keys[tenant])
        try:
            client.chat.completions.create(model="chat", messages=[{"role": "user", "content": text}])
        except openai.APIStatusError:
            pass  # refusals and integrity failures are part of the seed

    send("acme", "What is the capital of France?")  # Tier 1 -> vendor
    send("acme", "Please email bob@corp.example.com about the delay.")  # Tier 2 -> vendor, stripped
    send("acme", "Refund card 4556 0172 8390 6414 today.")  # Tier 3 -> local (on-prem)
    send("acme", "Summarise this: " + UNDERCOUNT + " lorem ipsum dolor sit amet " * 80)  # integrity
    send("globex", "Hello from globex, how are you?")  # Tier 1
    send("globex", "Forward to carol@corp.example.com the report.")  # Tier 2
    send("acme", "Ping dave@corp.example.com", key=seeded.keys["acme-t1"])  # refused: key capped at 1
    rows = seeded.gw.rows("SELECT request_id, tenant FROM audit_requests WHERE request_id NOT LIKE 'old-%'")
    for r in rows:
        seeded.request_ids.setdefault(r["tenant"], []).append(r["request_id"])


@pytest.fixture(scope="session")
def classifier() -> Any:
    """One classifier for the session: building presidio's registry takes a moment."""
    from tiers import Classifier
    from tiers.config import TiersConfig

    return Classifier(TiersConfig(internal_domains=("corp.example.com",)))


def start_gateway(db_url: str, tmp: Path, fakes: FakeUpstreams, classifier: Any) -> GatewayHarness:
    """A gateway (not yet entered) in front of ``fakes`` with the dashboard's test config."""
    return GatewayHarness(db_url, tmp, _config(fakes), classifier=classifier)


def make_fakes() -> FakeUpstreams:
    vendor = FakeUpstream(name="vendor", kind="shared", script=_vendor_script)
    return FakeUpstreams(vendor, FakeUpstream(name="local", kind="onprem"))


@pytest.fixture(scope="session")
def seeded(tmp_path_factory: pytest.TempPathFactory, classifier: Any) -> Iterator[Seeded]:
    """A running gateway with seeded audit rows, keys, probe events and admins."""
    from audit.admins import create_admin

    tmp = tmp_path_factory.mktemp("dashboard")
    with make_fakes() as fakes:
        db = f"sqlite+aiosqlite:///{tmp / 'audit.db'}"
        with start_gateway(db, tmp, fakes, classifier) as gw:
            for name, tenant in ADMINS.items():
                gw.admin(lambda st, n=name, t=tenant: create_admin(st.engine, n, PASSWORD, t))
            keys = {t: gw.create_key(t) for t in ("acme", "globex")}
            keys["acme-t1"] = gw.create_key("acme", max_tier=1)
            seeded = Seeded(gw, fakes, keys)
            _seed_old_rows(gw)
            _traffic(seeded)
            yield seeded


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium, headless, driven by Playwright (never a downloaded browser build).

    Module-scoped: Playwright's sync API runs an event loop in this thread while it is open, and
    fixtures elsewhere (``postgres_db``) call ``asyncio.run`` here.
    """
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium is required at {CHROMIUM}: run scripts/install-browser.sh")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser: Any, seeded: Seeded, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A fresh browser context (no cookies) on the seeded gateway; screenshot saved at the end."""
    context = browser.new_context(base_url=seeded.url, accept_downloads=True,
                                  viewport={"width": 1400, "height": 900})  # fmt: skip
    context.set_default_timeout(15_000)
    pg = context.new_page()
    yield pg
    try:
        pg.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"), full_page=True)
    finally:
        context.close()


def shot(pg: Any, name: str) -> Path:
    path = ARTIFACTS / f"{name}.png"
    pg.screenshot(path=str(path), full_page=True)
    return path


def sign_in(pg: Any, username: str, password: str = PASSWORD, start: str = "/admin/") -> None:
    pg.goto(start)
    pg.fill("#username", username)
    pg.fill("#password", password)
    pg.click("#sign-in")
    pg.wait_for_selector("#who")
