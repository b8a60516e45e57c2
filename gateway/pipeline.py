"""The whole flow of one proxied request, in order (see ``ARCHITECTURE.md``).

    authenticate -> parse -> key caps -> request rate -> classify -> tier cap -> route
      for each eligible upstream, in order:
        build outbound (strip, count) -> safe length -> token rate
        -> audit row COMMITTED -> forward -> [fallback only if nothing was relayed]
    -> integrity check -> outcome row -> restore -> respond

Any failure before the audit commit forwards nothing. How a request ends — refused, answered,
failed, streamed or not — is recorded by ``Pipeline.finish`` alone, from what the request's
write-ahead rows already say (``gateway/context.py``). Nothing here formats prompt text into a
message or a log line.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, Callable, Coroutine
from dataclasses import dataclass, field, replace
from functools import partial
from datetime import UTC, datetime
from typing import Any

import msgspec

from audit.types import NOT_FORWARDED, Outcome, OutcomeKind, RequestRecord
from gateway.auth import Authenticator, Principal, bearer_token
from gateway.classify import Classified, ClassifyStep
from gateway.context import Ending, RequestContext, new_request_id
from gateway.errors import (
    AuditUnavailable,
    BadRequest,
    GatewayError,
    ModelNotAllowed,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    TierNotAllowed,
    Unavailable,
    UpstreamError,
    UpstreamIntegrityError,
    UpstreamTimeout,
)
from gateway.integrity import check_usage, reported_prompt_tokens
from gateway.metrics import Metrics
from gateway.outbound import Outbound, build_outbound
from gateway.ratelimit import Limiter
from gateway.routing import Candidate, Router
from gateway.seams import WriteAheadLog
from gateway.settings import Settings
from gateway.protocols import PROTOCOLS, Protocol
from gateway.streaming import StreamResult
from gateway.tokens import TokenCounter, counted_by_upstream
from gateway.tracing import NULL_TRACER, NullTracer, OtelTracer
from gateway.upstream import RetryableUpstreamError, UpstreamClient
from gateway.vendor_state import VendorStateBook
from tiers.errors import ContentError, FileHeaderError, TiersError, VendorStateError
from tiers.types import Tier, UpstreamKind

__all__ = ["ENDPOINTS", "Pipeline", "Reply"]

# Requests that ended at an upstream (or at the write-ahead) are counted in the request metric
# where they ended; the others here, with upstream "none". (Metrics only: what the audit log
# records is decided by the request's rows, in ``finish``.)
_COUNTED_WHERE_THEY_ENDED = (UpstreamError, UpstreamTimeout, AuditUnavailable)


def _translate(exc: TiersError) -> GatewayError:
    if isinstance(exc, ContentError):
        return BadRequest("the request body's prompt fields cannot be read")
    if isinstance(exc, VendorStateError):
        return BadRequest(
            "an earlier turn's thinking (or encrypted reasoning) holds an identifier this tier must "
            "strip, and the vendor refuses it edited: leave that turn's thinking out",
            code="vendor_state_holds_identifier",
        )
    if isinstance(exc, FileHeaderError):
        return BadRequest(
            "an inline file's data-URI header (its name or other parameters) holds an identifier "
            "this tier must strip, and it is not rewritten: send the file without those parameters",
            code="file_header_holds_identifier",
        )
    err = GatewayError("the prompt could not be processed safely; nothing was forwarded", code="strip_failed")
    return err


ENDPOINTS = {name: p.path for name, p in PROTOCOLS.items()}
_decode = msgspec.json.Decoder()


TIER_HEADER = "x-tiergate-tier"


def _requested_tier(headers: Any) -> Tier:
    """The tier a client asks for with ``X-Tiergate-Tier``: it may raise the tier, never lower it
    (classification still runs and the higher of the two wins).

    Every value of a repeated header counts, and so does every element of a comma-separated one
    (a proxy may join repeated fields that way): the highest wins, so a low value sent first can
    never mask a higher one. Any element that is not 1, 2 or 3 refuses the request."""
    values = headers.getall(TIER_HEADER)
    if not values:
        return Tier.GENERAL
    elements = [e.strip() for value in values for e in value.split(",")]
    if any(e not in ("1", "2", "3") for e in elements):
        raise BadRequest(f"{TIER_HEADER} must be 1, 2 or 3", param=TIER_HEADER)
    return Tier(max(int(e) for e in elements))


# Where a vendor-state value the book can know sits (thinking signature, redacted thinking,
# encrypted reasoning); the thinking text itself is not what the vendor checks.
_STATE_KEYS = frozenset({"signature", "data", "encrypted_content"})


def _carries_vendor_state(classified: Classified) -> bool:
    return any(s.kind == "state" for s in classified.content.segments)


def _one_vendor(candidates: list[Candidate]) -> list[Candidate]:
    """Vendor state the book does not know (see ``Pipeline._state_candidates``) goes back to the
    vendor that must have produced it, never to another one: fallback stays within the first
    candidate's provider (an undeclared provider: that upstream alone). While the tier allows it,
    the first candidate is where the conversation's earlier turns went; a turn whose tier rose to
    on-prem only sends it to our own engine, which discloses nothing."""
    first = candidates[0]
    if first.provider is None:
        return [first]
    return [c for c in candidates if c.provider == first.provider]


@dataclass(frozen=True, slots=True)
class Inbound:
    request_id: str
    endpoint: str
    body: dict[str, Any] = field(repr=False)  # the prompt: never in a repr (logs, tracebacks)
    model: str
    stream: bool
    created_at: datetime
    started: float
    protocol: Protocol
    headers: dict[str, str]  # the client's protocol headers, forwarded unchanged


@dataclass(frozen=True, slots=True)
class Reply:
    """Either a JSON body or an SSE byte stream; headers for both."""

    status: int
    body: dict[str, Any] | None = field(default=None, repr=False)  # the answer, values restored
    stream: AsyncGenerator[bytes, None] | None = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Pipeline:
    settings: Settings
    store: WriteAheadLog
    auth: Authenticator
    limiter: Limiter
    router: Router
    classify: ClassifyStep
    clients: dict[str, UpstreamClient]
    counters: dict[str, TokenCounter]
    metrics: Metrics
    hardened: Callable[[Any], bool]
    salt_key: bytes
    vendor_states: VendorStateBook = field(default_factory=VendorStateBook)
    now: Callable[[], datetime] = lambda: datetime.now(UTC)
    monotonic: Callable[[], float] = time.monotonic
    # An upstream's effective safe length: the configured one, or lower after a failed ladder
    # probe (gateway.probes.safe_length); raises when that shared state is unknown.
    safe_tokens: Callable[[Any], int] = lambda up: up.safe_tokens
    tracer: NullTracer | OtelTracer = NULL_TRACER  # gateway.tracing: spans, or nothing at all
    _background: set[asyncio.Task[object]] = field(default_factory=set)

    # ---- the flow ---------------------------------------------------------------------------

    async def run(self, endpoint: str, headers: Any, raw: bytes | None) -> Reply:
        """``raw`` is None when the body was over the size limit (413 after authentication)."""
        ctx = RequestContext(new_request_id(), endpoint, self.now(), self.monotonic())
        try:
            try:
                with self.tracer.request(endpoint):
                    return await self._run(ctx, headers, raw)
            except TiersError as exc:  # unreadable body (400) or stripping failed: forward nothing
                raise _translate(exc) from None
        except GatewayError as exc:
            await self.finish(ctx, exc=exc)
            # The id of the audit row just written: a refused client can quote it (a new dict: an
            # error's headers may be shared by its raisers).
            exc.headers = {**exc.headers, "x-request-id": ctx.request_id}
            if not isinstance(exc, _COUNTED_WHERE_THEY_ENDED):
                tier = str(int(ctx.classified.decision.tier)) if ctx.classified else "unknown"
                self.metrics.requests.labels(endpoint, tier, "none", str(exc.status_code)).inc()
            if exc.status_code < 500 or isinstance(exc, AuditUnavailable):
                self.metrics.refusals.labels(exc.error_class).inc()
            raise
        except asyncio.CancelledError:
            # Shutdown while the request waited (an upstream, the database): an attempt already
            # handed the prompt still gets its outcome; the rest is not written from a dying task.
            if ctx.open is not None:
                self._later(self.finish(ctx, OutcomeKind.CLIENT_CLOSED, error="cancelled"))
            raise
        except Exception:
            # A bug, not a refusal the gateway chose: it still ends the request (500), recorded.
            await self.finish(ctx, exc=GatewayError())
            raise

    async def _run(self, ctx: RequestContext, headers: Any, raw: bytes | None) -> Reply:
        endpoint = ctx.endpoint
        principal = ctx.principal = await self.auth.authenticate(bearer_token(headers))
        if raw is None:
            raise PayloadTooLarge()
        floor = _requested_tier(headers)
        protocol = PROTOCOLS[endpoint]
        forwarded = protocol.forward_headers(headers)
        await self._rate(principal, "requests", 1, self.settings.limits.requests_per_minute)
        # Parsing is part of classification: a large body is decoded in a worker process too.
        with self.tracer.span("classify") as span:
            classified = ctx.classified = await self.classify.run(endpoint, raw, principal.tenant, floor)
            span.classified(classified)
        parsed = classified.parsed
        inbound = ctx.inbound = Inbound(ctx.request_id, endpoint, parsed.body, parsed.model, parsed.stream,
                                        ctx.created, ctx.started, protocol, forwarded)  # fmt: skip
        if not principal.may_use(inbound.model):
            raise ModelNotAllowed()
        if not self.router.knows(inbound.model):
            raise NotFound()
        if classified.decision.tier > principal.max_tier:
            raise TierNotAllowed("the prompt's tier is above this API key's tier cap")
        return await self._forward(ctx, inbound, principal, classified)

    async def _rate(self, principal: Principal, kind: str, amount: int, limit: int | None) -> None:
        verdict = await self.limiter.hit(principal.key_id, kind=kind, amount=amount, limit=limit)
        if not verdict.allowed:
            raise RateLimited(
                f"{kind} per minute limit reached for this API key",
                headers={"retry-after": str(verdict.retry_after_s)},
            )

    async def _forward(self, ctx: RequestContext, inbound: Inbound, principal: Principal,
                       classified: Classified) -> Reply:  # fmt: skip
        decision = classified.decision
        rule = self.classify.rule(principal.tenant, decision.tier)
        protocol = inbound.protocol
        choice = self.router.choose(inbound.model, decision.tier, rule, hardened=self.hardened, wire=protocol.wire)
        if not choice.speakers:
            raise NotFound(f"no upstream of this model serves the {protocol.name} API", code="protocol_not_served")
        candidates = [c for c in choice.candidates if protocol.admits(inbound.body, c, decision.tier)]
        if choice.candidates and not candidates:
            raise protocol.refused() or TierNotAllowed()
        if not candidates:
            raise TierNotAllowed()
        if _carries_vendor_state(classified):
            candidates = self._state_candidates(classified, candidates)
        too_long = 0
        opened_any = False
        charged = False
        last: GatewayError | None = None
        for candidate in candidates:
            outbound = await self._outbound(candidate, inbound, principal, classified)
            safe = self.safe_tokens(candidate.upstream)
            rid: str | None = None
            if not outbound.count.settles(safe) and (candidate.upstream.tokenize_url or protocol.count_path):
                # Counting at the upstream hands it the prompt: that is a forward, with its row first.
                charged = charged or await self._charge(principal, outbound)
                rid = await self._write_ahead(ctx, inbound, principal, classified, outbound)
                try:
                    outbound = await self._count_at_upstream(inbound, outbound)
                except UpstreamError as exc:  # length unknown: this upstream gets nothing more
                    self.metrics.fallbacks.labels(candidate.name, "prompt_not_counted").inc()
                    await self.finish(ctx, exc=exc, error="prompt_not_counted")
                    last = exc
                    continue
                if outbound.count.tokens > safe:  # the outcome keeps the upstream's own count
                    await self.finish(ctx, exc=protocol.too_long(), error="prompt_too_long",
                                      usage={"prompt_tokens": outbound.count.tokens})  # fmt: skip
                    too_long += 1
                    continue
            elif outbound.count.tokens > safe:
                too_long += 1
                continue
            charged = charged or await self._charge(principal, outbound)
            if rid is None:
                rid = await self._write_ahead(ctx, inbound, principal, classified, outbound)
            opened_any = True
            self.tracer.upstream(rid, inbound.endpoint, outbound, inbound.stream)
            try:
                opened = await self.clients[candidate.name].open(protocol.path, outbound.body, inbound.headers)
            except RetryableUpstreamError as exc:
                self.metrics.fallbacks.labels(candidate.name, exc.reason).inc()
                await self.finish(ctx, exc=exc, upstream_status=exc.upstream_status, error=exc.reason)
                last = exc
                continue
            except GatewayError as exc:
                await self.finish(ctx, exc=exc, upstream_status=getattr(exc, "upstream_status", None))
                self._count(inbound, decision.tier, candidate.name, exc.status_code)
                raise
            if inbound.stream:
                return self._stream(ctx, rid, inbound, decision.tier, outbound, opened.response)
            return await self._complete(ctx, rid, inbound, decision.tier, outbound, opened.response)
        # Whatever is raised now, ``finish`` adds no row where the attempts' rows already say why.
        if not opened_any and too_long:
            raise protocol.too_long()
        if last is not None:
            self._count(inbound, decision.tier, "none", 502)
            raise UpstreamError("every eligible upstream failed before answering", code="upstream_unavailable")
        raise TierNotAllowed()

    def _state_candidates(self, classified: Classified, candidates: list[Candidate]) -> list[Candidate]:
        """Vendor state goes back to the upstream the book says produced it (or to our own
        engine, which discloses nothing); state the book does not know, by the provider rule."""
        values = [s.text for s in classified.content.segments if s.kind == "state" and s.path[-1] in _STATE_KEYS]
        known = self.vendor_states.producers(values)
        pinned = [c for c in candidates if c.name in known or c.kind == UpstreamKind.ONPREM] if known else []
        return pinned or _one_vendor(candidates)

    async def _charge(self, principal: Principal, outbound: Outbound) -> bool:
        await self._rate(principal, "tokens", outbound.count.tokens, self.settings.limits.tokens_per_minute)
        return True

    async def _outbound(
        self, candidate: Candidate, inbound: Inbound, principal: Principal, classified: Classified
    ) -> Outbound:
        """The bytes for one candidate; for a body large enough to have been classified in a
        worker, built in a thread (copying and encoding megabytes would stall the event loop)."""
        build = partial(
            build_outbound,
            candidate,
            endpoint=inbound.endpoint,
            body=inbound.body,
            content=classified.content,
            decision=classified.decision,
            strip=self.classify.strip,
            counter=self.counters[candidate.name],
            tenant=principal.tenant,
            salt_key=self.salt_key,
            stream=inbound.stream,
            stripped=classified.stripped,
        )
        if classified.offloaded:
            return await asyncio.to_thread(build)
        return build()

    async def _count_at_upstream(self, inbound: Inbound, outbound: Outbound) -> Outbound:
        """Replace the estimate by the upstream's own count of exactly what it would receive."""
        protocol = inbound.protocol
        request = protocol.tokenize_request(_decode.decode(outbound.body))
        if request is None:  # token ids (already counted exactly), or no /tokenize shape: the estimate stands
            return outbound
        tokens = await self.clients[outbound.candidate.name].count_tokens(
            request, protocol.count_path, inbound.headers if protocol.count_path else None
        )
        return replace(outbound, count=counted_by_upstream(tokens))

    async def _write_ahead(
        self,
        ctx: RequestContext,
        inbound: Inbound,
        principal: Principal,
        classified: Classified,
        outbound: Outbound,
    ) -> str:
        """Commit the next attempt's row; returns its id. Raises ``AuditUnavailable`` (nothing
        may be forwarded) when the commit is not confirmed."""
        rid = ctx.next_attempt()
        c = outbound.candidate
        record = RequestRecord(
            request_id=rid,
            created_at=inbound.created_at,
            tenant=principal.tenant,
            key_id=principal.key_id,
            endpoint=inbound.endpoint,
            client_model=inbound.model,
            upstream=c.name,
            upstream_kind=str(c.kind),
            provider=c.provider,
            provider_model=c.provider_model,
            prompt_chars=classified.content.chars,
            prompt_tokens=outbound.count.tokens,
            tier=int(classified.decision.tier),
            findings=classified.decision.entity_counts(),
            stripped=outbound.stripped,
            stream=inbound.stream,
            fingerprint=classified.fingerprint,
            segment_fingerprints=classified.segment_fingerprints,
        )
        try:
            with self.tracer.span("audit.commit"):
                await self.store.record_request(record)
        except Exception:  # noqa: BLE001 -- any failure: the row is not known to be committed
            # Whatever the cause, the row is not known to be committed: forward nothing. It may
            # still commit after we gave up (a slow database); ``finish`` then records that
            # nothing was forwarded, so the exposure log never shows a phantom exposure.
            ctx.unconfirmed_row(rid)
            raise AuditUnavailable() from None
        ctx.committed_row(rid)
        for entity, n in record.findings.items():
            if outbound.stripped:
                self.metrics.stripped.labels(entity).inc(n)
        return rid

    # ---- answers ----------------------------------------------------------------------------

    async def _complete(self, ctx: RequestContext, rid: str, inbound: Inbound, tier: Tier, outbound: Outbound,
                        response: Any) -> Reply:  # fmt: skip
        name = outbound.candidate.name
        try:
            raw = await response.aread()
        except (UpstreamError, UpstreamTimeout) as exc:
            timeout = isinstance(exc, UpstreamTimeout)
            error = "upstream_timeout" if timeout else "upstream_reset"
            failed = UpstreamTimeout() if timeout else UpstreamError()
            if exc.code == "upstream_answer_too_large":
                failed, error = exc, exc.code
            await self.finish(ctx, exc=failed, upstream_status=response.status_code, error=error)
            self._count(inbound, tier, name, failed.status_code)
            raise failed from None
        finally:
            await response.aclose()
        try:
            data = _decode.decode(raw)
            if not isinstance(data, dict):
                raise ValueError
        except (msgspec.DecodeError, ValueError):
            malformed = UpstreamError("the upstream's answer was not a JSON object")
            await self.finish(ctx, exc=malformed, upstream_status=response.status_code, error="malformed_body")
            self._count(inbound, tier, name, 502)
            raise malformed from None
        protocol = inbound.protocol
        usage = protocol.usage(data)
        upstream = outbound.candidate.upstream
        reason = check_usage(outbound.count, usage, promised=upstream.promises_usage)
        if reason is None:
            reason = protocol.check_answer(outbound.count, data)
        if reason is not None:
            self.metrics.integrity_failures.labels(name, reason).inc()
            withheld = UpstreamIntegrityError()
            await self.finish(ctx, exc=withheld, upstream_status=response.status_code, usage=usage, error=reason,
                              integrity=True)  # fmt: skip
            self._count(inbound, tier, name, 502)
            raise withheld
        self.tracer.answered(rid, data)
        protocol.restore(data, outbound.mapping, inbound.model)  # and the model name the client asked for
        self.vendor_states.remember(name, protocol.vendor_state(data))
        await self.finish(ctx, OutcomeKind.OK, upstream_status=response.status_code, usage=usage)
        self._count(inbound, tier, name, 200)
        return Reply(200, data, headers={"x-request-id": inbound.request_id, "x-tiergate-tier": str(int(tier))})

    def _stream(self, ctx: RequestContext, rid: str, inbound: Inbound, tier: Tier, outbound: Outbound,
                response: Any) -> Reply:  # fmt: skip
        name = outbound.candidate.name

        async def done(result: StreamResult) -> None:
            integrity = result.status is OutcomeKind.INTEGRITY_ERROR
            if integrity:
                self.metrics.integrity_failures.labels(name, result.error_class or "").inc()
            self.tracer.stream_reasons(rid, result.finish_reasons)
            status = await self.finish(ctx, result.status, upstream_status=response.status_code, usage=result.usage,
                                       error=result.error_class, integrity=integrity)  # fmt: skip
            self._count(inbound, tier, name, status)

        self.tracer.stream(rid)
        stream = inbound.protocol.relay(
            response,
            mapping=outbound.mapping,
            count=outbound.count,
            promised_usage=outbound.candidate.upstream.promises_usage,
            body=inbound.body,
            client_model=inbound.model,
            on_done=done,
            on_state=lambda values: self.vendor_states.remember(name, values),
        )
        self.metrics.latency.labels(inbound.endpoint).observe(self.monotonic() - inbound.started)
        return Reply(
            200, stream=stream, headers={"x-request-id": inbound.request_id, "x-tiergate-tier": str(int(tier))}
        )

    # ---- how a request ends -------------------------------------------------------------------

    async def finish(
        self,
        ctx: RequestContext,
        kind: OutcomeKind | None = None,
        *,
        exc: GatewayError | None = None,
        upstream_status: int | None = None,
        usage: Any = None,
        error: str | None = None,
        integrity: bool = False,
    ) -> int:
        """Record how the request, or its open attempt, ended: every way, in this one place.

        What is written follows from the request's write-ahead rows (``RequestContext.ending``),
        not from what ended it: the open attempt's outcome (in the background), a
        ``not_forwarded`` outcome for a write-ahead row that may commit late, a refusal row when
        no row was committed, or nothing when the rows already say it. The kind is the error's
        own unless given; the HTTP status is the error's, else the kind's. Returns that status."""
        if kind is None:
            if exc is None:
                raise TypeError("finish needs an outcome kind or the error that ended the request")
            kind = exc.outcome
        http_status = exc.status_code if exc is not None else kind.http_status
        if http_status is None:
            raise TypeError("a refusal's HTTP status is its error's: pass the error")
        if error is None and exc is not None:
            error = exc.error_class
        ending, rid = ctx.ending()
        if ending is Ending.OUTCOME and rid is not None:
            self._outcome(rid, ctx.started, kind, http_status, upstream_status, usage=usage, error=error,
                          integrity=integrity)  # fmt: skip
        elif ending is Ending.NOT_FORWARDED and rid is not None:
            self._later(self._write_outcome(Outcome(
                request_id=rid, status=NOT_FORWARDED.value, http_status=AuditUnavailable.status_code,
                error_class=AuditUnavailable.default_code,
            )))  # fmt: skip
        elif ending is Ending.REFUSAL:
            refusal = self._refusal(ctx, kind, http_status, error)
            if isinstance(exc, Unavailable):
                # A dependency is what failed (the database, say): its refusal row would only
                # wait out the write timeout before the client hears 503. In the background.
                self._later(refusal)
            else:
                await refusal
        return http_status

    def _outcome(
        self,
        rid: str,
        started: float,
        kind: OutcomeKind,
        http_status: int,
        upstream_status: int | None,
        *,
        usage: Any = None,
        error: str | None = None,
        integrity: bool = False,
    ) -> None:
        """Record what happened after forwarding, in the background: the write-ahead row is
        already committed, so the client's answer does not wait for this one (``drain`` does)."""
        self.tracer.finished(rid, kind, http_status, usage, error, integrity)
        completion = usage.get("completion_tokens") if isinstance(usage, dict) else None
        outcome = Outcome(
            request_id=rid,
            status=kind.value,
            http_status=http_status,
            upstream_status=upstream_status,
            usage_prompt_tokens=reported_prompt_tokens(usage),
            usage_completion_tokens=completion if isinstance(completion, int) and completion >= 0 else None,
            latency_ms=(self.monotonic() - started) * 1000,
            error_class=error,
            integrity_flag=integrity,
        )
        self._later(self._write_outcome(outcome))

    def _later(self, work: Coroutine[Any, Any, object]) -> None:
        """Run an audit write after the answer; ``drain`` waits for what is left at shutdown."""
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _write_outcome(self, outcome: Outcome) -> None:
        try:
            await self.store.record_outcome(outcome, lazy=True)
        except Exception:  # noqa: BLE001 -- a lost outcome is counted, never raised to the client
            # The write-ahead row exists; a lost outcome shows as "no outcome" in the log.
            self.metrics.refusals.labels("outcome_write_failed").inc()

    async def _refusal(self, ctx: RequestContext, kind: OutcomeKind, http_status: int, error: str | None) -> None:
        # Unclassified refusals are recorded as Tier 3: unknown content is treated as the most
        # sensitive. Nothing was forwarded either way (upstream is None).
        principal, inbound, classified = ctx.principal, ctx.inbound, ctx.classified
        record = RequestRecord(
            request_id=ctx.request_id,
            created_at=ctx.created,
            tenant=principal.tenant if principal else None,
            key_id=principal.key_id if principal else None,
            endpoint=ctx.endpoint,
            # A model name nobody configured is whatever the client typed (a card number, say):
            # never stored as sent.
            client_model=inbound.model if inbound and self.router.knows(inbound.model) else None,
            upstream=None,
            upstream_kind=None,
            provider_model=None,
            prompt_chars=classified.content.chars if classified else 0,
            prompt_tokens=0,
            tier=int(classified.decision.tier) if classified else int(Tier.RESTRICTED),
            findings=classified.decision.entity_counts() if classified else {},
            stream=inbound.stream if inbound else False,
            fingerprint=classified.fingerprint if classified else None,
            segment_fingerprints=classified.segment_fingerprints if classified else (),
        )
        outcome = Outcome(
            request_id=ctx.request_id,
            status=kind.value,
            http_status=http_status,
            latency_ms=(self.monotonic() - ctx.started) * 1000,
            error_class=error,
        )
        try:
            await self.store.record_refusal(record, outcome)
        except Exception:  # noqa: BLE001 -- the refusal stands even when its row cannot be written
            self.metrics.refusals.labels("refusal_write_failed").inc()

    def _count(self, inbound: Inbound, tier: Tier, upstream: str, status: int) -> None:
        self.metrics.requests.labels(inbound.endpoint, str(int(tier)), upstream, str(status)).inc()
        if not inbound.stream:
            self.metrics.latency.labels(inbound.endpoint).observe(self.monotonic() - inbound.started)

    async def drain(self) -> None:
        """Wait for outcome writes still in flight (at shutdown)."""
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)
