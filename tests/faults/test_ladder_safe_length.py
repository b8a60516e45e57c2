"""A failed ladder rung lowers the upstream's safe length on every replica until an admin restores it.

The state is shared (``audit.length_caps``, SQLite and PostgreSQL); a real gateway polls it like
quarantines and keeps production prompts out of the failing range: a prompt longer than the last
good rung is refused (nothing forwarded), a shorter one still goes.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import openai
import pytest
import yaml
from click.testing import CliRunner

from audit.length_caps import LengthCapError, active_caps, lower_safe_length, restore_safe_length
from gateway.cli import main
from gateway.probes.safe_length import SafeLengthBoard, SafeLengthUnknown
from gateway.probes.synthetic import filler
from gateway.settings import UpstreamSettings
from tests.faults.conftest import open_store
from tests.support import FakeUpstream, Scripted
from tests.support.harness import SECRETS, FakeUpstreams, GatewayHarness, fetch_rows
from tests.support.incident import Incident, echo_markers

POLL_S = 0.5


def test_length_caps_only_lower_and_restore_with_evidence(db_url: str, tmp_path: Path) -> None:
    """A lowering is written only below the lowest one in force; a restore ends them all; each
    change is an audit event; restoring what is not lowered is refused."""

    async def run() -> Any:
        store = await open_store(db_url, tmp_path)
        try:
            first = await lower_safe_length(store, upstream="u", max_prompt_tokens=2048, failed_rung_tokens=4096,
                                            reason="rung 4096 failed", actor="probe")  # fmt: skip
            higher = await lower_safe_length(store, upstream="u", max_prompt_tokens=3000, reason="r", actor="probe")
            lower = await lower_safe_length(store, upstream="u", max_prompt_tokens=1024, reason="r", actor="probe")
            other = await lower_safe_length(store, upstream="v", max_prompt_tokens=0, reason="r", actor="probe")
            active = await active_caps(store.engine)
            restored = await restore_safe_length(store, upstream="u", reason="vendor fixed it", actor="alice")
            after = await active_caps(store.engine)
            with pytest.raises(LengthCapError):
                await restore_safe_length(store, upstream="u", reason="again", actor="alice")
            return first, higher, lower, other, active, restored, after
        finally:
            await store.close()

    first, higher, lower, other, active, restored, after = asyncio.run(run())
    assert first is not None and first.failed_rung_tokens == 4096 and higher is None and lower is not None
    assert [(c.upstream, c.max_prompt_tokens) for c in active] == [("u", 2048), ("u", 1024), ("v", 0)]
    assert {c.id for c in restored} == {first.id, lower.id}
    assert [(c.upstream, c.max_prompt_tokens) for c in after] == [("v", 0)]
    board = SafeLengthBoard()
    with pytest.raises(SafeLengthUnknown):  # fail closed before the first read
        board.safe_tokens(UpstreamSettings(name="u", base_url="http://x/v1", kind="shared"))
    board.replace(active)
    assert board.safe_tokens(UpstreamSettings(name="u", base_url="http://x/v1", kind="shared")) == 1024
    assert board.safe_tokens(UpstreamSettings(name="w", base_url="http://x/v1", kind="shared",
                                              safe_prompt_tokens=500)) == 500  # fmt: skip
    rows = fetch_rows(db_url, "SELECT kind, detail FROM audit_events WHERE kind LIKE 'safe_length%' ORDER BY seq")
    assert [r["kind"] for r in rows] == ["safe_length_lowered"] * 3 + ["safe_length_restored"]
    assert json.loads(rows[-1]["detail"])["actor"] == "alice"


def _prompt(tokens: int) -> str:
    # Plain words, about 4 bytes a token with the estimate (bytes_per_token 4).
    text = filler(tokens)
    return text[: tokens * 4]


def _send(gw: GatewayHarness, key: str, tokens: int) -> int:
    try:
        gw.openai(key).chat.completions.create(model="chat", messages=[{"role": "user", "content": _prompt(tokens)}])
        return 200
    except openai.APIStatusError as exc:
        return exc.status_code


def _wait_for(gw: GatewayHarness, key: str, tokens: int, status: int) -> float:
    t0 = time.monotonic()
    while time.monotonic() - t0 < POLL_S + 5:
        if _send(gw, key, tokens) == status:
            return time.monotonic() - t0
        time.sleep(0.1)
    raise AssertionError(f"a {tokens}-token prompt never got {status}")


def test_failed_rung_lowers_safe_length_on_a_running_gateway_until_restored(tmp_path: Path, classifier: Any) -> None:
    """`tiergate probe --ladder --lower-safe-length` on one machine: the running gateway refuses
    prompts above the last good rung within its poll interval (the vendor receives none of them)
    and still forwards shorter ones; `--restore-safe-length` brings the configured length back."""
    fake = FakeUpstream(name="vendor")
    fake.script = Incident(3000, lambda body: fake.prompt_tokens("/v1/chat/completions", body))  # type: ignore[arg-type]  # Incident is called as the fake's script (tests/support/incident.py)
    db = f"sqlite+aiosqlite:///{tmp_path / 'audit.db'}"
    with FakeUpstreams(fake) as fakes:
        cfg = {"upstreams": [{"name": "vendor", "base_url": fakes.base_url("vendor"), "kind": "shared",
                              "max_tier": 2, "models": {"chat": "vendor-chat"}, "context_window": 8192}],
               "limits": {"auth_cache_s": 0}, "quarantine": {"poll_s": POLL_S}}  # fmt: skip
        ops = tmp_path / "ops.yaml"
        ops.write_text(yaml.safe_dump({**cfg, "secrets": SECRETS, "state_dir": str(tmp_path / "ops"),
                                       "audit": {"url": db, "checkpoint_dir": str(tmp_path / "cp")}}))  # fmt: skip
        with GatewayHarness(db, tmp_path / "gw", cfg, classifier=classifier) as gw:
            key = gw.create_key("acme", max_tier=2)
            fake.script = lambda r: Scripted("ok")
            assert _send(gw, key, 2500) == 200  # the configured length lets it through
            fake.script = Incident(3000, lambda body: fake.prompt_tokens("/v1/chat/completions", body))  # type: ignore[arg-type]  # Incident is called as the fake's script (tests/support/incident.py)
            runner = CliRunner()
            probe = runner.invoke(main, ["probe", "--config", str(ops), "--upstream", "vendor", "--ladder",
                                         "--rungs", "512,2048,4096", "--lower-safe-length"])  # fmt: skip
            assert probe.exit_code == 1, probe.output
            assert json.loads(probe.stdout.splitlines()[1])["safe_length_lowered_to"] == 2048
            fake.script = lambda r: Scripted("ok")
            took = _wait_for(gw, key, 2500, 400)
            assert took <= POLL_S + 3
            before = len(fake.ledger)
            assert _send(gw, key, 2500) == 400 and len(fake.ledger) == before  # nothing forwarded
            assert _send(gw, key, 1000) == 200 and len(fake.ledger) == before + 1
            no_reason = runner.invoke(main, ["probe", "--config", str(ops), "--restore-safe-length", "vendor"])
            assert no_reason.exit_code != 0 and "--reason" in no_reason.output
            restore = runner.invoke(main, ["probe", "--config", str(ops), "--restore-safe-length", "vendor",
                                           "--reason", "vendor fixed the KV pool", "--actor", "alice"])  # fmt: skip
            assert restore.exit_code == 0, restore.output
            assert json.loads(restore.stdout)["safe_tokens"] == 8192
            _wait_for(gw, key, 2500, 200)
    kinds = [r["kind"] for r in fetch_rows(db, "SELECT kind FROM audit_events WHERE kind LIKE 'safe_length%' "
                                               "OR kind LIKE 'ladder%' ORDER BY seq")]  # fmt: skip
    assert kinds == ["ladder_probe", "ladder_rung_failed", "safe_length_lowered", "safe_length_restored"]


def test_a_failure_above_the_safe_length_alarms_but_keeps_it(tmp_path: Path) -> None:
    """When safe_prompt_tokens already keeps production prompts below the failing rung, the rung
    alarms (event, exit 1) but the safe length is not lowered: production never reaches it."""
    fake = FakeUpstream(name="vendor")
    fake.script = Incident(3000, lambda body: fake.prompt_tokens("/v1/chat/completions", body))  # type: ignore[arg-type]  # Incident is called as the fake's script (tests/support/incident.py)
    db = f"sqlite+aiosqlite:///{tmp_path / 'audit.db'}"
    with FakeUpstreams(fake) as fakes:
        cfg = {"upstreams": [{"name": "vendor", "base_url": fakes.base_url("vendor"), "kind": "shared",
                              "max_tier": 2, "models": {"chat": "vendor-chat"}, "context_window": 8192,
                              "safe_prompt_tokens": 2500}],
               "secrets": SECRETS, "state_dir": str(tmp_path / "ops"),
               "audit": {"url": db, "checkpoint_dir": str(tmp_path / "cp")}}  # fmt: skip
        ops = tmp_path / "ops.yaml"
        ops.write_text(yaml.safe_dump(cfg))
        probe = CliRunner().invoke(main, ["probe", "--config", str(ops), "--upstream", "vendor", "--ladder",
                                          "--rungs", "1024,2048,4096", "--lower-safe-length"])  # fmt: skip
    assert probe.exit_code == 1
    assert "safe_length_lowered_to" not in json.loads(probe.stdout.splitlines()[1])
    kinds = [r["kind"] for r in fetch_rows(db, "SELECT kind FROM audit_events ORDER BY seq")]
    assert "ladder_rung_failed" in kinds and "safe_length_lowered" not in kinds


def test_server_climbs_the_ladder_on_schedule_and_obeys_its_own_lowering(tmp_path: Path, classifier: Any) -> None:
    """With probes.ladder.interval_s set, the running gateway climbs on its own, records the run
    and the alarm, exposes the rungs on /metrics, and lowers its own safe length at once."""
    import httpx

    fake = FakeUpstream(name="vendor")
    fake.script = Incident(3000, lambda body: fake.prompt_tokens("/v1/chat/completions", body))  # type: ignore[arg-type]  # Incident is called as the fake's script (tests/support/incident.py)
    db = f"sqlite+aiosqlite:///{tmp_path / 'audit.db'}"
    with FakeUpstreams(fake) as fakes:
        cfg = {"upstreams": [{"name": "vendor", "base_url": fakes.base_url("vendor"), "kind": "shared",
                              "max_tier": 2, "models": {"chat": "vendor-chat"}, "context_window": 8192}],
               "limits": {"auth_cache_s": 0}, "quarantine": {"poll_s": 30},
               "probes": {"ladder": {"interval_s": 0.2, "rungs": [512, 4096], "lower_safe_length": True}}}  # fmt: skip
        with GatewayHarness(db, tmp_path / "gw", cfg, classifier=classifier) as gw:
            deadline = time.monotonic() + 30
            rows: list[dict[str, Any]] = []
            while not rows and time.monotonic() < deadline:
                time.sleep(0.2)
                rows = fetch_rows(db, "SELECT detail FROM audit_events WHERE kind = 'safe_length_lowered'")
            assert rows and json.loads(rows[0]["detail"])["max_prompt_tokens"] == 512
            key = gw.create_key("acme", max_tier=2)
            # Scraped while the vendor still fails the long rung: once it is fixed, the next ladder
            # (every 0.2 s) may pass 4096 before a later scrape.
            metrics = httpx.get(gw.url + "/metrics", timeout=10).text
            # The vendor is fixed now: later ladders pass, yet a pass never raises a lowered length.
            fake.script = lambda r: echo_markers(r) if "TGPROBE-" in r.text else Scripted("ok")
            # poll_s is 30 s: only the probe's own poke can make this replica obey within seconds.
            assert _wait_for(gw, key, 1000, 400) < 5
            assert _send(gw, key, 300) == 200
    assert 'tiergate_ladder_rung_passed{rung="4096",upstream="vendor"} 0.0' in metrics
    assert 'tiergate_ladder_rung_passed{rung="512",upstream="vendor"} 1.0' in metrics
    assert "tiergate_safe_length_lowered 1.0" in metrics
    alarms = fetch_rows(db, "SELECT detail FROM audit_events WHERE kind = 'ladder_rung_failed'")
    assert alarms and json.loads(alarms[0]["detail"])["rung_tokens"] == 4096
