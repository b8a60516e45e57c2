"""Webhook bodies for an alert: generic JSON, Slack, Microsoft Teams and PagerDuty (Events v2)."""

from __future__ import annotations

from typing import Any

from gateway.alerts.rules import Alert

__all__ = ["FORMATS", "body_for"]

FORMATS = ("generic", "slack", "teams", "pagerduty")
_PD_SEVERITY = {"critical": "critical", "error": "error", "warning": "warning", "info": "info"}


def _facts(alert: Alert) -> list[tuple[str, str]]:
    return [(k, str(v)) for k, v in alert.details.items() if v is not None]


def body_for(alert: Alert, fmt: str, *, routing_key: str | None = None, source: str = "tiergate") -> dict[str, Any]:
    title = ("[TEST] " if alert.test else "") + f"Tiergate {alert.severity}: {alert.summary}"
    if fmt == "slack":  # incoming webhook: text is the fallback, blocks the message
        lines = "\n".join(f"*{k}*: {v}" for k, v in _facts(alert))
        return {"text": title, "blocks": [
            {"type": "section", "text": {"type": "mrkdwn", "text": f"*{title}*"}},
            {"type": "section", "text": {"type": "mrkdwn", "text": lines or "-"}},
            {"type": "context", "elements": [{"type": "mrkdwn", "text": f"rule `{alert.rule}` key `{alert.key}`"}]},
        ]}  # fmt: skip
    if fmt == "teams":  # Teams workflow / incoming webhook: an Adaptive Card in a message
        card = {"type": "AdaptiveCard", "version": "1.4",
                "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
                "body": [{"type": "TextBlock", "text": title, "weight": "Bolder", "wrap": True},
                         {"type": "FactSet", "facts": [{"title": k, "value": v} for k, v in _facts(alert)]}]}  # fmt: skip
        return {"type": "message", "attachments": [
            {"contentType": "application/vnd.microsoft.card.adaptive", "content": card}]}  # fmt: skip
    if fmt == "pagerduty":  # Events API v2; our dedup key lets PagerDuty group repeats too
        return {"routing_key": routing_key or "", "event_action": "trigger",
                "dedup_key": f"tiergate:{alert.rule}:{alert.key}",
                "payload": {"summary": title[:1024], "source": source, "severity": _PD_SEVERITY[alert.severity],
                            "component": alert.key, "group": alert.rule, "class": alert.rule,
                            "timestamp": alert.as_dict()["at"], "custom_details": alert.details}}  # fmt: skip
    return {"title": title, **alert.as_dict()}
