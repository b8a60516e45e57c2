"""The long-context ladder probe: does the upstream still read the whole prompt at every length?

The 2026 leak touched only prompts longer than the engine's KV pool: there the prompt was replaced
by a one-token placeholder and the engine decoded fluently over other customers' stale KV, with
HTTP 200. A short probe passes every day of such an incident. The ladder sends synthetic prompts
of rising length (``plan.ladder_rungs``), each with fresh markers at its start, middle and end,
``requests_per_rung`` at a time from as many synthetic tenants, concurrently across rungs. A
request fails its rung when:

- ``prompt_tokens_low`` / ``prompt_tokens_high`` / ``usage_missing``: ``usage.prompt_tokens``
  disagrees with our own count, judged by the same band as production answers
  (``gateway.integrity.check_usage``): the placeholder's ``prompt_tokens: 1`` fails here;
- ``echo_missing``: the answer does not repeat the start and end markers it was asked for (the
  prompt was not read; ``ladder.require_echo``);
- ``crossed``: the answer carries a marker of another request of this run, or a marker of no
  request of it (stale content of an earlier probe);
- ``empty`` / ``empty_length``: no answer text (cut off by ``length`` for the latter);
- ``rejected`` / ``error``: a 4xx where the prompt fits the window, a 5xx, a transport failure, a
  malformed answer; streamed (``ladder.stream``): an error event or a stream without ``[DONE]``.

A 4xx (400, 413, 422) for a rung that leaves no room in the declared context window is
``refused``: the correct answer, a pass. The report keeps counts, rung lengths and request
indices; no marker or answer text ever reaches it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import msgspec

from engine import derive_cache_salt
from gateway.integrity import check_usage, reported_prompt_tokens
from gateway.probe import MARKER_RE
from gateway.probes.plan import ProbePlan, Rung
from gateway.probes.settings import LadderSettings
from gateway.probes.synthetic import LadderPrompt, ladder_prompt
from tiers.types import UpstreamKind

if TYPE_CHECKING:
    from gateway.tokens import TokenCounter
    from gateway.upstream import UpstreamClient

__all__ = ["EVENT_KIND", "LadderReport", "RequestResult", "RungResult", "climb"]

EVENT_KIND = "ladder_probe"
_REFUSAL_STATUSES = frozenset({400, 413, 422})
_LISTED_PER_RUNG = 8
# A streamed answer has no total deadline: one that never ends fails its request instead.
_MAX_STREAM_CHARS = 4 * 1024 * 1024
_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode


@dataclass(frozen=True, slots=True)
class RequestResult:
    rung: int  # index into the report's rungs
    index: int  # request within the rung (= its synthetic tenant)
    own_tokens: int
    outcome: str  # "passed", "refused" or "failed"
    reasons: tuple[str, ...] = ()
    reported_tokens: int | None = None
    status: int | None = None
    error: str | None = None  # exception class or the upstream's short error code
    markers: frozenset[str] = field(default=frozenset(), repr=False)  # found in the answer; never recorded

    def as_dict(self) -> dict[str, Any]:
        return {"request": self.index, "own_tokens": self.own_tokens, "outcome": self.outcome,
                "reasons": list(self.reasons), "reported_tokens": self.reported_tokens,
                "status": self.status, "error": self.error}  # fmt: skip


@dataclass(frozen=True, slots=True)
class RungResult:
    rung: Rung
    requests: tuple[RequestResult, ...]

    @property
    def passed(self) -> bool:
        return all(r.outcome != "failed" for r in self.requests)

    @property
    def refused(self) -> bool:
        return bool(self.requests) and all(r.outcome == "refused" for r in self.requests)

    @property
    def reasons(self) -> tuple[str, ...]:
        return tuple(sorted({reason for r in self.requests for reason in r.reasons}))

    def as_dict(self) -> dict[str, Any]:
        # An audit event holds at most 64 kB: every request's outcome is counted, and the failed
        # ones (then the first others) are listed up to _LISTED_PER_RUNG.
        listed = sorted(self.requests, key=lambda r: (r.outcome != "failed", r.index))[:_LISTED_PER_RUNG]
        return {**self.rung.as_dict(), "passed": self.passed, "refused": self.refused,
                "reasons": list(self.reasons), "sent": len(self.requests),
                "failed": sum(1 for r in self.requests if r.outcome == "failed"),
                "requests": [r.as_dict() for r in listed]}  # fmt: skip


@dataclass(frozen=True, slots=True)
class LadderReport:
    upstream: str
    model: str
    started_at: datetime
    duration_s: float
    plan: ProbePlan
    rungs: tuple[RungResult, ...]
    crossings: tuple[tuple[tuple[int, int], tuple[int, int] | None], ...] = ()  # (receiver, source or None)

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.rungs)

    @property
    def first_failed(self) -> RungResult | None:
        return next((r for r in self.rungs if not r.passed), None)

    @property
    def last_good_tokens(self) -> int:
        """The longest answered, passing rung below the first failed one (0: none)."""
        first = self.first_failed
        limit = first.rung.tokens if first is not None else None
        good = [r.rung.tokens for r in self.rungs if r.passed and not r.refused
                and (limit is None or r.rung.tokens < limit)]  # fmt: skip
        return max(good, default=0)

    @property
    def reasons(self) -> tuple[str, ...]:
        return tuple(sorted({reason for r in self.rungs for reason in r.reasons}))

    def detail(self) -> dict[str, Any]:
        """The audit event's detail: rung lengths, outcomes and request indices, never a marker."""
        first = self.first_failed
        return {"upstream": self.upstream, "model": self.model, "passed": self.passed,
                "reasons": list(self.reasons),
                "first_failed_tokens": first.rung.tokens if first is not None else None,
                "first_failed_reasons": list(first.reasons) if first is not None else [],
                "last_good_tokens": self.last_good_tokens,
                "rungs": [r.as_dict() for r in self.rungs],
                "crossings": [[list(rx), list(src) if src else None] for rx, src in self.crossings[:50]],
                "plan": {k: v for k, v in self.plan.as_dict().items() if k != "rungs"},
                "started_at": self.started_at.isoformat(), "duration_ms": round(self.duration_s * 1000, 1)}  # fmt: skip


def _answer_text(data: Any) -> tuple[str, str | None]:
    """The answer's text (every choice's content) and the first choice's finish_reason."""
    if not isinstance(data, dict):
        return "", None
    texts: list[str] = []
    finish: str | None = None
    for i, choice in enumerate(data.get("choices") or ()):
        if not isinstance(choice, dict):
            continue
        if i == 0 and isinstance(choice.get("finish_reason"), str):
            finish = choice["finish_reason"]
        message = choice.get("message")
        if isinstance(message, dict) and isinstance(message.get("content"), str):
            texts.append(message["content"])
        elif isinstance(choice.get("text"), str):
            texts.append(choice["text"])
    return "".join(texts), finish


@dataclass(frozen=True, slots=True)
class _Answer:
    """What one answer said, however it came (whole or streamed)."""

    found: frozenset[str]  # every marker anywhere in it
    usage: Any
    text: str
    finish: str | None
    error: str | None = None


def _from_json(raw: bytes) -> _Answer:
    # Every marker anywhere in the answer counts: a leak may surface in any field.
    found = frozenset(m.upper() for m in MARKER_RE.findall(raw.decode("utf-8", "replace")))
    try:
        data = _decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return _Answer(found, None, "", None, "MalformedAnswer")
    text, finish = _answer_text(data)
    return _Answer(found, data.get("usage") if isinstance(data, dict) else None, text, finish)


async def _from_stream(response: Any) -> _Answer:
    found: set[str] = set()
    pieces: list[str] = []
    finish: str | None = None
    usage: Any = None
    error: str | None = None
    done = False
    read = 0
    try:
        async for sse_event in response.aiter_events():
            payload = sse_event.data
            read += len(payload) + 8  # as sent: "data: ", the data, the blank line
            if read > _MAX_STREAM_CHARS:
                error = "StreamTooLong"
                break
            found.update(MARKER_RE.findall(payload))
            if payload.strip() == "[DONE]":
                done = True
                break
            try:
                event = _decode(payload)
            except (msgspec.DecodeError, RecursionError):
                error = "MalformedStreamEvent"
                continue
            if not isinstance(event, dict):
                error = "MalformedStreamEvent"
                continue
            if "error" in event:
                error = "StreamErrorEvent"
            if event.get("usage"):
                usage = event["usage"]
            for choice in event.get("choices") or ():
                if not isinstance(choice, dict):
                    continue
                delta = choice.get("delta")
                if isinstance(delta, dict) and isinstance(delta.get("content"), str):
                    pieces.append(delta["content"])
                if choice.get("index", 0) == 0 and isinstance(choice.get("finish_reason"), str):
                    finish = choice["finish_reason"]
    except Exception as exc:  # noqa: BLE001 -- the class only; what arrived before still counts
        error = type(exc).__name__
    text = "".join(pieces)
    # A marker split across deltas is whole in the joined text.
    found.update(MARKER_RE.findall(text))
    if error is None and not done:
        error = "IncompleteStream"
    return _Answer(frozenset(m.upper() for m in found), usage, text, finish, error)


def _verdict(rung_i: int, index: int, prompt: LadderPrompt, answer: _Answer, *, promised: bool,
             require_echo: bool) -> RequestResult:  # fmt: skip
    reasons: list[str] = []
    if answer.found - prompt.markers:
        reasons.append("crossed")  # even in an answer that failed afterwards
    if answer.error is not None:
        reasons.append("error")
        return RequestResult(rung_i, index, prompt.count.tokens, "failed", tuple(reasons),
                             reported_prompt_tokens(answer.usage), 200, answer.error, answer.found)  # fmt: skip
    bad_usage = check_usage(prompt.count, answer.usage, promised=promised)
    if bad_usage:
        reasons.append(bad_usage)
    upper = answer.text.upper()
    if not answer.text.strip():
        reasons.append("empty_length" if answer.finish == "length" else "empty")
    elif require_echo and not (prompt.start in upper and prompt.end in upper):
        reasons.append("echo_missing")
    return RequestResult(rung_i, index, prompt.count.tokens, "failed" if reasons else "passed", tuple(reasons),
                         reported_prompt_tokens(answer.usage), 200, markers=answer.found)  # fmt: skip


def _judge(rung_i: int, index: int, prompt: LadderPrompt, raw: bytes, *, promised: bool,
           require_echo: bool) -> RequestResult:  # fmt: skip
    """Judge a whole (non-streamed) answer."""
    return _verdict(rung_i, index, prompt, _from_json(raw), promised=promised, require_echo=require_echo)


async def _send(client: UpstreamClient, rung_i: int, index: int, rung: Rung, prompt: LadderPrompt, body: bytes,
                *, promised: bool, require_echo: bool, stream: bool) -> RequestResult:  # fmt: skip
    from gateway.upstream import UpstreamRejected

    own = prompt.count.tokens
    try:
        opened = await client.open("/chat/completions", body)
        try:
            answer = await _from_stream(opened.response) if stream else _from_json(await opened.response.aread())
        finally:
            await opened.response.aclose()
    except UpstreamRejected as exc:
        if rung.may_refuse and exc.upstream_status in _REFUSAL_STATUSES:
            return RequestResult(rung_i, index, own, "refused", (), status=exc.upstream_status, error=exc.upstream_code)
        return RequestResult(
            rung_i, index, own, "failed", ("rejected",), status=exc.upstream_status, error=exc.upstream_code
        )
    except Exception as exc:  # noqa: BLE001 -- the class only: an upstream error may quote the prompt
        return RequestResult(rung_i, index, own, "failed", ("error",), status=getattr(exc, "upstream_status", None),
                             error=type(exc).__name__)  # fmt: skip
    return _verdict(rung_i, index, prompt, answer, promised=promised, require_echo=require_echo)


def _body(model: str, prompt: LadderPrompt, cfg: LadderSettings, salt: str | None) -> bytes:
    body: dict[str, Any] = {**cfg.request_extra, "model": model, "messages": prompt.messages(),
                            "max_tokens": cfg.max_tokens, "temperature": 0, "stream": cfg.stream}  # fmt: skip
    if cfg.stream:
        body["stream_options"] = {"include_usage": True}  # the usage check needs it at the end
    if salt is not None:
        body["cache_salt"] = salt
    return _encode(body)


async def climb(
    client: UpstreamClient,
    plan: ProbePlan,
    cfg: LadderSettings,
    counter: TokenCounter,
    *,
    salt_key: bytes | None = None,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> LadderReport:
    """Run the ``plan``'s rungs against ``client`` and judge every answer (records nothing).

    The caller checks the budget first (``plan.check_budget()``): this function sends the plan."""
    up = client.settings
    onprem = up.kind == UpstreamKind.ONPREM
    if onprem and not salt_key:
        raise ValueError("probing an on-prem upstream needs the cache-salt key")
    n = cfg.requests_per_rung
    salts = [derive_cache_salt(salt_key, f"tiergate-ladder-{t}") if onprem and salt_key else None for t in range(n)]
    # Building a million-token prompt takes a moment: off the event loop, rung by rung.
    prompts: list[list[LadderPrompt]] = []
    for rung in plan.rungs:
        first, words = await asyncio.to_thread(ladder_prompt, counter, rung.tokens)
        rest = [(await asyncio.to_thread(ladder_prompt, counter, rung.tokens, words=words))[0] for _ in range(n - 1)]
        prompts.append([first, *rest])
    gate = asyncio.Semaphore(cfg.concurrency)

    async def one(ri: int, j: int) -> RequestResult:
        async with gate:
            body = _body(plan.model, prompts[ri][j], cfg, salts[j])
            return await _send(client, ri, j, plan.rungs[ri], prompts[ri][j], body, promised=up.promises_usage,
                               require_echo=cfg.require_echo, stream=cfg.stream)  # fmt: skip

    started_at, t0 = clock(), time.monotonic()
    # Shortest rungs first into the queue; in flight together across rungs: neighbours of every length.
    results = await asyncio.gather(*(one(ri, j) for ri in range(len(plan.rungs)) for j in range(n)))
    owner: Mapping[str, tuple[int, int]] = {m: (ri, j) for ri, row in enumerate(prompts)
                                            for j, p in enumerate(row) for m in p.markers}  # fmt: skip
    crossings = tuple(((r.rung, r.index), owner.get(m)) for r in results
                      for m in sorted(r.markers - prompts[r.rung][r.index].markers))  # fmt: skip
    rungs = tuple(RungResult(rung, tuple(r for r in results if r.rung == ri)) for ri, rung in enumerate(plan.rungs))
    return LadderReport(up.name, plan.model, started_at, time.monotonic() - t0, plan, rungs, crossings)
