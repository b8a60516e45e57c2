"""Raise, deduplicate and send alerts (``alerts`` settings), off the request path.

One task follows the audit log from its head at start (alerts are about now, not history) and
looks at the counter rules; alerts go through a bounded in-memory queue to a sender task that
POSTs each to every webhook, retrying a few times. The same rule and key within
``dedup_window_s`` of the last one sent is suppressed and counted. A full queue drops the alert
and counts it: alerting must never hold up the gateway.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

import httpx
from prometheus_client import CollectorRegistry, Counter

from audit.tail import head_seq, read_after
from gateway.alerts.formats import body_for
from gateway.alerts.rules import COUNTER_RULES, Alert, alert_for

__all__ = ["AlertManager", "send_alert"]

log = logging.getLogger("tiergate.alerts")


async def send_alert(client: httpx.AsyncClient, hook: Any, alert: Alert, env: Callable[[str], str | None],
                     *, retries: int, backoff_s: float) -> bool:  # fmt: skip
    """POST one alert to one webhook; True once it answered 2xx."""
    headers = {name: env(var) or "" for name, var in hook.headers_env.items()}
    key = env(hook.routing_key_env) if hook.routing_key_env else None
    body = body_for(alert, hook.format, routing_key=key)
    for attempt in range(retries + 1):
        try:
            r = await client.post(hook.url, json=body, headers=headers)
            if 200 <= r.status_code < 300:
                return True
            log.warning("alert webhook %s answered %d", hook.name, r.status_code)
        except httpx.HTTPError as exc:
            log.warning("alert webhook %s failed (%s)", hook.name, type(exc).__name__)
        if attempt < retries:
            await asyncio.sleep(backoff_s * 2**attempt)
    return False


class AlertManager:
    def __init__(self, settings: Any, engine: Any, registry: CollectorRegistry, *,
                 env: Callable[[str], str | None], clock: Callable[[], float] | None = None,
                 transport: httpx.AsyncBaseTransport | None = None, follow_log: bool = True) -> None:  # fmt: skip
        self.settings, self.engine, self.registry, self.env = settings, engine, registry, env
        self.enabled = frozenset(settings.rules)
        self.follow_log = follow_log
        self._clock = clock or asyncio.get_running_loop().time
        self._queue: asyncio.Queue[Alert] = asyncio.Queue(maxsize=settings.queue_size)
        self._last_sent: dict[tuple[str, str], float] = {}
        self._counters: dict[str, float] = {}
        self._cursor: int | None = None
        self._client = httpx.AsyncClient(timeout=settings.timeout_s, transport=transport, follow_redirects=False)
        self.raised = Counter("tiergate_alerts", "Alerts raised, by rule and what became of them",
                              ["rule", "result"], registry=registry)  # fmt: skip
        self._tasks: list[asyncio.Task[None]] = []
        self._stopping = asyncio.Event()

    # ---- raising ----------------------------------------------------------------------------

    def raise_alert(self, alert: Alert) -> bool:
        """Queue an alert unless the same rule and key was sent within the window."""
        now = self._clock()
        last = self._last_sent.get((alert.rule, alert.key))
        if last is not None and now - last < self.settings.dedup_window_s:
            self.raised.labels(alert.rule, "deduplicated").inc()
            return False
        try:
            self._queue.put_nowait(alert)
        except asyncio.QueueFull:
            self.raised.labels(alert.rule, "dropped").inc()
            return False
        self._last_sent[(alert.rule, alert.key)] = now
        return True

    async def check_log(self) -> None:
        if self._cursor is None:
            self._cursor = await head_seq(self.engine)
        records = await read_after(self.engine, self._cursor, 500)
        for record in records:
            alert = alert_for(record, self.enabled)
            if alert is not None:
                self.raise_alert(alert)
        if records:
            self._cursor = records[-1].seq

    def check_counters(self) -> None:
        for rule in COUNTER_RULES:
            if rule.rule not in self.enabled:
                continue
            value = self.registry.get_sample_value(rule.metric, rule.labels) or 0.0
            before = self._counters.get(rule.rule, 0.0)  # a counter starts at 0 with the process
            self._counters[rule.rule] = value
            if value > before:
                self.raise_alert(Alert(rule.rule, rule.key, rule.severity, rule.summary,
                                       {"count": int(value - before)}))  # fmt: skip

    # ---- the tasks --------------------------------------------------------------------------

    async def _watch(self) -> None:
        while not self._stopping.is_set():
            self.check_counters()
            try:
                if self.follow_log:
                    await self.check_log()
            except Exception as exc:  # noqa: BLE001 -- the database is down: that is an alert of its own
                log.warning("alerts cannot read the audit log (%s)", type(exc).__name__)
                if "audit_unavailable" in self.enabled:
                    self.raise_alert(Alert("audit_unavailable", "log_read", "critical",
                                           "the audit log cannot be read", {"error": type(exc).__name__}))  # fmt: skip
            # Stopped between two reads, never inside one (see gateway.siem.streamer).
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), self.settings.poll_interval_s)

    async def _send(self) -> None:
        while True:
            alert = await self._queue.get()
            results = await asyncio.gather(*(send_alert(self._client, hook, alert, self.env,
                                                        retries=self.settings.retries,
                                                        backoff_s=self.settings.retry_backoff_s)
                                              for hook in self.settings.webhooks))  # fmt: skip
            self.raised.labels(alert.rule, "sent" if all(results) else "failed").inc()

    def start(self) -> None:
        self._tasks = [asyncio.create_task(self._watch(), name="alerts-watch"),
                       asyncio.create_task(self._send(), name="alerts-send")]  # fmt: skip

    async def aclose(self) -> None:
        self._stopping.set()
        if self._tasks:
            await asyncio.wait(self._tasks[:1], timeout=5.0)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._client.aclose()
