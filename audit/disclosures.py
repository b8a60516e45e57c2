"""Vendor incident disclosures: a small YAML format, validated with errors that name the line.

Example::

    title: KV-cache cross-talk on long prompts
    reference: VENDOR-2026-0042
    providers: [examplecloud]          # the vendor, as our upstreams declare it (``provider:``)
    upstreams: [ec-shared]             # and/or our own upstream names
    models: ["@cf/zai-org/*", big-model-1]   # the vendor's model ids (our ``provider_model``)
    window:
      start: 2026-08-27T02:00:00+02:00 # ISO 8601; a time zone is required (Z or any offset)
      end: 2026-09-09T23:59:59Z        # inclusive
    conditions:
      min_prompt_tokens: 681280        # in the vendor's tokens (see below)
      stream_only: false

A request matches when it was forwarded inside the window, its upstream or provider is listed (if
both lists are given, either identifies the vendor), its provider model is listed (when ``models``
is given) and it meets every condition.

Names: ``providers`` are the ``provider:`` values of our upstreams, compared ignoring case;
``upstreams`` are our upstream names; ``models`` are the vendor's model ids, which the gateway
records for each request (the value of the upstream's ``models`` mapping). Any of them may be a
pattern where ``*`` stands for any run of characters (``@cf/zai-org/*``, ``glm-5*``); a pattern
ignores case, and nothing else in it is special. Quote a name that starts with ``@`` or ``*``.

Window: each end may carry any UTC offset (kept as written, compared in UTC); a time without a
zone is refused (it is ambiguous by up to a day, and a window guessed wrong misses requests).

Token conditions are in the vendor's tokens, which we know only approximately: each request has
our own count (exact with the upstream's ``tokenizer_file`` or ``/tokenize``, else an estimate) and,
once answered, the vendor's ``usage.prompt_tokens``. A request meets a bound when either count
does: the vendor's report is missing when the answer failed, and some vendors leave cached prefix
tokens out of it, so neither alone can be trusted to exclude a request.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from sqlalchemy import insert, or_, select
from sqlalchemy.ext.asyncio import AsyncEngine

from audit.errors import DisclosureError
from audit.models import Disclosure
from audit.timeutil import from_us, to_us
from formats.yaml_model import YamlModelError, read_yaml

__all__ = ["Conditions", "DisclosureSpec", "StoredDisclosure", "Window", "list_disclosures",
           "load_disclosure", "parse_disclosure", "save_disclosure"]  # fmt: skip

_STRICT = ConfigDict(extra="forbid", frozen=True)
_D = Disclosure.__table__


class Window(BaseModel):
    model_config = _STRICT

    start: datetime
    """First affected moment, ISO 8601 with its time zone (any offset, kept as written)."""
    end: datetime
    """Last affected moment (inclusive), ISO 8601 with its time zone (any offset)."""

    @field_validator("start", "end")
    @classmethod
    def _zoned(cls, value: datetime) -> datetime:
        # A vendor writes its own local time; without an offset the moment is a guess of up to a
        # day either way, and a window guessed wrong misses requests: refuse rather than assume.
        # The offset is kept as the vendor wrote it; queries compare UTC microseconds (to_us).
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError("needs a timezone: write e.g. 2026-08-27T00:00:00Z or "
                             "2026-08-27T02:00:00+02:00")  # fmt: skip
        return value

    @model_validator(mode="after")
    def _ordered(self) -> Window:
        if self.end <= self.start:
            raise ValueError("window.end must be after window.start")
        return self


class Conditions(BaseModel):
    model_config = _STRICT

    min_prompt_tokens: int | None = Field(None, ge=0)
    """Only prompts with at least this many tokens were affected (met by our count or the
    vendor's reported one)."""
    max_prompt_tokens: int | None = Field(None, ge=0)
    """Only prompts with at most this many tokens were affected (met by either count)."""
    min_prompt_chars: int | None = Field(None, ge=0)
    """Only prompts with at least this many characters were affected."""
    stream_only: bool = False
    """Only streamed requests were affected."""
    endpoints: (
        tuple[Literal["chat", "completions", "embeddings", "responses", "messages", "count_tokens"], ...] | None
    ) = None
    """Only these endpoints were affected (default: all)."""


class DisclosureSpec(BaseModel):
    model_config = _STRICT

    title: str = Field(min_length=1)
    reference: str = Field(min_length=1, max_length=200)
    providers: tuple[str, ...] = ()
    """Vendors as our upstreams declare them (``provider:``); case ignored; ``*`` patterns."""
    upstreams: tuple[str, ...] = ()
    """Our upstream names; ``*`` patterns."""
    models: tuple[str, ...] = ()
    """The vendor's model ids (recorded as ``provider_model``); ``*`` patterns."""
    window: Window
    conditions: Conditions = Field(default_factory=Conditions)
    notes: str | None = None

    @field_validator("providers", "upstreams", "models")
    @classmethod
    def _real_names(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        for name in names:
            if not name.strip() or len(name) > 200:
                raise ValueError("each name must be 1 to 200 characters, not blank")
        return names

    @model_validator(mode="after")
    def _names_someone(self) -> DisclosureSpec:
        if not (self.providers or self.upstreams or self.models):
            raise ValueError("name at least one of providers, upstreams or models")
        c = self.conditions
        if c.min_prompt_tokens is not None and c.max_prompt_tokens is not None:
            if c.max_prompt_tokens < c.min_prompt_tokens:
                raise ValueError("conditions.max_prompt_tokens is below min_prompt_tokens")
        return self

    def canonical_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))


def parse_disclosure(source: str) -> DisclosureSpec:
    """Validate a disclosure document (formats.yaml_model: duplicate keys refused);
    ``DisclosureError`` names the line of the first mistake."""
    try:
        doc = read_yaml(source, source="<disclosure>")
        if not isinstance(doc.data, dict):
            raise DisclosureError("a disclosure must be a YAML mapping", 1)
        return doc.validate(DisclosureSpec)
    except YamlModelError as exc:
        first = exc.problems[0]
        message = f"{first.where}: {first.message}" if first.where else first.message
        raise DisclosureError(message, first.line) from None


def load_disclosure(path: str) -> tuple[DisclosureSpec, str]:
    """Read and validate a file; returns the spec and the SHA-256 of the file's bytes."""
    try:
        raw = open(path, "rb").read()  # noqa: SIM115 - small file, read at once
    except OSError as exc:
        raise DisclosureError(f"cannot read {path}: {exc.strerror}") from None
    try:
        source = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise DisclosureError("the file is not UTF-8 text") from None
    return parse_disclosure(source), hashlib.sha256(raw).hexdigest()


async def save_disclosure(engine: AsyncEngine, spec: DisclosureSpec, source_sha256: str,
                          now: datetime | None = None, *, tenant: str | None = None) -> int:  # fmt: skip
    """Store the disclosure as loaded; each assessment keeps the version it was run against.

    ``tenant``: the tenant it was assessed for (a tenant admin's own); None stores it platform-wide.
    """
    if tenant is not None and not (0 < len(tenant) <= 200):
        raise DisclosureError("a disclosure's tenant must be 1 to 200 characters")
    async with engine.begin() as conn:
        result = await conn.execute(
            insert(_D).values(
                reference=spec.reference,
                title=spec.title,
                tenant=tenant,
                source_sha256=source_sha256,
                loaded_us=to_us(now or datetime.now(UTC)),
                body=spec.canonical_json(),
            )
        )
        key = result.inserted_primary_key
        if key is None:  # SQLAlchemy types it optional; a one-row INSERT always has it
            raise DisclosureError("the database returned no id for the disclosure")
        return int(key[0])


@dataclass(frozen=True, slots=True)
class StoredDisclosure:
    """One stored disclosure as listed (the CLI's ``exposure disclosures``, the dashboard)."""

    id: int
    reference: str
    title: str
    tenant: str | None  # None: platform-wide
    loaded_at: datetime
    window_start: datetime
    window_end: datetime
    source_sha256: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "loaded_at": self.loaded_at.isoformat(),
            "tenant": self.tenant,
            "reference": self.reference,
            "title": self.title,
            "window_start": self.window_start.isoformat(),
            "window_end": self.window_end.isoformat(),
            "source_sha256": self.source_sha256,
        }


async def list_disclosures(engine: AsyncEngine, *, visible_to: str | None = None,
                           limit: int | None = None) -> list[StoredDisclosure]:  # fmt: skip
    """Stored disclosures, newest first.

    ``visible_to``: a tenant sees its own disclosures and the platform-wide ones (a vendor incident
    assessed by the platform concerns every tenant); None lists every disclosure.
    """
    stmt = select(_D.c.id, _D.c.reference, _D.c.title, _D.c.tenant, _D.c.loaded_us,
                  _D.c.source_sha256, _D.c.body).order_by(_D.c.id.desc())  # fmt: skip
    if visible_to is not None:
        stmt = stmt.where(or_(_D.c.tenant == visible_to, _D.c.tenant.is_(None)))
    if limit is not None:
        stmt = stmt.limit(limit)
    async with engine.connect() as conn:
        rows = (await conn.execute(stmt)).all()
    out = []
    for r in rows:
        # The body was validated when it was stored; re-validating also gives the window typed.
        window = DisclosureSpec.model_validate_json(r.body).window
        out.append(StoredDisclosure(int(r.id), r.reference, r.title, r.tenant, from_us(r.loaded_us),
                                    window.start, window.end, r.source_sha256))  # fmt: skip
    return out
