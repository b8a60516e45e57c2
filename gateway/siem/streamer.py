"""Follow the audit log and deliver it, signed, to each configured sink (``siem.sinks``).

One task per sink, off the request path: it reads the records after its cursor (``audit.tail``),
keeps the ones in its scope (a sink with ``tenant`` gets that tenant's records only), signs them
into its outbox and delivers the outbox in order, retrying with backoff while the sink is down.
Nothing here can block or fail a request: a down sink only grows the outbox, a full outbox only
pauses reading (the audit log keeps the records), and a record purged from the log before it was
streamed becomes a signed ``gap`` line and a count (``tiergate_siem_records_lost``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge

from audit.stream_format import StreamSigner
from audit.tail import TailRecord, first_seq, head_seq, read_after
from audit.timeutil import from_us
from gateway.siem.outbox import Head, Outbox
from gateway.siem.sinks import FileSink, Sink, SinkDown, SinkRejected, SyslogSink, WebhookSink

__all__ = ["SiemMetrics", "SinkStream", "build_sink"]

log = logging.getLogger("tiergate.siem")


class SiemMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.lines = Counter("tiergate_siem_lines", "Stream lines signed into the outbox", ["sink"], registry=registry)
        self.delivered = Counter("tiergate_siem_delivered_lines", "Stream lines the sink took", ["sink"],
                                 registry=registry)  # fmt: skip
        self.failures = Counter("tiergate_siem_delivery_failures", "Delivery attempts that failed (retried later)",
                                ["sink"], registry=registry)  # fmt: skip
        self.pending = Gauge("tiergate_siem_pending_lines", "Signed lines waiting for the sink", ["sink"],
                             registry=registry)  # fmt: skip
        self.lost = Counter("tiergate_siem_records_lost",
                            "Audit records never streamed (purged first, missing, or refused by the sink)",
                            ["sink", "reason"], registry=registry)  # fmt: skip
        self.read_errors = Counter("tiergate_siem_read_errors", "Failed reads of the audit log by the stream",
                                   ["sink"], registry=registry)  # fmt: skip


def build_sink(cfg: Any, env: Callable[[str], str | None]) -> Sink:
    if cfg.kind == "file":
        return FileSink(Path(cfg.path))
    if cfg.kind == "syslog":
        return SyslogSink(cfg.host, cfg.port, transport=cfg.transport, facility=cfg.facility,
                          app_name=cfg.app_name, timeout_s=cfg.timeout_s, ca_file=cfg.ca_file)  # fmt: skip
    headers = {name: env(var) or "" for name, var in cfg.headers_env.items()}
    return WebhookSink(cfg.url, headers=headers, timeout_s=cfg.timeout_s, ca_file=cfg.ca_file)


def _line_body(record: TailRecord) -> dict[str, Any]:
    body = record.as_dict()
    body["time"] = from_us(record.created_us).isoformat().replace("+00:00", "Z")
    return body


class SinkStream:
    def __init__(self, cfg: Any, settings: Any, engine: Any, key: bytes, folder: Path, sink: Sink,
                 metrics: SiemMetrics, *, monotonic: Callable[[], float] | None = None) -> None:  # fmt: skip
        self.cfg, self.settings, self.engine, self.sink, self.metrics = cfg, settings, engine, sink, metrics
        self.outbox = Outbox(folder / cfg.name, max_bytes=settings.max_queue_bytes)
        head = self.outbox.head
        self.signer = StreamSigner(key, cfg.name, head.n, head.prev)
        self._clock = monotonic or asyncio.get_running_loop().time
        self._hole_since: float | None = None
        self._retry_at = 0.0
        self._delay = settings.retry_initial_s
        self._started = head.n > 0 or head.cursor > 0
        self.stopping = asyncio.Event()
        metrics.pending.labels(cfg.name).set(self.outbox.count_pending())

    # ---- reading the log --------------------------------------------------------------------

    async def fill(self) -> int:
        """Sign the next records into the outbox; returns how many audit records were consumed."""
        if self.outbox.full:
            return 0
        cursor = self.outbox.head.cursor
        if not self._started:
            self._started = True
            if self.settings.start_at == "now":
                cursor = await head_seq(self.engine)
                self.outbox.save_head(Head(self.signer.n, self.signer.prev, cursor))
        records = await read_after(self.engine, cursor, self.settings.read_batch)
        lines: list[bytes] = []
        expected = cursor + 1
        for record in records:
            if record.seq != expected:
                break
            expected += 1
            if self.cfg.tenant is None or record.tenant == self.cfg.tenant:
                lines.append(self.signer.sign(_line_body(record)))
        if records and expected == cursor + 1:  # the very next seq is not there
            gap = await self._gap(expected, records[0].seq)
            if gap is None:
                return 0
            lines.append(gap[0])
            expected = gap[1] + 1
        else:
            self._hole_since = None
        if expected == cursor + 1:
            return 0
        self.outbox.append(lines, Head(self.signer.n, self.signer.prev, expected - 1))
        self.metrics.lines.labels(self.cfg.name).inc(len(lines))
        self.metrics.pending.labels(self.cfg.name).inc(len(lines))
        return expected - 1 - cursor

    async def _gap(self, expected: int, next_seq: int) -> tuple[bytes, int] | None:
        """A signed gap line when seqs ``expected..`` are gone, with the last seq it covers."""
        oldest = await first_seq(self.engine)
        if oldest is not None and oldest > expected:
            reason, last = "purged", oldest - 1
        else:
            # Not yet visible (a commit in flight), or deleted from under the chain: wait a
            # while, then say so instead of stalling the stream for ever.
            now = self._clock()
            if self._hole_since is None:
                self._hole_since = now
            if now - self._hole_since < self.settings.hole_wait_s:
                return None
            reason, last = "missing", next_seq - 1
        self._hole_since = None
        count = last - expected + 1
        self.metrics.lost.labels(self.cfg.name, reason).inc(count)
        log.warning("siem stream %s: audit records %d..%d were %s before they were streamed", self.cfg.name,
                    expected, last, reason)  # fmt: skip
        line = self.signer.sign({"type": "gap", "seq": last, "record": {"from_seq": expected, "to_seq": last,
                                                                         "records": count, "reason": reason}})  # fmt: skip
        return line, last

    # ---- delivering -------------------------------------------------------------------------

    async def deliver(self) -> int:
        """Deliver what is pending, in order, until done or the sink fails (then back off)."""
        if self._clock() < self._retry_at:
            return 0
        sent = 0
        batch = self.cfg.batch_lines
        while True:
            lines, offset = self.outbox.pending(batch)
            if not lines:
                return sent
            try:
                await self.sink.deliver(lines)
            except SinkRejected as exc:
                if len(lines) > 1:  # find the line it refuses: one at a time up to it
                    batch = 1
                    continue
                # Refused for good (too large for a datagram, a 4xx): retrying would stall the
                # stream for ever. Skipped and counted; the receiver sees its number missing.
                log.warning("siem sink %s refused line n=%d for good (%s); skipped", self.cfg.name,
                            json.loads(lines[0]).get("n"), exc)  # fmt: skip
                self.metrics.lost.labels(self.cfg.name, "rejected").inc()
                self.outbox.mark_delivered(offset)
                self.metrics.pending.labels(self.cfg.name).dec()
                batch = self.cfg.batch_lines
                continue
            except SinkDown as exc:
                self.metrics.failures.labels(self.cfg.name).inc()
                log.warning("siem sink %s is down (%s); %d line(s) kept for later", self.cfg.name, exc,
                            self.outbox.count_pending())  # fmt: skip
                self._retry_at = self._clock() + self._delay
                self._delay = min(self._delay * 2, self.settings.retry_max_s)
                return sent
            self.outbox.mark_delivered(offset)
            self._delay = self.settings.retry_initial_s
            sent += len(lines)
            self.metrics.delivered.labels(self.cfg.name).inc(len(lines))
            self.metrics.pending.labels(self.cfg.name).dec(len(lines))

    async def run(self) -> None:
        while not self.stopping.is_set():
            try:
                while await self.fill():  # catch up before waiting
                    await self.deliver()
            except Exception as exc:  # noqa: BLE001 -- the stream must outlive any read failure (counted, logged)
                self.metrics.read_errors.labels(self.cfg.name).inc()
                log.warning("siem stream %s cannot read the audit log (%s)", self.cfg.name, type(exc).__name__)
            await self.deliver()
            # Stopped between two reads, never inside one (a read cancelled midway would leave
            # its database connection to the garbage collector).
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stopping.wait(), self.settings.poll_interval_s)

    async def aclose(self) -> None:
        # One last delivery attempt of what is already signed; the rest waits on disk.
        try:
            async with asyncio.timeout(self.cfg.timeout_s):
                self._retry_at = 0.0
                await self.deliver()
        except Exception:  # noqa: BLE001, S110 -- the last delivery is best effort; the outbox keeps what did not go
            pass
        await self.sink.aclose()
        self.outbox.close()
