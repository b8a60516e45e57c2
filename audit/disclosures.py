"""Vendor incident disclosures: a small YAML format, validated with errors that name the line.

Example::

    title: KV-cache cross-talk on long prompts
    reference: VENDOR-2026-0042
    providers: [examplecloud]          # and/or upstreams: [our-upstream-name]
    models: [big-model-1]              # the vendor's model names (provider_model)
    window:
      start: 2026-08-27T00:00:00Z      # a time zone is required
      end: 2026-09-09T23:59:59Z        # inclusive
    conditions:
      min_prompt_tokens: 681280
      stream_only: false

A request matches when it was forwarded inside the window, its upstream or provider is listed (if
both lists are given, either identifies the vendor), its provider model is listed (when ``models``
is given) and it meets every condition.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

import yaml
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError, model_validator
from sqlalchemy import insert, or_, select
from sqlalchemy.ext.asyncio import AsyncEngine

from audit.errors import DisclosureError
from audit.models import Disclosure
from audit.timeutil import from_us, to_us

__all__ = ["Conditions", "DisclosureSpec", "StoredDisclosure", "Window", "list_disclosures",
           "load_disclosure", "parse_disclosure", "save_disclosure"]  # fmt: skip

_STRICT = ConfigDict(extra="forbid", frozen=True)
_D = Disclosure.__table__


class Window(BaseModel):
    model_config = _STRICT

    start: AwareDatetime
    """First affected moment, with its time zone."""
    end: AwareDatetime
    """Last affected moment (inclusive), with its time zone."""

    @model_validator(mode="after")
    def _ordered(self) -> Window:
        if self.end <= self.start:
            raise ValueError("window.end must be after window.start")
        return self


class Conditions(BaseModel):
    model_config = _STRICT

    min_prompt_tokens: int | None = Field(None, ge=0)
    """Only prompts with at least this many tokens (our own count) were affected."""
    max_prompt_tokens: int | None = Field(None, ge=0)
    """Only prompts with at most this many tokens were affected."""
    min_prompt_chars: int | None = Field(None, ge=0)
    """Only prompts with at least this many characters were affected."""
    stream_only: bool = False
    """Only streamed requests were affected."""
    endpoints: tuple[Literal["chat", "completions", "embeddings"], ...] | None = None
    """Only these endpoints were affected (default: all)."""


class DisclosureSpec(BaseModel):
    model_config = _STRICT

    title: str = Field(min_length=1)
    reference: str = Field(min_length=1, max_length=200)
    providers: tuple[str, ...] = ()
    upstreams: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    window: Window
    conditions: Conditions = Field(default_factory=Conditions)
    notes: str | None = None

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


def _line_map(node: yaml.Node, path: tuple[Any, ...], out: dict[tuple[Any, ...], int]) -> None:
    out[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            key = key_node.value
            line = key_node.start_mark.line + 1
            if key in seen:
                raise DisclosureError(f"duplicate key {key!r} (first on line {seen[key]})", line)
            seen[key] = line
            out[path + (key,)] = line
            _line_map(value_node, path + (key,), out)
            out[path + (key,)] = line  # a key's errors point at the key's own line
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _line_map(item, path + (i,), out)


def _line_for(loc: tuple[Any, ...], lines: dict[tuple[Any, ...], int]) -> int:
    path = tuple(loc)
    while path:
        if path in lines:
            return lines[path]
        path = path[:-1]
    return lines.get((), 1)


def parse_disclosure(source: str) -> DisclosureSpec:
    """Validate a disclosure document; ``DisclosureError`` names the line of the first mistake."""
    try:
        node = yaml.compose(source, Loader=yaml.SafeLoader)
        data = yaml.safe_load(source)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        raise DisclosureError(f"not valid YAML: {exc.problem or exc.context}", line) from None
    except yaml.YAMLError as exc:
        raise DisclosureError(f"not valid YAML: {type(exc).__name__}") from None
    if node is None or not isinstance(data, dict):
        raise DisclosureError("a disclosure must be a YAML mapping", 1)
    lines: dict[tuple[Any, ...], int] = {}
    _line_map(node, (), lines)
    try:
        return DisclosureSpec.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-")))
        where = ".".join(str(p) for p in loc) or "(document)"
        msg = err["msg"].removeprefix("Value error, ")
        raise DisclosureError(f"{where}: {msg}", _line_for(loc, lines)) from None


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
        return int(result.inserted_primary_key[0])


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

