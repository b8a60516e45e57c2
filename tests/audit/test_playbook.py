"""The incident playbook through the CLI on SQLite and PostgreSQL: loading a disclosure for real
starts the clock, each step is an audit event with its time and actor, the timeline is in the
report (Markdown and JSON) with the time left; the clock's arithmetic on its own."""

from __future__ import annotations

import json
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from audit.playbook import Playbook, Step, Timeline
from audit.timeline_report import clock_line
from gateway.cli import main
from tests.audit.conftest import write_cli_config
from tests.support.harness import fetch_rows

PLAYBOOKS = {
    "default": {
        "deadline_hours": 24,
        "check_logs": {"owner": "ops on call", "contact": "ops@example.com"},
        "decide": {"owner": "DPO", "backup": "CISO", "contact": "dpo@example.com"},
        "notify_customers": {"owner": "customer success"},
        "notify_body": {"owner": "DPO"},
        "notified_body": "the supervisory authority",
    },
    "tenants": {"acme": {"deadline_hours": 12, "check_logs": {"owner": "acme ops"},
                         "decide": {"owner": "acme legal"}, "notify_customers": {"owner": "acme cs"}}},
}  # fmt: skip
DISCLOSURE = textwrap.dedent("""\
    title: KV-cache cross-talk
    reference: VENDOR-2026-0042
    providers: [examplecloud]
    window:
      start: 2026-08-27T00:00:00Z
      end: 2026-09-09T23:59:59Z
""")


def _config(tmp_path: Path, db_url: str) -> str:
    path = write_cli_config(tmp_path, db_url)
    cfg = yaml.safe_load(Path(path).read_text())
    cfg["playbooks"] = PLAYBOOKS
    Path(path).write_text(yaml.safe_dump(cfg))
    return path


def _run(cfg: str, *args: str, ok: bool = True) -> Any:
    result = CliRunner().invoke(main, ["exposure", *args, "--config", cfg])
    if ok:
        assert result.exit_code in (0, 10, 20), result.output
    return result


def test_playbook_timeline_through_the_cli(db_url: str, tmp_path: Path) -> None:
    cfg = _config(tmp_path, db_url)
    (tmp_path / "d.yaml").write_text(DISCLOSURE)
    assert CliRunner().invoke(main, ["db", "upgrade", "--config", cfg]).exit_code == 0

    # An ad-hoc assessment starts no clock, and takes no steps.
    adhoc = json.loads(_run(cfg, "assess", str(tmp_path / "d.yaml"), "--format", "json").stdout)
    assert "timeline" not in adhoc
    refused = _run(cfg, "step", str(adhoc["disclosure_id"]), "decided", "--reportable", "no", "--reason", "x",
                   "--actor", "DPO", ok=False)  # fmt: skip
    assert refused.exit_code == 1 and "no clock was started" in refused.output
    no_actor = _run(cfg, "assess", str(tmp_path / "d.yaml"), "--record", ok=False)
    assert no_actor.exit_code == 2 and "--actor" in no_actor.output

    before = datetime.now(UTC)
    real = json.loads(_run(cfg, "assess", str(tmp_path / "d.yaml"), "--record", "--actor", "ops on call: ana",
                           "--format", "json").stdout)  # fmt: skip
    did = real["disclosure_id"]
    t = real["timeline"]
    assert real["drill"] is False and t["drill"] is False and [s["step"] for s in t["steps"]] == ["loaded", "assessed"]
    assert t["steps"][1]["detail"]["verdict"] == "nothing_matched" and t["steps"][1]["owner"] == "ops on call"
    assert t["steps"][0]["detail"]["by_owner"] is True
    started = datetime.fromisoformat(t["started"])
    assert before <= started <= datetime.now(UTC)
    assert datetime.fromisoformat(t["deadline"]) == started + timedelta(hours=24)
    assert 24 * 3600 - 60 < t["seconds_left"] <= 24 * 3600 and t["done"] is False

    # Order is the playbook's: no notification before a decision; a decision needs its reason.
    early = _run(cfg, "step", str(did), "notified", "--party", "body", "--to", "x", "--actor", "DPO", ok=False)
    assert early.exit_code == 1 and "record `decided` first" in early.output
    bare = _run(cfg, "step", str(did), "decided", "--reportable", "yes", "--actor", "DPO", ok=False)
    assert bare.exit_code == 1 and "reason" in bare.output
    decided = _run(cfg, "step", str(did), "decided", "--reportable", "yes", "--actor", "DPO (Ben)",
                   "--reason", "Tier-2 rows of two tenants in the window")  # fmt: skip
    assert json.loads(decided.stdout)["reportable"] is True and "left" in decided.stderr
    _run(cfg, "step", str(did), "notified", "--party", "customers", "--to", "acme security team",
         "--actor", "intern")  # fmt: skip
    _run(cfg, "step", str(did), "notified", "--party", "body", "--to", "authority case 2026-117", "--actor", "DPO")

    md = _run(cfg, "timeline", str(did)).stdout
    assert "## Playbook and clock" in md and "stopped " in md and "before the deadline" in md
    assert "| decides reportability | DPO (backup CISO), dpo@example.com |" in md
    assert "REPORTABLE: Tier-2 rows of two tenants in the window" in md
    assert "customers: acme security team (not the playbook's owner for this step)" in md
    assert "DRILL" not in md
    doc = json.loads(_run(cfg, "timeline", str(did), "--format", "json").stdout)
    steps = doc["timeline"]["steps"]
    assert [s["step"] for s in steps] == ["loaded", "assessed", "decided", "notified", "notified"]
    assert doc["timeline"]["done"] is True and all(s["took_s"] >= 0 for s in steps)
    assert [s["at"] for s in steps] == sorted(s["at"] for s in steps)

    # Each step is an audit event in the chain, with its time and actor.
    events = fetch_rows(db_url, "SELECT detail FROM audit_events WHERE kind = 'disclosure_step' ORDER BY seq")
    details = [json.loads(e["detail"]) for e in events]
    assert [(d["step"], d["actor"]) for d in details] == [
        ("loaded", "ops on call: ana"), ("assessed", "ops on call: ana"), ("decided", "DPO (Ben)"),
        ("notified", "intern"), ("notified", "DPO")]  # fmt: skip
    assert all(d["disclosure_id"] == did and d["drill"] is False and d["at"] for d in details)
    verify = CliRunner().invoke(main, ["audit", "verify", "--config", cfg])
    assert verify.exit_code == 0, verify.output


def test_a_tenant_disclosure_uses_that_tenants_playbook(sqlite_db: str, tmp_path: Path) -> None:
    cfg = _config(tmp_path, sqlite_db)
    (tmp_path / "d.yaml").write_text(DISCLOSURE)
    assert CliRunner().invoke(main, ["db", "upgrade", "--config", cfg]).exit_code == 0
    doc = json.loads(_run(cfg, "assess", str(tmp_path / "d.yaml"), "--record", "--actor", "acme ops",
                          "--tenant", "acme", "--format", "json").stdout)  # fmt: skip
    t = doc["timeline"]
    assert datetime.fromisoformat(t["deadline"]) - datetime.fromisoformat(t["started"]) == timedelta(hours=12)
    assert t["steps"][0]["owner"] == "acme ops"
    listed = json.loads(_run(cfg, "disclosures", "--format", "json").stdout)
    assert listed[0]["tenant"] == "acme"


PB = Playbook.model_validate(PLAYBOOKS["default"])
T0 = datetime(2026, 9, 1, 12, 0, tzinfo=UTC)


def _timeline(offsets_s: list[float], now_s: float, decided: bool | None = None) -> Timeline:
    names = ["loaded", "assessed"][: len(offsets_s)]
    steps = [Step(n, T0 + timedelta(seconds=o), "x", False, {}) for n, o in zip(names, offsets_s, strict=False)]
    if decided is not None:
        steps.append(Step("decided", T0 + timedelta(seconds=now_s - 1), "x", False, {"reportable": decided}))
    return Timeline(1, tuple(steps), PB, T0 + timedelta(seconds=now_s))


@given(now_s=st.floats(0, 3 * 86400), assessed_s=st.floats(0, 3600))
def test_the_clock_counts_down_from_loading(now_s: float, assessed_s: float) -> None:
    t = _timeline([0, min(assessed_s, now_s)], now_s)
    left = t.time_left()
    assert left is not None and abs(left.total_seconds() - (86400 - now_s)) < 1e-3
    assert clock_line(t).startswith("OVERDUE by") == (now_s > 86400 + 0.999)
    assert not t.done


def test_the_clock_stops_at_a_decision_not_to_report_and_waits_for_a_notification() -> None:
    no = _timeline([0, 10], 7200, decided=False)
    assert no.done and no.stopped_at == T0 + timedelta(seconds=7199)
    assert clock_line(no) == "stopped 22 h 00 min before the deadline"
    yes = _timeline([0, 10], 90000, decided=True)
    assert not yes.done and clock_line(yes) == "OVERDUE by 1 h 00 min"
