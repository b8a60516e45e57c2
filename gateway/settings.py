"""One typed settings tree for the whole gateway.

Sources, highest priority first: keyword arguments, environment (``TIERGATE_`` prefix, ``__`` between
nested keys, e.g. ``TIERGATE_SERVER__PORT=9000``), the YAML file, defaults. Every model rejects
unknown keys; :func:`load_settings` turns a validation failure into :class:`ConfigError` naming the
dotted path of each wrong key, never its value (a value may be a secret).
"""

from __future__ import annotations

import os
import secrets as _secrets
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, InitSettingsSource, PydanticBaseSettingsSource, SettingsConfigDict

from audit.settings import AuditSettings
from audit.playbook import PlaybookRegister
from audit.vendors import VendorRegister
from formats.yaml_model import YamlDocument, YamlModelError, read_yaml_file
from gateway.probes.settings import ProbeSettings
from gateway.quarantine import QuarantineSettings
from tiers.config import TiersConfig
from tiers.types import Tier, UpstreamKind

__all__ = [
    "AlertWebhookSettings",
    "AlertsSettings",
    "ConfigError",
    "DashboardSettings",
    "LimitsSettings",
    "ModelAlias",
    "SecretsSettings",
    "ServerSettings",
    "Settings",
    "SiemSettings",
    "SiemSinkSettings",
    "TimeoutSettings",
    "TracingSettings",
    "UpstreamSettings",
    "load_settings",
]

_STRICT = ConfigDict(extra="forbid", frozen=True)
_yaml_doc: ContextVar[YamlDocument | None] = ContextVar("tiergate_yaml_doc", default=None)


class ConfigError(Exception):
    """The configuration is invalid; the message names each wrong key (never a value)."""


class ServerSettings(BaseModel):
    model_config = _STRICT

    host: str = "127.0.0.1"
    """Interface to listen on."""
    port: int = Field(8080, ge=0, le=65535)
    """TCP port to listen on."""
    workers: int = Field(1, ge=1)
    """uvicorn worker processes (each one holds its own classifier)."""
    max_body_bytes: int = Field(8 * 1024 * 1024, ge=1024)
    """Larger request bodies are refused with 413 before they are parsed."""
    log_level: str = "info"
    """uvicorn / gateway log level."""
    metrics_enabled: bool = True
    """Serve Prometheus metrics on ``GET /metrics``."""
    demo: bool = False
    """Serve a built-in echo vendor (``demo-echo``, shared, on loopback) in place of every vendor
    whose API key is not set, so a first run shows what a vendor receives (``serve --demo``)."""
    metrics_token_env: str | None = Field(None, min_length=1)
    """Name of the environment variable holding the bearer token ``/metrics`` requires (never the
    token itself). None: ``/metrics`` is open to anyone who can reach the port. Set but the
    variable unset or empty: every scrape is refused."""
    auto_migrate: bool | None = None
    """Apply database migrations at start; None: only in embedded (SQLite) mode. Replicas on
    PostgreSQL should run ``tiergate db upgrade`` once instead of racing each other."""
    max_connections: int | None = Field(1024, ge=1)
    """Connections one worker serves at once; a request on a connection beyond them gets 503
    (``server_busy``, ``Retry-After: 1``) and the connection is closed. None: no cap."""
    keep_alive_s: float = Field(5.0, gt=0)
    """An idle kept-alive connection is closed after this many seconds without a new request."""
    header_timeout_s: float = Field(10.0, gt=0)
    """Seconds a client has to send a request's headers, counted from the connection opening (or,
    on a kept-alive connection, from the request's first byte); then 408 and the connection is
    closed. Bounds slowloris clients that trickle a byte at a time."""
    body_timeout_s: float = Field(60.0, gt=0)
    """Seconds a client has to send the whole body once its headers are in; then 408 and the
    connection is closed (8 MiB in 60 s needs about 140 KB/s)."""


class LimitsSettings(BaseModel):
    model_config = _STRICT

    requests_per_minute: int | None = Field(None, ge=1)
    """Default per-key request budget per minute (None: unlimited)."""
    tokens_per_minute: int | None = Field(None, ge=1)
    """Default per-key prompt-token budget per minute (None: unlimited)."""
    offload_bytes: int = Field(8192, ge=0)
    """Request bodies larger than this are decoded, read and classified in a worker process, so
    that no tenant's large body stalls the others' requests."""
    classify_workers: int = Field(2, ge=1)
    """Worker processes for large bodies (forked on first use; about one per core)."""
    classify_timeout_s: float = Field(10.0, gt=0)
    """Seconds one job may hold a worker slot before the request is refused with 503
    (``classifier_busy``); the classification deadline itself is ``tiers.deadline_seconds``."""
    auth_cache_s: float = Field(2.0, ge=0)
    """Seconds an authenticated key is trusted without asking the database again (0: never).
    Bounds how long a revoked key keeps working on a replica."""
    auth_timeout_s: float = Field(5.0, gt=0)
    """Seconds a key lookup may take before the request is refused with 503 (``auth_unavailable``),
    nothing forwarded: a paused key database must give a fast, explicit error, never a hang."""
    prefilter: bool = True
    """Take the classifier's first pass from a database Vectorscan compiled ahead (kept in
    ``cache_dir``; compiled in the background when missing) instead of RE2's sets: the same
    findings, about a quarter less CPU on a big prompt of code. Off, or where the ``hyperscan``
    wheel is not installed: RE2's sets only."""


class TimeoutSettings(BaseModel):
    model_config = _STRICT

    connect: float = Field(5.0, gt=0)
    """Seconds to open a connection to the upstream."""
    read: float = Field(120.0, gt=0)
    """Seconds between two bytes from the upstream, and to the answer's head."""
    write: float = Field(30.0, gt=0)
    """Seconds to send the request body."""
    pool: float = Field(5.0, gt=0)
    """Seconds to wait for a free connection from the pool."""
    stream: float = Field(600.0, gt=0)
    """Seconds a streamed answer may last, from its head; then the upstream is closed and the
    client's stream ends with an error event (``stream_max_duration``), recorded as a timeout. A
    whole answer's body gets as long: past it, 504 (``read`` only bounds the gap between bytes)."""


WireProtocol = Literal["openai", "responses", "anthropic"]


class UpstreamSettings(BaseModel):
    model_config = _STRICT

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    """Unique name, used in routes, metrics and the audit log."""
    base_url: str = Field(pattern=r"^https?://")
    """OpenAI-compatible base URL, including ``/v1``."""
    api_key_env: str | None = None
    """Name of the environment variable holding the upstream's API key (never the key itself)."""
    kind: UpstreamKind
    """``shared``, ``dedicated`` or ``onprem``: how far the upstream is trusted."""
    provider: str | None = Field(None, min_length=1, max_length=200, pattern=r"^[A-Za-z0-9_.@/:+-]+$")
    """The vendor behind it, as the vendor names itself (``openai``, ``cloudflare-workers-ai``):
    recorded on every request, so that a vendor's incident disclosure naming ``providers`` finds
    them. Compared ignoring case (stored lowercase). None: ours (on-prem) or not declared; a
    disclosure can then only find its requests by our upstream name."""
    max_tier: Tier = Tier.GENERAL
    """Highest tier this upstream may receive."""
    models: dict[str, str] = Field(default_factory=dict)
    """Public model name -> the model name the upstream expects."""
    context_window: int = Field(8192, ge=1)
    """The model's context window in tokens."""
    safe_prompt_tokens: int | None = Field(None, ge=1)
    """Most prompt tokens this upstream may receive (e.g. its KV pool); default the context window."""
    timeouts: TimeoutSettings = Field(default_factory=TimeoutSettings)
    """Connection / read / write / pool timeouts."""
    max_answer_bytes: int = Field(64 * 1024 * 1024, ge=1024)
    """A whole (not streamed) answer longer than this is refused with 502
    (``upstream_answer_too_large``) and its connection closed, before it fills the gateway's
    memory. Streamed answers are bounded line by line and by ``timeouts.stream``."""
    tokenizer_file: Path | None = None
    """A ``tokenizer.json`` for exact prompt-token counts; else a calibrated estimate is used."""
    tokenize_url: str | None = Field(None, pattern=r"^https?://")
    """The upstream's vLLM-style ``/tokenize`` (e.g. ``http://engine:8000/tokenize``). Without a
    ``tokenizer_file``, a prompt whose estimate cannot tell whether it fits ``safe_prompt_tokens``
    is counted there exactly before it is sent; if that count fails, this upstream gets nothing."""
    bytes_per_token: float = Field(4.0, gt=0)
    """Calibration of the estimate: UTF-8 bytes per token of the upstream's tokenizer."""
    usage_tolerance: float | None = Field(None, gt=1)
    """Reported prompt tokens below own/t (and, with a ``tokenizer_file``, above own*t; the
    estimate's ceiling is the byte count) plus slack is an integrity failure. Unset: 1.25 with a
    ``tokenizer_file`` (an exact count), 3.0 for the estimate; set, it applies to either."""
    promises_usage: bool = True
    """The upstream reports ``usage.prompt_tokens``; a missing one is then an integrity failure."""
    manifest_interval_s: float = Field(60.0, gt=0)
    """On-prem only: how often the engine's hardening manifest is re-read."""
    protocols: list[WireProtocol] = Field(default_factory=lambda: list[WireProtocol](["openai"]), min_length=1)
    """Wire protocols the upstream serves under ``base_url``: ``openai`` (chat, completions,
    embeddings), ``responses`` (OpenAI Responses) and ``anthropic`` (Messages and count_tokens;
    vLLM 0.32 serves all three). A request only goes to upstreams speaking its protocol."""
    auth_header: Literal["authorization", "x-api-key"] = "authorization"
    """How the upstream's key is sent: ``Authorization: Bearer`` or Anthropic's ``x-api-key``."""
    vendor_storage_max_tier: int = Field(0, ge=0, le=2)
    """Highest tier whose Responses conversations this *shared* upstream may keep (``store``,
    ``previous_response_id``). 0: none: ``store`` is forced to false and ``previous_response_id``
    refused. Dedicated and on-prem upstreams keep the client's choice."""

    @property
    def safe_tokens(self) -> int:
        return min(self.safe_prompt_tokens or self.context_window, self.context_window)

    @field_validator("provider")
    @classmethod
    def _fold_provider(cls, value: str | None) -> str | None:
        # Disclosures are matched on the stored value: one spelling per vendor, whatever the case.
        return value.lower() if value is not None else None

    @model_validator(mode="after")
    def _check_tier(self) -> UpstreamSettings:
        if self.max_tier == Tier.RESTRICTED and self.kind == UpstreamKind.SHARED:
            raise ValueError("a shared upstream can never receive Tier 3 (max_tier must be <= 2)")
        return self


class ModelAlias(BaseModel):
    model_config = _STRICT

    name: str = Field(min_length=1)
    """The public model name clients send."""
    upstreams: list[str] = Field(min_length=1)
    """Upstream names in the order they are tried; each must offer ``name`` in its ``models``."""


class SecretsSettings(BaseModel):
    model_config = _STRICT

    fingerprint_key: SecretStr | None = None
    """HMAC key for prompt fingerprints in the audit log."""
    checkpoint_key: SecretStr | None = None
    """Key signing audit-chain checkpoints."""
    cache_salt_key: SecretStr | None = None
    """Key from which per-tenant ``cache_salt`` values for on-prem engines are derived."""


class TracingSettings(BaseModel):
    model_config = _STRICT

    enabled: bool = False
    """Export OpenTelemetry traces (GenAI semantic conventions, metadata only) over OTLP/HTTP to
    ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``; headers, timeout
    and sampler from the other standard ``OTEL_*`` variables). Off: nothing of it is loaded."""
    service_name: str = Field("tiergate", min_length=1)
    """``service.name`` of the spans, unless ``OTEL_SERVICE_NAME`` is set."""
    max_queue_size: int = Field(2048, ge=1)
    """Spans waiting for export; beyond it new spans are dropped (the request never waits)."""


def _https_or_loopback(url: str) -> str:
    # Metadata still names tenants, keys and vendors: it leaves the machine only over TLS.
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme == "https" or (parts.scheme == "http" and parts.hostname in ("127.0.0.1", "localhost", "::1")):
        return url
    raise ValueError("must be an https:// URL (plain http only to a loopback address)")


class SiemSinkSettings(BaseModel):
    model_config = _STRICT

    name: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")
    """Names the stream (``stream`` in every line), its outbox folder and its metrics."""
    kind: Literal["file", "syslog", "webhook"]
    """``file`` (appended, fsynced), ``syslog`` (RFC 5424) or ``webhook`` (HTTPS POST of NDJSON)."""
    path: Path | None = None
    """file: the file lines are appended to."""
    host: str | None = None
    """syslog: the collector's host."""
    port: int | None = Field(None, ge=1, le=65535)
    """syslog: the collector's port (514 / 6514 usually)."""
    transport: Literal["udp", "tcp", "tls"] = "tcp"
    """syslog: ``tls`` (RFC 5425: TCP in TLS, the collector's certificate verified), ``tcp`` (RFC
    6587 octet counting; a down collector is retried) or ``udp`` (sent, never known to arrive)."""
    ca_file: Path | None = None
    """webhook and syslog over TLS: the CA bundle that signs the collector's certificate
    (default: the system's trust store)."""
    facility: int = Field(13, ge=0, le=23)
    """syslog: facility of every message (13: log audit); severity is notice."""
    app_name: str = Field("tiergate", min_length=1, max_length=48, pattern=r"^[!-~]+$")
    """syslog: APP-NAME of every message."""
    url: str | None = None
    """webhook: where batches are POSTed (``https://``; ``http://`` only to loopback)."""
    headers_env: dict[str, str] = Field(default_factory=dict)
    """webhook: header name -> name of the environment variable holding its value (a token)."""
    tenant: str | None = Field(None, min_length=1)
    """Only this tenant's records (its requests, their outcomes, events naming it): a tenant's own
    SIEM. None: everything."""
    batch_lines: int = Field(100, ge=1, le=10_000)
    """Lines per delivery (one POST, one TCP write)."""
    timeout_s: float = Field(10.0, gt=0)
    """Seconds one delivery may take before it counts as failed."""

    @field_validator("url")
    @classmethod
    def _check_url(cls, value: str | None) -> str | None:
        return None if value is None else _https_or_loopback(value)

    @model_validator(mode="after")
    def _check_kind(self) -> SiemSinkSettings:
        needs = {"file": ("path",), "syslog": ("host", "port"), "webhook": ("url",)}[self.kind]
        missing = [f for f in needs if getattr(self, f) is None]
        if missing:
            raise ValueError(f"a {self.kind} sink needs {', '.join(missing)}")
        return self


class SiemSettings(BaseModel):
    model_config = _STRICT

    sinks: list[SiemSinkSettings] = Field(default_factory=list)
    """Where the signed event stream goes; empty: no stream."""
    in_server: bool = True
    """Run the stream inside ``tiergate serve``. With several replicas set it false and run
    ``tiergate audit stream`` once instead: each server would send every record once more."""
    key_env: str | None = Field(None, min_length=1)
    """Name of the environment variable holding the stream's HMAC key (shared with the receiver,
    who checks it with ``tiergate audit verify-stream``). Required with any sink."""
    state_dir: Path | None = None
    """Outboxes (signed lines not yet delivered) and stream positions; default ``<state_dir>/siem``."""
    start_at: Literal["beginning", "now"] = "beginning"
    """Where a new stream starts: the oldest record in the log, or the next one written."""
    poll_interval_s: float = Field(1.0, gt=0)
    """How often the log is read for new records."""
    read_batch: int = Field(500, ge=1)
    """Records read from the log at once."""
    max_queue_bytes: int = Field(64 * 1024 * 1024, ge=4096)
    """Undelivered bytes per sink on disk; past it reading pauses (the log keeps the records)."""
    retry_initial_s: float = Field(1.0, gt=0)
    """Wait after a failed delivery; doubled on each failure up to ``retry_max_s``."""
    retry_max_s: float = Field(60.0, gt=0)
    """Longest wait between two delivery attempts."""
    hole_wait_s: float = Field(10.0, gt=0)
    """Seconds a missing seq in the log is waited for (a commit in flight) before the stream
    records it as a ``missing`` gap and goes on."""

    @model_validator(mode="after")
    def _check(self) -> SiemSettings:
        if self.sinks and self.key_env is None:
            raise ValueError("key_env is required when sinks are configured")
        names = [s.name for s in self.sinks]
        if len(set(names)) != len(names):
            raise ValueError("sink names must be unique")
        return self


AlertRule = Literal["integrity_failure", "probe_alarm", "ladder_rung_failed", "quarantine", "audit_unavailable",
                    "ratelimit_fail_open"]  # fmt: skip


class AlertWebhookSettings(BaseModel):
    model_config = _STRICT

    name: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")
    """Names the webhook in logs and ``tiergate alerts test``."""
    url: str
    """Where alerts are POSTed (``https://``; ``http://`` only to loopback)."""
    format: Literal["generic", "slack", "teams", "pagerduty"] = "generic"
    """Body shape: generic JSON, a Slack incoming webhook, a Teams Adaptive Card message, or a
    PagerDuty Events API v2 ``trigger`` (then ``routing_key_env``)."""
    headers_env: dict[str, str] = Field(default_factory=dict)
    """Header name -> name of the environment variable holding its value (a token)."""
    routing_key_env: str | None = Field(None, min_length=1)
    """pagerduty: name of the environment variable holding the integration's routing key."""

    @field_validator("url")
    @classmethod
    def _check_url(cls, value: str) -> str:
        return _https_or_loopback(value)


class AlertsSettings(BaseModel):
    model_config = _STRICT

    webhooks: list[AlertWebhookSettings] = Field(default_factory=list)
    """Where alerts go; empty: no alerts."""
    rules: list[AlertRule] = Field(default_factory=lambda: list(get_args(AlertRule)))
    """The rules that alert: integrity failures, failed isolation / prefix-cache probes, failed
    ladder rungs, quarantines, the audit log unavailable, the rate-limit backend failing open."""
    dedup_window_s: float = Field(300.0, ge=0)
    """The same rule for the same key (an upstream, mostly) alerts once in this many seconds."""
    poll_interval_s: float = Field(2.0, gt=0)
    """How often the audit log and the counters are looked at."""
    timeout_s: float = Field(10.0, gt=0)
    """Seconds one webhook call may take."""
    retries: int = Field(3, ge=0, le=10)
    """Further attempts after a failed call (backoff doubling from ``retry_backoff_s``)."""
    retry_backoff_s: float = Field(1.0, ge=0)
    """Wait before the first retry."""
    queue_size: int = Field(1000, ge=1)
    """Alerts waiting to be sent; beyond it new ones are dropped and counted."""


class DashboardSettings(BaseModel):
    """The ``dashboard:`` block: the admin dashboard's sessions, sign-in throttle and pages."""

    model_config = _STRICT

    session_lifetime_s: int = Field(8 * 3600, ge=60, le=7 * 24 * 3600)
    """A session ends this long after sign-in, however active (seconds; at most a week)."""
    session_idle_s: int = Field(3600, ge=60)
    """A session unused for this long ends (seconds; at most ``session_lifetime_s``)."""
    ip_failures: int = Field(20, ge=1, le=10_000)
    """Failed sign-ins one client address may make per ``ip_window_s`` (any usernames), then it
    waits; a username's own lock after five failures from one address is separate."""
    ip_window_s: float = Field(15 * 60, gt=0, le=24 * 3600)
    """The window of ``ip_failures`` (seconds)."""
    page_size: int = Field(50, ge=1, le=1000)
    """Rows per page on the requests page."""
    try_it_max_chars: int = Field(20_000, ge=1, le=1_000_000)
    """Longest sample the policy page's "try it" classifies."""
    manifest_timeout_s: float = Field(2.0, gt=0, le=60)
    """How long the upstreams page waits for an engine's manifest (seconds)."""

    @model_validator(mode="after")
    def _idle_within_lifetime(self) -> DashboardSettings:
        if self.session_idle_s > self.session_lifetime_s:
            raise ValueError("session_idle_s is longer than session_lifetime_s: a session ends at its lifetime")
        return self


class Settings(BaseSettings):
    """The whole configuration. Build it with :func:`load_settings`."""

    model_config = SettingsConfigDict(
        env_prefix="TIERGATE_",
        env_nested_delimiter="__",
        extra="forbid",
        frozen=True,
    )

    server: ServerSettings = Field(default_factory=ServerSettings)
    """HTTP server."""
    limits: LimitsSettings = Field(default_factory=LimitsSettings)
    """Default rate limits and classification limits."""
    upstreams: list[UpstreamSettings] = Field(default_factory=list)
    """The model endpoints Tiergate may forward to."""
    aliases: list[ModelAlias] = Field(default_factory=list)
    """Public model names with an explicit upstream order."""
    audit: AuditSettings = Field(default_factory=AuditSettings)
    """The write-ahead audit log (database URL and more)."""
    tiers: TiersConfig = Field(default_factory=TiersConfig)
    """Classification policy."""
    secrets: SecretsSettings = Field(default_factory=SecretsSettings)
    """Server secrets; generated under ``state_dir`` in embedded mode when absent."""
    redis_url: str | None = None
    """Redis for shared rate limits; None keeps the limits in process."""
    probes: ProbeSettings = Field(default_factory=ProbeSettings)
    """Isolation probes the server runs on a schedule (``tiergate probe`` uses the same knobs)."""
    quarantine: QuarantineSettings = Field(default_factory=QuarantineSettings)
    """How fast a quarantine (``tiergate upstream quarantine``) reaches every replica."""
    playbooks: PlaybookRegister = Field(default_factory=PlaybookRegister)
    """Per tenant, who checks the logs, decides reportability and notifies whom once a vendor's
    disclosure is loaded, and the clock for it (``audit/playbook.py``)."""
    vendors: VendorRegister = Field(default_factory=VendorRegister)
    """The vendor register: per provider, the vendor's answers in writing (isolation,
    containment, engine, notification ...), quoted by ``tiergate exposure assess`` reports."""
    tracing: TracingSettings = Field(default_factory=TracingSettings)
    """OpenTelemetry traces of the request path (off by default)."""
    siem: SiemSettings = Field(default_factory=SiemSettings)
    """The signed event stream of every audit record, for a SIEM (none by default)."""
    alerts: AlertsSettings = Field(default_factory=AlertsSettings)
    """Alerts to webhooks on integrity failures, probe alarms, quarantines … (none by default)."""
    dashboard: DashboardSettings = Field(default_factory=DashboardSettings)
    """The admin dashboard under ``/admin``: session lifetime, sign-in throttle, page sizes."""
    state_dir: Path = Path("var")
    """Where embedded mode keeps its generated secrets (and the default SQLite file)."""
    cache_dir: Path | None = None
    """What is derived once and kept between starts (the classifier's first pass, see
    ``limits.prefilter``, and the recognizers' tables); None: ``$XDG_CACHE_HOME/tiergate``, else ``~/.cache/tiergate``. Deleting
    it costs seconds of CPU at the next start, nothing else."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        doc = _yaml_doc.get()
        if doc is not None:  # read by formats.yaml_model in load_settings: duplicate keys refused
            sources.append(InitSettingsSource(settings_cls, doc.data or {}))
        return tuple(sources)

    @model_validator(mode="after")
    def _check_references(self) -> Settings:
        names = [u.name for u in self.upstreams]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"duplicate upstream names: {', '.join(dupes)}")
        by_name = {u.name: u for u in self.upstreams}
        for key, listed in (("probes.upstreams", self.probes.upstreams),
                            ("probes.ladder.upstreams", self.probes.ladder.upstreams),
                            ("probes.prefix_cache.upstreams", self.probes.prefix_cache.upstreams)):  # fmt: skip
            for name in listed:
                if name not in by_name:
                    raise ValueError(f"{key}: unknown upstream {name!r}")
        for i, alias in enumerate(self.aliases):
            for up in alias.upstreams:
                if up not in by_name:
                    raise ValueError(f"aliases.{i}.upstreams: unknown upstream {up!r}")
                if alias.name not in by_name[up].models:
                    raise ValueError(f"aliases.{i}.upstreams: upstream {up!r} does not offer {alias.name!r}")
        return self

    @property
    def embedded(self) -> bool:
        """True when running on the embedded SQLite database (a laptop, one replica)."""
        return self.audit.url.startswith("sqlite")

    def upstream(self, name: str) -> UpstreamSettings:
        for u in self.upstreams:
            if u.name == name:
                return u
        raise KeyError(name)


def _describe(exc: ValidationError, doc: YamlDocument | None) -> str:
    """One line per error: the dotted key, and the file and line where the YAML file holds it
    (a value set in the environment or in code has none)."""
    lines = []
    for err in exc.errors(include_url=False, include_input=False):
        loc = ".".join(str(p) for p in err["loc"]) or "(root)"
        line = doc.line_of(err["loc"], root=False) if doc is not None else None
        where = f"{doc.source}:{line}: " if doc is not None and line is not None else ""
        lines.append(f"{where}{loc}: {err['msg']}")
    return "invalid configuration:\n  " + "\n  ".join(lines)


def _ensure_secret(state_dir: Path, name: str) -> SecretStr:
    """Read or create ``state_dir/secrets/<name>`` (0600); generated once, stable afterwards.

    Written to a private temp file and hard-linked into place, so concurrent workers starting
    together all end up with the one value that won, never a half-written file.
    """
    folder = state_dir / "secrets"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = folder / name
    if not path.exists():
        tmp = folder / f".{name}.{os.getpid()}.{_secrets.token_hex(4)}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(_secrets.token_hex(32))
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
        finally:
            tmp.unlink()
    value = path.read_text().strip()
    if not value:
        raise ConfigError(f"secrets.{name}: the generated secret file {path} is empty")
    return SecretStr(value)


def with_embedded_secrets(settings: Settings) -> Settings:
    """Fill missing secrets from ``state_dir`` in embedded mode; elsewhere a missing one is an error.

    Replicas on PostgreSQL must share their keys (fingerprints must match across replicas), so
    only the embedded mode may invent them.
    """
    missing = [k for k, v in settings.secrets.model_dump().items() if v is None]
    if not missing:
        return settings
    if not settings.embedded:
        raise ConfigError(
            "invalid configuration:\n  "
            + "\n  ".join(f"secrets.{k}: required outside embedded (SQLite) mode" for k in missing)
        )
    filled = {k: _ensure_secret(settings.state_dir, k) for k in missing}
    return settings.model_copy(update={"secrets": settings.secrets.model_copy(update=filled)})


def load_settings(path: str | os.PathLike[str] | None = None, **overrides: Any) -> Settings:
    """Load the YAML file (``path``, else ``$TIERGATE_CONFIG``, else none) plus the environment.

    Raises :class:`ConfigError` naming each unknown or invalid key.
    """
    chosen = path if path is not None else os.environ.get("TIERGATE_CONFIG")
    yaml_path = Path(chosen) if chosen else None
    if yaml_path is not None and not yaml_path.is_file():
        raise ConfigError(f"config file not found: {yaml_path}")
    doc = None
    if yaml_path is not None:
        try:
            doc = read_yaml_file(yaml_path)
        except YamlModelError as exc:
            raise ConfigError(f"invalid configuration:\n  {exc}") from None
        if doc.data is not None and not isinstance(doc.data, dict):
            raise ConfigError(f"invalid configuration:\n  {yaml_path}:{doc.line_of(())}: the file must be a mapping")
    token = _yaml_doc.set(doc)
    try:
        settings = Settings(**overrides)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, doc)) from None
    finally:
        _yaml_doc.reset(token)
    return with_embedded_secrets(settings)
