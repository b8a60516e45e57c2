"""Alerts (``alerts.webhooks``) to real webhook servers on loopback: integrity failures, failed
ladder rungs and probes, quarantines, the audit log unavailable and rate limits failing open each
alert once per rule and key within the dedup window, in generic / Slack / Teams / PagerDuty
shapes, with no prompt text; ``tiergate alerts test`` reports each webhook."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import openai
import pytest
import yaml
from click.testing import CliRunner

from gateway.alerts.rules import Alert
from gateway.cli import main as cli
from tests.gateway.conftest import base_config
from tests.support import Scripted
from tests.support.harness import SECRETS, FakeUpstreams, GatewayHarness
from tests.support.siem_receivers import WebhookReceiver, wait_for
from tests.support.stores import FailingWrites

PROMPT = "ALERT-PROMPT-e41b please summarise the board minutes"


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIERGATE_TEST_PD_KEY", "pd-routing-key-1")
    monkeypatch.setenv("TIERGATE_TEST_ALERT_TOKEN", "Bearer alert-token-1")


def _alerts(*hooks: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"webhooks": list(hooks), "poll_interval_s": 0.05, "retry_backoff_s": 0.05, **extra}


def _bodies(hook: WebhookReceiver) -> list[dict[str, Any]]:
    return [json.loads(line) for line in hook.lines]


def test_integrity_failures_alert_once_in_every_format(fakes: FakeUpstreams, sqlite_db: str, tmp_path: Path,
                                                       classifier: Any) -> None:  # fmt: skip
    with WebhookReceiver() as generic, WebhookReceiver() as slack, WebhookReceiver() as teams, \
            WebhookReceiver() as pd:  # fmt: skip
        cfg = base_config(
            fakes,
            alerts=_alerts(
                {"name": "generic", "url": generic.url, "headers_env": {"authorization": "TIERGATE_TEST_ALERT_TOKEN"}},
                {"name": "slack", "url": slack.url, "format": "slack"},
                {"name": "teams", "url": teams.url, "format": "teams"},
                {"name": "pd", "url": pd.url, "format": "pagerduty", "routing_key_env": "TIERGATE_TEST_PD_KEY"},
            ),
        )
        fakes["vendor"].script = lambda r: Scripted(content="leak", prompt_tokens=10**6)
        with GatewayHarness(sqlite_db, tmp_path, cfg, classifier=classifier) as gw:
            client = gw.openai(gw.create_key())
            for _ in range(3):  # three failures of one upstream inside the window: one alert
                with pytest.raises(openai.InternalServerError):
                    client.chat.completions.create(model="chat", messages=[{"role": "user", "content": PROMPT}])
            gw.settle()
            wait_for(lambda: all(h.lines for h in (generic, slack, teams, pd)), what="alerts")
            import time

            time.sleep(0.5)  # the other two failures have been seen by now
            import httpx

            scrape = httpx.get(gw.url + "/metrics").text
        (alert,) = _bodies(generic)
        assert alert["rule"] == "integrity_failure" and alert["key"] == "vendor" and alert["severity"] == "error"
        assert alert["details"]["reason"] == "prompt_tokens_high" and alert["details"]["tenant"] == "acme"
        assert generic.posts[0]["authorization"] == "Bearer alert-token-1"
        (s,) = _bodies(slack)
        assert "integrity" in s["text"] and s["blocks"][0]["type"] == "section"
        (t,) = _bodies(teams)
        assert t["type"] == "message"
        assert t["attachments"][0]["contentType"] == "application/vnd.microsoft.card.adaptive"
        (p,) = _bodies(pd)
        assert p["routing_key"] == "pd-routing-key-1" and p["event_action"] == "trigger"
        assert p["dedup_key"] == "tiergate:integrity_failure:vendor" and p["payload"]["severity"] == "error"
        everything = "".join(h.lines[0] for h in (generic, slack, teams, pd))
        assert "ALERT-PROMPT" not in everything and "leak" not in everything
        assert 'tiergate_alerts_total{result="deduplicated",rule="integrity_failure"} 2.0' in scrape
        assert 'tiergate_alerts_total{result="sent",rule="integrity_failure"} 1.0' in scrape


def test_recorded_alarms_alert(fakes: FakeUpstreams, sqlite_db: str, tmp_path: Path, classifier: Any) -> None:
    """A failed ladder rung, a failed isolation probe and a quarantine, as the probes and the CLI
    record them, each alert under its own rule; a passing probe does not."""
    from audit.quarantine import quarantine
    from gateway.probes.record import ALARM_KIND

    with WebhookReceiver() as hook:
        cfg = base_config(fakes, alerts=_alerts({"name": "generic", "url": hook.url}))
        with GatewayHarness(sqlite_db, tmp_path, cfg, classifier=classifier) as gw:
            import time

            time.sleep(0.3)  # the watcher has read the head of the log

            async def record(store: Any) -> None:
                await store.record_event(
                    ALARM_KIND,
                    {
                        "upstream": "vendor",
                        "model": "chat",
                        "rung_tokens": 4096,
                        "label": "middle",
                        "reasons": ["usage_mismatch"],
                        "last_good_tokens": 2048,
                        "started_at": "x",
                    },
                )
                await store.record_event("isolation_probe", {"upstream": "local", "passed": True, "reasons": []})
                await store.record_event(
                    "isolation_probe", {"upstream": "vendor", "passed": False, "reasons": ["crosstalk"], "crossed": 2}
                )
                await quarantine(store, upstream="vendor", reason="vendor incident INC-1", actor="oncall")

            gw.admin(record)
            wait_for(lambda: len(hook.lines) >= 3, what="three alerts")
            time.sleep(0.3)
        alerts = _bodies(hook)
    assert sorted(a["rule"] for a in alerts) == ["ladder_rung_failed", "probe_alarm", "quarantine"]
    by_rule = {a["rule"]: a for a in alerts}
    assert by_rule["ladder_rung_failed"]["details"]["rung_tokens"] == 4096
    assert by_rule["probe_alarm"]["key"] == "vendor" and by_rule["probe_alarm"]["severity"] == "critical"
    assert by_rule["quarantine"]["details"] == {
        "id": 1,
        "upstream": "vendor",
        "actor": "oncall",
        "seq": by_rule["quarantine"]["details"]["seq"],
    }


def _failing_writes(inner: Any) -> FailingWrites:
    """The real store, whose write-ahead commits fail: the audit log is unavailable."""
    return FailingWrites(inner, ping_fails=False)


def test_audit_unavailable_and_ratelimit_fail_open(fakes: FakeUpstreams, sqlite_db: str, tmp_path: Path,
                                                   classifier: Any) -> None:  # fmt: skip
    with WebhookReceiver() as hook:
        cfg = base_config(
            fakes,
            alerts=_alerts({"name": "generic", "url": hook.url}),
            redis_url="redis://127.0.0.1:1/0",
            limits={"auth_cache_s": 0, "requests_per_minute": 100},
        )
        with GatewayHarness(sqlite_db, tmp_path, cfg, classifier=classifier, store_wrapper=_failing_writes) as gw:
            client = gw.openai(gw.create_key())
            with pytest.raises(openai.InternalServerError) as err:
                client.chat.completions.create(model="chat", messages=[{"role": "user", "content": PROMPT}])
            assert err.value.status_code == 503
            wait_for(
                lambda: (
                    {(a["rule"], a["key"]) for a in _bodies(hook)}
                    >= {("audit_unavailable", "refusals"), ("ratelimit_fail_open", "limiter")}
                ),
                what="both alerts",
            )
        rules = {(a["rule"], a["key"]): a for a in _bodies(hook)}
    refused = rules[("audit_unavailable", "refusals")]
    assert refused["severity"] == "critical" and refused["details"]["count"] == 1
    assert rules[("ratelimit_fail_open", "limiter")]["details"]["count"] >= 1


def test_dedup_window_then_again() -> None:
    """Same rule and key inside the window: suppressed; another key, or after the window: sent."""
    from prometheus_client import CollectorRegistry

    from gateway.alerts.manager import AlertManager
    from gateway.settings import AlertsSettings

    now = [100.0]

    async def run() -> list[bool]:
        mgr = AlertManager(AlertsSettings(dedup_window_s=60), None, CollectorRegistry(), env=lambda _: None,
                           clock=lambda: now[0])  # fmt: skip
        a = Alert("probe_alarm", "vendor", "critical", "x")
        out = [mgr.raise_alert(a), mgr.raise_alert(a), mgr.raise_alert(Alert("probe_alarm", "local", "critical", "x"))]
        now[0] += 59.9
        out.append(mgr.raise_alert(a))
        now[0] += 0.2
        out.append(mgr.raise_alert(a))
        await mgr.aclose()
        return out

    assert asyncio.run(run()) == [True, False, True, False, True]


def test_alerts_test_command(tmp_path: Path) -> None:
    with WebhookReceiver() as up, WebhookReceiver() as pd:
        down = WebhookReceiver()  # never started: its port refuses
        config = tmp_path / "tiergate.yaml"
        config.write_text(yaml.safe_dump({
            "secrets": SECRETS, "state_dir": str(tmp_path / "var"),
            "alerts": {"webhooks": [{"name": "up", "url": up.url, "format": "slack"},
                                    {"name": "pd", "url": pd.url, "format": "pagerduty",
                                     "routing_key_env": "TIERGATE_TEST_PD_KEY"}]}}))  # fmt: skip
        result = CliRunner().invoke(cli, ["alerts", "test", "--config", str(config)])
        assert result.exit_code == 0, result.output
        assert "up (slack): sent" in result.output and "pd (pagerduty): sent" in result.output
        assert _bodies(up)[0]["text"].startswith("[TEST] ")
        assert _bodies(pd)[0]["routing_key"] == "pd-routing-key-1"
        bad = yaml.safe_load(config.read_text())
        bad["alerts"]["webhooks"].append({"name": "down", "url": down.url})
        config.write_text(yaml.safe_dump(bad))
        result = CliRunner().invoke(cli, ["alerts", "test", "--config", str(config), "--webhook", "down"])
        assert result.exit_code == 1 and "down (generic): FAILED" in result.output
        assert len(up.lines) == 1  # --webhook sent to that one only
    http_elsewhere = {**bad, "alerts": {"webhooks": [{"name": "x", "url": "http://siem.example.com/hook"}]}}
    config.write_text(yaml.safe_dump(http_elsewhere))
    result = CliRunner().invoke(cli, ["alerts", "test", "--config", str(config)])
    assert result.exit_code != 0 and "alerts.webhooks.0.url" in result.output


def test_one_process_follows_the_log(tmp_path: Path) -> None:
    """Of the processes sharing a state_dir (uvicorn workers), one follows the audit log for
    alerts (a recorded alarm alerts once, not once per worker); each watches its own counters."""
    from types import SimpleNamespace

    from prometheus_client import CollectorRegistry

    from gateway.alerts import run_alerts
    from gateway.settings import AlertsSettings

    settings = SimpleNamespace(
        alerts=AlertsSettings(webhooks=[{"name": "x", "url": "http://127.0.0.1:9/x"}]), state_dir=str(tmp_path)
    )
    store = SimpleNamespace(engine=None)

    async def run() -> tuple[bool, bool, bool]:
        async with run_alerts(settings, store, CollectorRegistry()) as first:
            async with run_alerts(settings, store, CollectorRegistry()) as second:
                pair = (first.follow_log, second.follow_log)
        async with run_alerts(settings, store, CollectorRegistry()) as later:
            return (*pair, later.follow_log)

    assert asyncio.run(run()) == (True, False, True)
