"""Isolation probes: does an upstream ever answer one request with another request's content?

The KV-cache leak returned other customers' text with HTTP 200, and only content can show it. A
probe sends many concurrent requests, each carrying a fresh random marker and asking the model to
repeat it, from several synthetic tenants (each with its own ``cache_salt`` on on-prem engines).
Then it reads every answer:

- a marker of another request of this run      -> **crossed** (cross-talk between requests);
- a marker-shaped string from no request of this run -> **foreign** (stale content of an earlier
  probe, e.g. un-zeroed KV pages), counted with the crossed ones;
- its own marker absent                         -> **missing** (the model did not see its prompt,
  e.g. the one-token placeholder case; a weak model may also just fail to copy it, hence
  ``max_missing``).

A probe passes only with no crossing, at most ``max_missing`` missing markers and at most
``max_errors`` failed requests: an upstream that cannot be probed has not been shown to be safe.
The report carries counts and request indices only; markers never reach the audit log or metrics.

With ``stream`` (``probes.stream``, ``tiergate probe --stream``) the requests ask for SSE answers,
which engines serve on a path of their own (incremental detokenisation, chunked relays). Each
event's data is scanned as sent, and each choice's text is also joined across deltas, since
a marker is usually split between chunks. A stream that ends without ``[DONE]``, carries an error
event or an unreadable event is a failed request: a stream that merely looks complete proves
nothing. Markers found before such a failure still count as crossings.

Used by ``tiergate probe`` and, when ``probes.interval_s`` is set, by :func:`run_scheduled`.
"""

from __future__ import annotations

import asyncio
import logging
import re
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import msgspec
from prometheus_client import CollectorRegistry, Counter, Gauge

from engine import derive_cache_salt
from gateway.probes.settings import ProbeSettings
from tiers.types import UpstreamKind

if TYPE_CHECKING:
    from gateway.upstream import UpstreamClient, UpstreamResponse

__all__ = [
    "MARKER_RE",
    "Crossing",
    "ProbeMetrics",
    "ProbeReport",
    "new_marker",
    "probe_model",
    "probe_upstream",
    "record_probe",
    "run_scheduled",
]

log = logging.getLogger("tiergate.probe")

EVENT_KIND = "isolation_probe"
MARKER_RE = re.compile(r"TGPROBE-[0-9A-Fa-f]{20}")
_MAX_LISTED = 50  # request indices kept in a report's audit detail
# A streamed answer is read line by line with no total deadline: an upstream that never ends its
# stream must fail the request, not hold the probe (and a scheduled round) forever.
_MAX_STREAM_CHARS = 4 * 1024 * 1024
_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode


def new_marker() -> str:
    return "TGPROBE-" + secrets.token_hex(10).upper()


@dataclass(frozen=True, slots=True)
class Crossing:
    """Request ``receiver``'s answer carried request ``source``'s marker (None: not of this run)."""

    receiver: int
    source: int | None


@dataclass(frozen=True, slots=True)
class ProbeReport:
    upstream: str
    model: str
    started_at: datetime
    duration_s: float
    sent: int
    answered: int
    errors: int
    tenants: int
    crossed: tuple[Crossing, ...] = ()
    missing: tuple[int, ...] = ()
    error_classes: Mapping[str, int] = field(default_factory=dict)
    max_missing: int = 0
    max_errors: int = 0
    stream: bool = False

    @property
    def foreign(self) -> int:
        return sum(1 for c in self.crossed if c.source is None)

    @property
    def reasons(self) -> tuple[str, ...]:
        out = []
        if self.crossed:
            out.append("crossed")
        if len(self.missing) > self.max_missing:
            out.append("missing")
        if self.errors > self.max_errors or self.answered == 0:
            out.append("errors")
        return tuple(out)

    @property
    def passed(self) -> bool:
        return not self.reasons

    def detail(self) -> dict[str, Any]:
        """What the audit log keeps: counts and request indices, never a marker or an answer."""
        return {
            "upstream": self.upstream,
            "model": self.model,
            "stream": self.stream,
            "passed": self.passed,
            "reasons": list(self.reasons),
            "sent": self.sent,
            "answered": self.answered,
            "errors": self.errors,
            "error_classes": dict(self.error_classes),
            "tenants": self.tenants,
            "crossed": len(self.crossed),
            "foreign": self.foreign,
            "crossings": [[c.receiver, c.source] for c in self.crossed[:_MAX_LISTED]],
            "missing": len(self.missing),
            "missing_requests": list(self.missing[:_MAX_LISTED]),
            "started_at": self.started_at.isoformat(),
            "duration_ms": round(self.duration_s * 1000, 1),
        }


@dataclass(frozen=True, slots=True)
class _Answer:
    index: int
    markers: frozenset[str] = frozenset()
    error: str | None = None


def probe_model(client: UpstreamClient, model: str | None = None) -> str:
    """The provider model name to probe: ``model`` (public or provider name) or the first offered."""
    models = client.settings.models
    if model:
        return models.get(model, model)
    if not models:
        raise ValueError(f"upstream {client.settings.name!r} lists no models: pass one explicitly")
    return next(iter(models.values()))


def _body(model: str, marker: str, index: int, tenant_salt: str | None, max_tokens: int, stream: bool) -> bytes:
    # Varying lengths make the engine hand out and recycle KV blocks of different sizes.
    filler = " ".join(["Context line, ignore it."] * (index % 5))
    body: dict[str, Any] = {
        "model": model,
        "messages": [
            {"role": "system", "content": "You are an echo service. Reply with the code you are given."},
            {"role": "user", "content": f"{filler}\nRepeat this code exactly and write nothing else: {marker}"},
        ],
        "max_tokens": max_tokens,
        "temperature": 0,
        "stream": stream,
    }
    if tenant_salt is not None:
        body["cache_salt"] = tenant_salt
    return _encode(body)


class _StreamedAnswer:
    """One SSE answer as it arrives: the markers it carries and whether it ended properly."""

    def __init__(self) -> None:
        self._found: set[str] = set()
        self._texts: dict[tuple[int, str, int], list[str]] = {}
        self.done = False
        self.error_event = False
        self.malformed = False

    def feed(self, payload: str) -> None:
        """One event's data (:mod:`formats.sse`, as the gateway's own relay reads it)."""
        # Scan the payload as sent too: a leak may surface in any field, not only in the text.
        self._found.update(MARKER_RE.findall(payload))
        if self.done:
            return
        if payload.strip() == "[DONE]":
            self.done = True
            return
        try:
            event = _decode(payload)
        except (msgspec.DecodeError, RecursionError):
            self.malformed = True
            return
        if not isinstance(event, dict):
            self.malformed = True
            return
        if "error" in event:
            self.error_event = True
        for choice in event.get("choices") or ():
            if isinstance(choice, dict):
                self._choice(choice)

    def _choice(self, choice: dict[str, Any]) -> None:
        raw_index = choice.get("index", 0)
        i = raw_index if isinstance(raw_index, int) else -1
        self._add((i, "text", 0), choice.get("text"))  # /completions streams
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            return
        self._add((i, "content", 0), delta.get("content"))
        self._add((i, "reasoning", 0), delta.get("reasoning_content"))
        for call in delta.get("tool_calls") or ():
            fn = call.get("function") if isinstance(call, dict) else None
            if isinstance(fn, dict):
                tool_index = call.get("index", 0)
                self._add((i, "tool", tool_index if isinstance(tool_index, int) else -1), fn.get("arguments"))

    def _add(self, key: tuple[int, str, int], piece: Any) -> None:
        if isinstance(piece, str) and piece:
            self._texts.setdefault(key, []).append(piece)

    def markers(self) -> frozenset[str]:
        found = set(self._found)
        for pieces in self._texts.values():
            found.update(MARKER_RE.findall("".join(pieces)))
        return frozenset(m.upper() for m in found)

    @property
    def error(self) -> str | None:
        if self.error_event:
            return "StreamErrorEvent"
        if self.malformed:
            return "MalformedStreamEvent"
        if not self.done:
            return "IncompleteStream"
        return None


async def _read_stream(index: int, response: UpstreamResponse) -> _Answer:
    answer = _StreamedAnswer()
    error: str | None = None
    read = 0
    try:
        async for event in response.aiter_events():
            answer.feed(event.data)
            read += len(event.data) + 8  # as sent: "data: ", the data, the blank line
            if read > _MAX_STREAM_CHARS:
                error = "StreamTooLong"
                break
    except Exception as exc:  # noqa: BLE001 -- the class only; what arrived before still counts
        error = type(exc).__name__
    return _Answer(index, answer.markers(), error or answer.error)


async def _one(client: UpstreamClient, index: int, body: bytes, *, stream: bool) -> _Answer:
    try:
        opened = await client.open("/chat/completions", body)
        try:
            if stream:
                return await _read_stream(index, opened.response)
            raw = await opened.response.aread()
        finally:
            await opened.response.aclose()
    except Exception as exc:  # noqa: BLE001 -- the class only: an upstream error may quote the prompt
        return _Answer(index, error=type(exc).__name__)
    # Scan the whole answer, not only the message: a leak may surface in any field.
    text = raw.decode("utf-8", "replace")
    return _Answer(index, frozenset(m.upper() for m in MARKER_RE.findall(text)))


async def probe_upstream(
    client: UpstreamClient,
    *,
    settings: ProbeSettings | None = None,
    model: str | None = None,
    salt_key: bytes | None = None,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> ProbeReport:
    """Run one probe against ``client``'s upstream and return the report (records nothing)."""
    cfg = settings or ProbeSettings()
    name = client.settings.name
    provider_model = probe_model(client, model)
    onprem = client.settings.kind == UpstreamKind.ONPREM
    if onprem and not salt_key:
        raise ValueError("probing an on-prem upstream needs the cache-salt key")
    salts = [
        derive_cache_salt(salt_key, f"tiergate-probe-{t}") if onprem and salt_key else None for t in range(cfg.tenants)
    ]
    markers = [new_marker() for _ in range(cfg.requests)]
    owner = {m: i for i, m in enumerate(markers)}
    gate = asyncio.Semaphore(cfg.concurrency)

    async def send(i: int) -> _Answer:
        async with gate:
            body = _body(provider_model, markers[i], i, salts[i % cfg.tenants], cfg.max_tokens, cfg.stream)
            return await _one(client, i, body, stream=cfg.stream)

    started_at, t0 = clock(), time.monotonic()
    answers = await asyncio.gather(*(send(i) for i in range(cfg.requests)))
    crossed: list[Crossing] = []
    missing: list[int] = []
    errors: dict[str, int] = {}
    for a in answers:
        own = markers[a.index]
        # A failed request may still have carried another's marker (a stream cut after a leaked
        # delta): that is a crossing whatever happened next.
        crossed.extend(Crossing(a.index, owner.get(m)) for m in sorted(a.markers) if m != own)
        if a.error is not None:
            errors[a.error] = errors.get(a.error, 0) + 1
        elif own not in a.markers:
            missing.append(a.index)
    n_errors = sum(errors.values())
    return ProbeReport(
        upstream=name,
        model=provider_model,
        started_at=started_at,
        duration_s=time.monotonic() - t0,
        sent=cfg.requests,
        answered=cfg.requests - n_errors,
        errors=n_errors,
        tenants=cfg.tenants,
        crossed=tuple(crossed),
        missing=tuple(missing),
        error_classes=errors,
        max_missing=cfg.max_missing,
        max_errors=cfg.max_errors,
        stream=cfg.stream,
    )


class ProbeMetrics:
    """Probe results as Prometheus series on the app's (or a command's) registry."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.runs = Counter("tiergate_probe_runs", "Isolation probe runs by result", ["upstream", "result"],
                            registry=registry)  # fmt: skip
        self.crossed = Counter("tiergate_probe_crossed_markers",
                               "Probe answers carrying another request's (or a stale) marker",
                               ["upstream"], registry=registry)  # fmt: skip
        self.missing = Counter("tiergate_probe_missing_markers", "Probe answers missing their own marker",
                               ["upstream"], registry=registry)  # fmt: skip
        self.last_passed = Gauge("tiergate_probe_last_passed", "1 when the upstream's last probe passed",
                                 ["upstream"], registry=registry)  # fmt: skip
        self.last_run = Gauge("tiergate_probe_last_run_timestamp_seconds", "When the last probe finished",
                              ["upstream"], registry=registry)  # fmt: skip

    def observe(self, report: ProbeReport) -> None:
        up = report.upstream
        self.runs.labels(up, "pass" if report.passed else "fail").inc()
        self.crossed.labels(up).inc(len(report.crossed))
        self.missing.labels(up).inc(len(report.missing))
        self.last_passed.labels(up).set(1 if report.passed else 0)
        self.last_run.labels(up).set(time.time())


async def record_probe(
    report: ProbeReport,
    *,
    record_event: Callable[[str, dict[str, Any]], Awaitable[Any]] | None,
    metrics: ProbeMetrics | None,
) -> None:
    """Metrics first (they cannot fail), then the audit event; an audit failure propagates."""
    if metrics is not None:
        metrics.observe(report)
    if not report.passed:
        log.warning("isolation probe failed upstream=%s reasons=%s crossed=%d missing=%d errors=%d",
                    report.upstream, ",".join(report.reasons), len(report.crossed), len(report.missing),
                    report.errors)  # fmt: skip
    if record_event is not None:
        await record_event(EVENT_KIND, report.detail())


async def run_scheduled(
    clients: Mapping[str, UpstreamClient],
    settings: ProbeSettings,
    *,
    record_event: Callable[[str, dict[str, Any]], Awaitable[Any]] | None,
    metrics: ProbeMetrics | None,
    salt_key: bytes | None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> None:
    """Probe the configured upstreams every ``settings.interval_s`` until cancelled.

    A failing round is logged by exception class and retried next round: a probe must never take
    the server down. Start it as a task in the app's lifespan and cancel it at shutdown.
    """
    if settings.interval_s is None:
        return
    names = settings.upstreams or list(clients)
    unknown = [n for n in names if n not in clients]
    if unknown:
        raise ValueError(f"probes.upstreams: unknown upstream(s) {', '.join(unknown)}")
    while True:
        await sleep(settings.interval_s)
        for name in names:
            try:
                report = await probe_upstream(clients[name], settings=settings, salt_key=salt_key)
                await record_probe(report, record_event=record_event, metrics=metrics)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 -- a probe must never stop the server
                log.error("scheduled isolation probe of %s failed: %s", name, type(exc).__name__)
