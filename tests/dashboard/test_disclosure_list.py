"""The exposure page's list of assessed disclosures: stored with the admin's tenant, scoped by it."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from tests.dashboard.conftest import PASSWORD, Seeded

DISCLOSURE = """title: {reference} incident
reference: {reference}
upstreams: [vendor]
window:
  start: 2020-01-01T00:00:00Z
  end: 2020-02-01T00:00:00Z
"""
ROW = re.compile(r'<td class="reference">([^<]*)</td>.*?<td class="tenant">(.*?)</td>')


def _csrf(html: str) -> str:
    return re.search(r'name="csrf_token" value="([^"]+)"', html).group(1)  # type: ignore[union-attr]  # no match fails the test right here


def _sign_in(client: httpx.Client, username: str) -> None:
    token = _csrf(client.get("/admin/sign-in").text)
    resp = client.post("/admin/sign-in", data={"csrf_token": token, "username": username,
                                               "password": PASSWORD, "next": "/admin/exposure"})  # fmt: skip
    assert resp.status_code == 303, resp.text


def _listed(client: httpx.Client) -> dict[str, str]:
    """reference -> tenant cell of every row in the page's disclosure list."""
    page = client.get("/admin/exposure")
    assert page.status_code == 200
    table = page.text.split('id="disclosures"', 1)[1]
    return {ref: re.sub(r"<[^>]+>", "", cell) for ref, cell in ROW.findall(table)}


@contextmanager
def _one_disclosure_each(seeded: Seeded) -> Iterator[tuple[dict[str, str], dict[str, httpx.Client]]]:
    """Each of root, acme-admin and globex-admin signs in and assesses a disclosure of its own:
    (who -> reference, who -> signed-in client)."""
    refs = {who: f"{who.upper()}-{uuid.uuid4().hex[:8]}" for who in ("root", "acme-admin", "globex-admin")}
    clients = {who: httpx.Client(base_url=seeded.url) for who in refs}
    try:
        for who, client in clients.items():
            _sign_in(client, who)
            form = client.get("/admin/exposure").text
            result = client.post("/admin/exposure", files={"file": ("", b"")},
                                 data={"csrf_token": _csrf(form),
                                       "disclosure": DISCLOSURE.format(reference=refs[who])})  # fmt: skip
            assert result.status_code == 200 and 'data-verdict="nothing_matched"' in result.text
        yield refs, clients
    finally:
        for client in clients.values():
            client.close()


def test_disclosure_list_is_scoped_by_tenant(seeded: Seeded) -> None:
    """A tenant admin lists its own and platform-wide disclosures only; a platform admin all three."""
    with _one_disclosure_each(seeded) as (refs, clients):
        stored = {r["reference"]: r["tenant"] for r in seeded.gw.rows(
            "SELECT reference, tenant FROM disclosures WHERE reference IN (:a, :b, :c)",
            {"a": refs["root"], "b": refs["acme-admin"], "c": refs["globex-admin"]})}  # fmt: skip
        assert stored == {refs["root"]: None, refs["acme-admin"]: "acme", refs["globex-admin"]: "globex"}

        acme = _listed(clients["acme-admin"])
        assert refs["acme-admin"] in acme and refs["root"] in acme and refs["globex-admin"] not in acme
        assert set(acme.values()) <= {"acme", "all tenants"}
        globex = _listed(clients["globex-admin"])
        assert refs["globex-admin"] in globex and refs["root"] in globex and refs["acme-admin"] not in globex
        assert set(globex.values()) <= {"globex", "all tenants"}
        root = _listed(clients["root"])
        assert (root[refs["root"]], root[refs["acme-admin"]], root[refs["globex-admin"]]) == (
            "all tenants",
            "acme",
            "globex",
        )


def test_another_tenants_disclosure_is_not_found_by_id(seeded: Seeded) -> None:
    """A tenant admin guessing another tenant's disclosure id gets 404 on the page and on both
    report downloads; its own and platform-wide disclosures open."""
    with _one_disclosure_each(seeded) as (refs, clients):
        ids = {r["reference"]: r["id"] for r in seeded.gw.rows(
            "SELECT id, reference FROM disclosures WHERE reference IN (:a, :b, :c)",
            {"a": refs["root"], "b": refs["acme-admin"], "c": refs["globex-admin"]})}  # fmt: skip
        globex = clients["globex-admin"]
        acme_id = ids[refs["acme-admin"]]
        for path in (
            f"/admin/exposure/{acme_id}",
            f"/admin/exposure/{acme_id}/report/md",
            f"/admin/exposure/{acme_id}/report/json",
        ):
            resp = globex.get(path)
            assert resp.status_code == 404 and refs["acme-admin"] not in resp.text, path
        for ref in (refs["globex-admin"], refs["root"]):
            page = globex.get(f"/admin/exposure/{ids[ref]}")
            assert page.status_code == 200 and ref in page.text
        assert clients["root"].get(f"/admin/exposure/{acme_id}").status_code == 200
