"""The dashboard's ``/admin/metrics`` and ``/admin/events.jsonl`` honour tenant scope: a tenant
admin sees their tenant's figures and records only, never the gateway-wide registry nor another
tenant's rows, whatever they ask for; a platform admin sees everything or picks a tenant."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from tests.dashboard.conftest import PASSWORD, Seeded
from tests.dashboard.test_http import _attempt


@contextmanager
def _signed_in(seeded: Seeded, username: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=seeded.url) as client:
        r = _attempt(client, username, PASSWORD)
        assert r.status_code in (302, 303), r.text
        yield client


def _events(client: httpx.Client, **params: object) -> tuple[list[dict[str, object]], int]:
    r = client.get("/admin/events.jsonl", params=params)
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/x-ndjson")
    return [json.loads(line) for line in r.text.splitlines()], int(r.headers["x-tiergate-next-after"])


def test_tenant_admin_metrics_are_their_tenant_only(seeded: Seeded) -> None:
    with _signed_in(seeded, "acme-admin") as acme:
        body = acme.get("/admin/metrics").text
        assert "tiergate_tenant_requests{" in body and 'tenant="acme"' in body
        assert "globex" not in body and "tiergate_requests_total" not in body  # not the shared registry
        assert acme.get("/admin/metrics", params={"tenant": "globex"}).text == body  # asking for more: the same
        # acme's seed: one stripped e-mail address, one integrity failure, one refusal above the key's cap.
        assert 'tiergate_tenant_identifiers_stripped{tenant="acme",window="3600s",entity="EMAIL_ADDRESS"}' in body
        assert 'tiergate_tenant_integrity_failures{tenant="acme",window="3600s",upstream="vendor"} 1' in body
        assert 'tiergate_tenant_refusals{tenant="acme",window="3600s",reason="tier_not_allowed"} 1' in body
    with _signed_in(seeded, "root") as root:
        assert "tiergate_requests_total" in root.get("/admin/metrics").text
        globex = root.get("/admin/metrics", params={"tenant": "globex"}).text
        assert 'tenant="globex"' in globex and 'tenant="acme"' not in globex
    assert httpx.get(seeded.url + "/admin/metrics", follow_redirects=False).status_code in (302, 303, 401)


def test_tenant_admin_event_view_is_scoped(seeded: Seeded) -> None:
    with _signed_in(seeded, "root") as root:
        everything, _ = _events(root, limit=5000)
        tenants = {r["tenant"] for r in everything}
        assert {"acme", "globex", None} <= tenants
    with _signed_in(seeded, "acme-admin") as acme:
        mine, next_after = _events(acme, limit=5000)
        assert mine and {r["tenant"] for r in mine} == {"acme"}
        assert {r["type"] for r in mine} >= {"request", "outcome", "event"}
        assert [r["seq"] for r in mine] == [r["seq"] for r in everything if r["tenant"] == "acme"]
        assert next_after == everything[-1]["seq"]  # past globex's rows too: the cursor is the log's
        page, cursor = _events(acme, limit=3)
        rest, _ = _events(acme, after=cursor, limit=5000)
        assert [r["seq"] for r in page + rest] == [r["seq"] for r in mine]
        assert acme.get("/admin/events.jsonl", params={"tenant": "globex"}).status_code == 400
        text = acme.get("/admin/events.jsonl", params={"limit": 5000}).text
        assert "globex" not in text and "corp.example.com" not in text and "fingerprint" not in text
