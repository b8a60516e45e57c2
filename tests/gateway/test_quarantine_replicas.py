"""Quarantine across replicas: two real gateways sharing one database (PostgreSQL with Redis
announcements, and SQLite with polling only), changed through the real CLI.

Each fake vendor answers with its own name, so every answer says where the request went; the
ledgers say what each vendor received. The stated bound (``quarantine.poll_s`` plus one read) is
held in reads, not seconds: after the CLI returns, a replica may route by the old state only
until it has completed two reads of the shared state (``tiergate_quarantine_reads_total`` on its
``/metrics``): the read in flight when the change committed may have begun before it, the next
began after. On a loaded machine seconds stretch, the count of reads does not. The times are
printed for the record.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
import yaml
from click.testing import CliRunner

from gateway.cli import main
from tests.support import FakeUpstream, Received, Scripted
from tests.support.harness import SECRETS, FakeUpstreams, GatewayHarness

SSN = "078-05-1120"
TIER3 = f"STRICTLY CONFIDENTIAL. Employee record: SSN {SSN}, salary review notes."
TIER1 = "What is the capital of France?"
POLL_S = 1.0
WAIT_S = 120.0  # generous bound for a change that must reach a replica; never a speed assertion
REFUSED = "refused"  # what _until waits for when the request must be refused as quarantined


def _named(name: str) -> Any:
    def script(_r: Received) -> Scripted:
        return Scripted(content=name)

    return script


@pytest.fixture
def vendors() -> Iterator[FakeUpstreams]:
    fakes = [FakeUpstream(name=n, kind=k, script=_named(n))
             for n, k in (("ded-a", "dedicated"), ("ded-b", "dedicated"), ("shared-s", "shared"))]  # fmt: skip
    with FakeUpstreams(*fakes) as f:
        yield f


def _config(v: FakeUpstreams, redis_url: str | None, channel: str) -> dict[str, Any]:
    def up(name: str, kind: str, provider: str, max_tier: int) -> dict[str, Any]:
        return {"name": name, "base_url": v.base_url(name), "kind": kind, "provider": provider,
                "max_tier": max_tier, "models": {"m": f"{provider}-model"}, "context_window": 100_000,
                "timeouts": {"read": 10}}  # fmt: skip

    return {
        "upstreams": [
            up("ded-a", "dedicated", "vendor-a", 3),
            up("ded-b", "dedicated", "vendor-b", 3),
            up("shared-s", "shared", "vendor-s", 2),
        ],  # fmt: skip
        # ``m`` tries ded-a, then ded-b, then the shared one (Tier 1 and 2 only).
        "aliases": [{"name": "m", "upstreams": ["ded-a", "ded-b", "shared-s"]}],
        "limits": {"auth_cache_s": 0},
        "quarantine": {"poll_s": POLL_S, "channel": channel},
        **({"redis_url": redis_url} if redis_url else {}),
    }


@contextmanager
def _replicas(db_url: str, tmp_path: Path, config: dict[str, Any], classifier: Any) -> Iterator[list[GatewayHarness]]:
    with ExitStack() as stack:
        yield [stack.enter_context(GatewayHarness(db_url, tmp_path / f"replica{i}", config, classifier=classifier))
               for i in range(2)]  # fmt: skip


def _cli(tmp_path: Path, db_url: str, config: dict[str, Any], *args: str) -> Any:
    path = tmp_path / "ops.yaml"
    path.write_text(yaml.safe_dump({**config, "secrets": SECRETS, "state_dir": str(tmp_path / "ops"),
                                    "audit": {"url": db_url, "checkpoint_dir": str(tmp_path / "cp")}}))  # fmt: skip
    result = CliRunner().invoke(main, ["upstream", *args, "--config", str(path)])
    assert result.exit_code == 0, result.output
    return result


def _answer(client: openai.OpenAI, text: str) -> str:
    reply = client.chat.completions.create(model="m", messages=[{"role": "user", "content": text}])
    return str(reply.choices[0].message.content)


def _reads(gw: GatewayHarness) -> float:
    """The replica's successful reads of the shared quarantine state so far."""
    from prometheus_client.parser import text_string_to_metric_families

    text = httpx.get(gw.url + "/metrics", timeout=WAIT_S).text
    return sum(s.value for f in text_string_to_metric_families(text) for s in f.samples
               if s.name == "tiergate_quarantine_reads_total")  # fmt: skip


def _routed(client: openai.OpenAI, text: str) -> str:
    """The vendor that answered, or REFUSED when the replica refused the request as quarantined."""
    try:
        return _answer(client, text)
    except openai.APIStatusError as exc:
        assert exc.status_code == 503 and exc.body["code"] == "upstream_quarantined"  # type: ignore[index]  # an error body is a dict
        return REFUSED


def _until(gw: GatewayHarness, client: openai.OpenAI, text: str, wanted: str) -> float:
    """Seconds until ``gw`` (reached by ``client``) routes ``text`` to ``wanted``, called right
    after a change committed; fails if it routes otherwise once two reads began after the call."""
    started = time.monotonic()
    at_change = _reads(gw)
    while time.monotonic() < started + WAIT_S:
        since = _reads(gw) - at_change  # before the request: it routes by a read at least this new
        got = _routed(client, text)
        if got == wanted:
            return time.monotonic() - started
        assert since <= 1, f"routed to {got}, not {wanted}, {since:.0f} reads after the change"
        time.sleep(0.02)
    raise AssertionError(f"still not routed to {wanted} after {WAIT_S:.0f}s")


def _refused(client: openai.OpenAI, text: str) -> openai.APIStatusError:
    with pytest.raises(openai.APIStatusError) as err:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": text}])
    return err.value


def _quarantine_moves_traffic(v: FakeUpstreams, db_url: str, tmp_path: Path, classifier: Any,
                              redis_url: str | None) -> list[float]:  # fmt: skip
    config = _config(v, redis_url, f"tgtest:{uuid.uuid4().hex[:10]}:quarantine")
    took: list[float] = []
    with _replicas(db_url, tmp_path, config, classifier) as gws:
        clients = [gw.openai(gw.create_key("acme")) for gw in gws]
        pairs = list(zip(gws, clients, strict=True))
        for c in clients:
            assert _answer(c, TIER1) == "ded-a" and _answer(c, TIER3) == "ded-a"

        # 1. The upstream ded-a: both replicas move to ded-b (same trust) within the bound.
        _cli(tmp_path, db_url, config, "quarantine", "ded-a", "--reason", "vendor notice A-1", "--actor", "ops:ana")
        took += [_until(gw, c, TIER1, "ded-b") for gw, c in pairs]
        assert all(_answer(c, TIER3) == "ded-b" for c in clients)

        # 2. Vendor b's model as well: nothing of equal or higher trust is left. Tier 3 is refused
        # and so is Tier 1 (the shared upstream is of lower trust than those quarantined).
        _cli(tmp_path, db_url, config, "quarantine", "--provider", "Vendor-B", "--model", "vendor-b-model",
             "--reason", "model pulled for a day", "--actor", "ops:ben")  # fmt: skip
        took += [_until(gw, c, TIER1, REFUSED) for gw, c in pairs]
        for c in clients:
            err = _refused(c, TIER3)
            assert err.status_code == 503 and err.body["code"] == "upstream_quarantined"  # type: ignore[index]  # an error body is a dict
            assert "provider vendor-b, model vendor-b-model" in err.body["message"]  # type: ignore[index]  # an error body is a dict
            assert "ded-a" not in err.body["message"]  # type: ignore[index]  # an error body is a dict
        assert len(v["shared-s"].ledger) == 0  # never fell back to lower trust
        assert SSN not in v["shared-s"].ledger.raw_text()

        # 3. Release (by target and by id): routing as before, on both replicas.
        _cli(tmp_path, db_url, config, "release", "--provider", "vendor-b", "--model", "vendor-b-model",
             "--reason", "vendor restored it", "--actor", "ops:ben")  # fmt: skip
        took += [_until(gw, c, TIER3, "ded-b") for gw, c in pairs]
        listed = _cli(tmp_path, db_url, config, "quarantines").stdout.splitlines()
        (only,) = [yaml.safe_load(line) for line in listed]
        assert only["upstream"] == "ded-a" and only["actor"] == "ops:ana"
        _cli(tmp_path, db_url, config, "release", "--id", str(only["id"]), "--reason", "done", "--actor", "ops:ana")
        took += [_until(gw, c, TIER1, "ded-a") for gw, c in pairs]
        assert len(v["shared-s"].ledger) == 0

        refusals = gws[0].rows("SELECT r.tier, o.error_class FROM audit_requests r JOIN audit_outcomes o "
                               "ON o.request_id = r.request_id WHERE NOT r.forwarded")  # fmt: skip
        assert refusals and {r["error_class"] for r in refusals} == {"upstream_quarantined"}
        assert 3 in {r["tier"] for r in refusals}
        events = gws[1].rows("SELECT kind, detail FROM audit_events WHERE kind LIKE 'upstream_%' ORDER BY seq")
        assert [e["kind"] for e in events] == ["upstream_quarantined"] * 2 + ["upstream_released"] * 2
        assert '"actor":"ops:ana"' in events[0]["detail"] and "vendor notice A-1" in events[0]["detail"]
    print(f"quarantine reached the replicas after {', '.join(f'{t:.2f}' for t in took)} s")
    return took


def test_two_replicas_on_postgresql_with_redis(vendors: FakeUpstreams, postgres_db: str, redis_url: str,
                                               tmp_path: Path, classifier: Any) -> None:  # fmt: skip
    took = _quarantine_moves_traffic(vendors, postgres_db, tmp_path, classifier, redis_url)
    # Announced on Redis: far inside the polling bound on most changes (not all: a change can
    # land just before a poll would have seen it anyway).
    assert sorted(took)[len(took) // 2] < POLL_S


def test_two_replicas_on_sqlite_polling(vendors: FakeUpstreams, sqlite_db: str, tmp_path: Path,
                                        classifier: Any) -> None:  # fmt: skip
    _quarantine_moves_traffic(vendors, sqlite_db, tmp_path, classifier, None)
