"""`tiergate exposure drill` on SQLite and PostgreSQL: a synthetic disclosure against the live log
(real traffic through a real gateway), the playbook's steps rehearsed and timed, and everything
marked as a drill so that nothing counts it as a real incident."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from gateway.cli import main
from tests.audit.test_playbook import PLAYBOOKS
from tests.gateway.conftest import base_config
from tests.support.harness import SECRETS, FakeUpstreams, GatewayHarness

PROMPTS = ["What is the capital of France?", "Please email bob@corp.example.com about the delay.",
           "Refund card 4556 0172 8390 6414 today."]  # Tier 1, 2 (stripped, shared), 3 (on-prem)  # fmt: skip


def _cli(cfg: Path, *args: str) -> Any:
    result = CliRunner().invoke(main, ["exposure", *args, "--config", str(cfg)])
    assert result.exit_code == 0, result.output
    return result


def test_drill_against_the_live_log(fakes: FakeUpstreams, db_url: str, tmp_path: Path, classifier: Any) -> None:
    config = base_config(fakes, playbooks=PLAYBOOKS)
    with GatewayHarness(db_url, tmp_path, config, classifier=classifier) as gw:
        client = gw.openai(gw.create_key("acme"))
        for text in PROMPTS:
            client.chat.completions.create(model="chat", messages=[{"role": "user", "content": text}])
        gw.settle()
        cfg = tmp_path / "ops.yaml"
        cfg.write_text(yaml.safe_dump({**config, "secrets": SECRETS, "state_dir": str(tmp_path / "ops"),
                                       "audit": {"url": db_url, "checkpoint_dir": str(tmp_path / "cp")}}))  # fmt: skip

        # A drill the people run: the gateway records loading and the assessment, timed.
        drill = _cli(cfg, "drill", "--actor", "ops on call: ana", "--format", "json")
        doc = json.loads(drill.stdout)
        assert doc["drill"] is True and doc["disclosure"]["reference"].startswith("DRILL-")
        assert doc["disclosure"]["title"].startswith("DRILL:")
        # Against the live log: exactly the three requests the gateway forwarded just now.
        assert doc["total"] == 3 and doc["by_tier"] == {"1": 1, "2": 1, "3": 1}
        assert doc["verdict"] == "sensitive_data_may_be_exposed"  # and still exit status 0
        steps = doc["timeline"]["steps"]
        assert [s["step"] for s in steps] == ["loaded", "assessed"] and all(s["drill"] for s in steps)
        assert steps[1]["detail"]["took_ms"] >= 0 and steps[1]["detail"]["total"] == 3
        assert "exposure step" in drill.stderr
        did = doc["disclosure_id"]

        # A step recorded on a drill is part of the drill, even without saying so.
        step = CliRunner().invoke(main, ["exposure", "step", str(did), "decided", "--reportable", "no",
                                         "--reason", "rehearsal", "--actor", "DPO", "--config", str(cfg)])  # fmt: skip
        assert step.exit_code == 0 and json.loads(step.stdout)["drill"] is True and "DRILL" in step.stderr
        md = _cli(cfg, "timeline", str(did)).stdout
        assert md.startswith("# DRILL: Exposure assessment") and "not a real incident" in md
        assert "| 3 | decided (drill) |" in md

        # A simulated drill runs every step, as the playbook's owners, each saying so.
        sim = json.loads(_cli(cfg, "drill", "--actor", "ops on call", "--simulate", "--format", "json").stdout)
        rows = sim["timeline"]["steps"]
        assert [r["step"] for r in rows] == ["loaded", "assessed", "decided", "notified", "notified", "closed"]
        assert [r["actor"] for r in rows[2:]] == ["DPO", "customer success", "DPO", "DPO"]
        assert all(r["detail"].get("simulated") for r in rows[2:]) and sim["timeline"]["done"] is True
        assert all(r["took_s"] >= 0 for r in rows)

        # Nothing of this is a real incident's record; all of it is in the chain.
        events = gw.rows("SELECT kind, detail FROM audit_events WHERE kind LIKE 'disclosure_%'")
        assert {e["kind"] for e in events} == {"disclosure_drill_step"} and len(events) == 3 + 6
        assert all(json.loads(e["detail"])["drill"] is True for e in events)
        verify = CliRunner().invoke(main, ["audit", "verify", "--config", str(cfg)])
        assert verify.exit_code == 0, verify.output
