"""The write-ahead audit on SQLite and PostgreSQL: committed before the upstream sees a byte,
503 with nothing forwarded when it cannot be written, refusals recorded, no prompt text stored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from gateway.ratelimit import MemoryLimiter, Verdict
from migrations import downgrade, upgrade
from tests.gateway.conftest import base_config
from tests.support import Received, Scripted
from tests.support.harness import FakeUpstreams, GatewayHarness, fetch_rows
from tests.support.stores import FailingWrites

MARKER = "zebra-orchid-5521"
PROMPT = f"Summarise the meeting notes about {MARKER} for the weekly update."


def test_row_committed_before_upstream_receives(fakes: FakeUpstreams, db_url: str, tmp_path: Path,
                                                classifier: Any) -> None:  # fmt: skip
    """When the upstream gets the request, its audit row is already committed (read from another
    connection); the outcome follows; no prompt text is stored anywhere in either row."""
    seen_at_upstream: list[list[dict[str, Any]]] = []

    def script(r: Received) -> Scripted:
        seen_at_upstream.append(fetch_rows(db_url, "SELECT request_id, upstream, tier FROM audit_requests"))
        return Scripted(content="Summary: fine.")

    fakes["vendor"].script = script
    with GatewayHarness(db_url, tmp_path, base_config(fakes), classifier=classifier) as gw:
        client = gw.openai(gw.create_key("acme"))
        raw = client.chat.completions.with_raw_response.create(
            model="chat", messages=[{"role": "user", "content": PROMPT}]
        )
        request_id = raw.headers["x-request-id"]
        assert raw.parse().choices[0].message.content == "Summary: fine."
        gw_rows = gw.rows("SELECT * FROM audit_requests WHERE request_id = :r", {"r": request_id})
        outcomes = gw.rows("SELECT * FROM audit_outcomes WHERE request_id = :r", {"r": request_id})
    (at_upstream,) = seen_at_upstream
    assert [r["request_id"] for r in at_upstream] == [request_id]
    (row,) = gw_rows
    assert row["tenant"] == "acme" and row["upstream"] == "vendor" and row["upstream_kind"] == "shared"
    assert row["provider_model"] == "vendor-chat" and row["client_model"] == "chat"
    assert row["tier"] == 1 and row["prompt_chars"] == len(PROMPT) and row["prompt_tokens"] > 0
    assert len(row["fingerprint"]) == 64 and row["stream"] in (False, 0)
    (out,) = outcomes
    assert out["status"] == "ok" and out["http_status"] == 200 and out["usage_prompt_tokens"] > 0
    assert MARKER not in json.dumps([row, out], default=str)


def test_audit_failure_503_nothing_forwarded(fakes: FakeUpstreams, db_url: str, tmp_path: Path,
                                             classifier: Any) -> None:  # fmt: skip
    """If the write-ahead row cannot be committed the client gets 503 and the upstream gets nothing;
    /readyz reports the database unavailable while /healthz stays up."""
    with GatewayHarness(db_url, tmp_path, base_config(fakes), classifier=classifier,
                        store_wrapper=FailingWrites) as gw:  # fmt: skip
        assert httpx.get(gw.url + "/healthz").status_code == 200
        ready = httpx.get(gw.url + "/readyz")
        assert ready.status_code == 503 and ready.json()["checks"]["database"] == "unavailable"
        client = gw.openai(gw.create_key())
        for stream in (False, True):
            with pytest.raises(openai.APIStatusError) as err:
                client.chat.completions.create(model="chat", stream=stream,
                                               messages=[{"role": "user", "content": PROMPT}])  # fmt: skip
            assert err.value.status_code == 503
            assert err.value.body["code"] == "audit_unavailable"  # type: ignore[index]  # an error body is a dict
            assert MARKER not in str(err.value.body)
    assert len(fakes["vendor"].ledger) == 0 and len(fakes["local"].ledger) == 0


def test_refusals_recorded(fakes: FakeUpstreams, db_url: str, tmp_path: Path, classifier: Any) -> None:
    """401 and 403 refusals get a request row (not forwarded) and a 'refused' outcome, and the
    refused client gets that row's id (``x-request-id``) with its error."""
    ids: dict[int, str] = {}
    with GatewayHarness(db_url, tmp_path, base_config(fakes), classifier=classifier) as gw:
        with pytest.raises(openai.AuthenticationError) as unknown:
            gw.openai("tg_0123456789abcdef_wrong").chat.completions.create(
                model="chat", messages=[{"role": "user", "content": PROMPT}])  # fmt: skip
        ids[401] = unknown.value.response.headers["x-request-id"]
        capped = gw.openai(gw.create_key("beta", models=["embed"]))
        with pytest.raises(openai.PermissionDeniedError) as denied:
            capped.chat.completions.create(model="chat", messages=[{"role": "user", "content": PROMPT}])
        ids[403] = denied.value.response.headers["x-request-id"]
        rows = gw.rows(
            "SELECT r.request_id, r.tenant, r.upstream, r.forwarded, o.status, o.http_status, o.error_class "
            "FROM audit_requests r JOIN audit_outcomes o ON o.request_id = r.request_id ORDER BY o.http_status"
        )
    assert [(r["tenant"], r["upstream"], bool(r["forwarded"]), r["status"], r["http_status"], r["error_class"])
            for r in rows] == [(None, None, False, "refused", 401, "invalid_api_key"),
                               ("beta", None, False, "refused", 403, "model_not_allowed")]  # fmt: skip
    assert {r["http_status"]: r["request_id"] for r in rows} == ids and ids[401] != ids[403]
    assert len(fakes["vendor"].ledger) == 0


def test_migrations_up_and_down(db_url: str, tmp_path: Path) -> None:
    """The schema upgrades, downgrades to nothing, and upgrades again, on SQLite and PostgreSQL."""
    from sqlalchemy import inspect as sa_inspect

    gw = GatewayHarness(db_url, tmp_path, {})

    async def tables(store: Any) -> set[str]:
        async with store.engine.connect() as conn:
            return set(await conn.run_sync(lambda c: sa_inspect(c).get_table_names()))

    async def cycle(store: Any) -> tuple[set[str], set[str], set[str]]:
        await upgrade(store)
        up = await tables(store)
        await downgrade(store)
        down = await tables(store)
        await upgrade(store)
        return up, down, await tables(store)

    up, down, again = gw.admin(cycle)
    assert {"audit_requests", "audit_outcomes", "api_keys"} <= up
    assert not (down & {"audit_requests", "audit_outcomes", "api_keys"})
    assert again == up


class _BrokenTokenLimiter(MemoryLimiter):
    """A limiter with a bug on the token budget (the check just before the write-ahead row)."""

    async def hit(self, subject: str, *, kind: str, amount: int, limit: int | None) -> Verdict:
        if kind == "tokens":
            raise KeyError("a bug, not a refusal")
        return await super().hit(subject, kind=kind, amount=amount, limit=limit)


def test_a_bug_before_forwarding_is_a_recorded_500(fakes: FakeUpstreams, sqlite_db: str, tmp_path: Path,
                                                   classifier: Any) -> None:  # fmt: skip
    """An unexpected error ends the request too: the client gets a bare 500, nothing was
    forwarded, and the request has its row (not forwarded) with a 500 outcome."""
    with GatewayHarness(sqlite_db, tmp_path, base_config(fakes), classifier=classifier,
                        limiter=_BrokenTokenLimiter()) as gw:  # fmt: skip
        r = httpx.post(
            gw.url + "/v1/chat/completions",
            json={"model": "chat", "messages": [{"role": "user", "content": PROMPT}]},
            headers={"authorization": f"Bearer {gw.create_key()}"},
            timeout=30,
        )
        rows = gw.rows("SELECT r.forwarded, r.upstream, o.status, o.http_status, o.error_class FROM audit_requests r "
                       "JOIN audit_outcomes o ON o.request_id = r.request_id")  # fmt: skip
    assert r.status_code == 500 and MARKER not in r.text and "KeyError" not in r.text
    assert [(bool(x["forwarded"]), x["upstream"], x["status"], x["http_status"], x["error_class"]) for x in rows] == [
        (False, None, "refused", 500, "internal_error")
    ]
    assert len(fakes["vendor"].ledger) == 0 and len(fakes["local"].ledger) == 0
