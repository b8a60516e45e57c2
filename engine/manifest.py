"""What a hardened engine says it runs, and the gateway's judgement of it.

The engine's supervisor serves the manifest as JSON at ``GET {base_url}/tiergate/manifest``, where
``base_url`` is the engine's OpenAI base URL without the ``/v1`` suffix (``http://host:8000``; a
trailing ``/v1`` is accepted and removed). Every number in it was *read back* from the running
vLLM (``/metrics`` ``vllm:cache_config_info`` and ``/v1/models``), not copied from the config, and
``kv_zeroing`` is true only when the zeroing plugin reported itself active in every vLLM process.

The gateway fetches it at start and periodically, and refuses Tier 3 to an on-prem upstream whose
``manifest_problems`` list is not empty, or whose manifest cannot be fetched (fail closed).

Errors::

    ManifestError (503)
    ├── ManifestUnreachable   the engine did not answer, or not with 200
    └── ManifestMalformed     the body is not a manifest of a schema this code knows
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import httpx

__all__ = [
    "MANIFEST_PATH",
    "MANIFEST_SCHEMA",
    "EngineManifest",
    "ManifestError",
    "ManifestMalformed",
    "ManifestUnreachable",
    "fetch_manifest",
    "manifest_problems",
    "manifest_url",
]

MANIFEST_PATH = "/tiergate/manifest"
MANIFEST_SCHEMA = 1


class ManifestError(Exception):
    """The engine's manifest could not be had; Tier 3 must be refused (Service Unavailable)."""

    status_code = 503


class ManifestUnreachable(ManifestError):
    """No answer, a transport error, or a status other than 200."""


class ManifestMalformed(ManifestError):
    """An answer that is not a well-typed manifest of a known schema."""


@dataclass(frozen=True, slots=True)
class EngineManifest:
    """The engine's self-description. Field docs say where each value comes from."""

    schema: int  # MANIFEST_SCHEMA of the writer
    vllm_version: str  # vllm.__version__ in the engine
    plugin_version: str | None  # the zeroing plugin's version; None when it is not loaded
    model: str  # the served model name
    max_model_len: int  # read back from /v1/models after start
    block_size: int  # tokens per KV block, from vllm:cache_config_info
    num_blocks: int  # KV blocks allocated, from vllm:cache_config_info (one is vLLM's null block)
    pool_tokens: int  # usable KV tokens: (num_blocks - 1) * block_size
    kv_zeroing: bool  # zero-on-allocate active in every vLLM process that holds KV
    zeroing_processes: int  # vLLM processes in which the plugin reported itself active
    version_override: bool  # the plugin runs on a vLLM version it was not tested with
    prefix_caching: bool  # vLLM's prefix cache is on
    cache_salt_required: bool  # the engine front rejects generation requests without cache_salt
    over_long_rejected: bool  # the front answers 400 to prompts that do not fit max_model_len
    truncation_dropped: bool  # the front removes client truncation parameters
    disaggregated: bool  # prefill/decode split (served by engine.pd.router)
    preflight_ok: bool  # our pool check and the read-back both agreed with the config
    started_at: str  # ISO 8601 UTC, when the engine passed its read-back
    # Split deployments only (engine.pd); absent from older manifests, which then read as False.
    kv_boundary_check: bool = False  # decode refuses KV the prefill side did not vouch for
    kv_deferred_release: bool = False  # blocks of requests finished mid-transfer held, then zeroed
    kv_checksums: bool = False  # every transferred block checked against the sender's checksum
    paired_aborts: bool = False  # the router aborts both halves when one must go

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: object) -> EngineManifest:
        """Parse strictly: every field present with its exact type (a field with a default may be
        absent and then takes it); unknown keys are ignored."""
        if not isinstance(data, dict):
            raise ManifestMalformed("engine manifest is not a JSON object")
        schema = data.get("schema")
        if type(schema) is not int or schema != MANIFEST_SCHEMA:
            raise ManifestMalformed(f"engine manifest schema {schema!r} is not {MANIFEST_SCHEMA}")
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            if f.name not in data:
                if f.default is not dataclasses.MISSING:
                    continue
                raise ManifestMalformed(f"engine manifest lacks {f.name!r}")
            value = data[f.name]
            if not _has_type(value, f.type):
                raise ManifestMalformed(f"engine manifest field {f.name!r} has the wrong type")
            values[f.name] = value
        return cls(**values)


def _has_type(value: object, annotation: object) -> bool:
    # bool is a subclass of int: compare exact types so that `true` is never a block count.
    allowed = {
        "int": (int,),
        "str": (str,),
        "bool": (bool,),
        "str | None": (str, type(None)),
    }
    return type(value) in allowed[str(annotation)]


def manifest_url(base_url: str) -> str:
    """``http://h:p`` or ``http://h:p/v1`` -> ``http://h:p/tiergate/manifest``."""
    root = base_url.rstrip("/")
    root = root.removesuffix("/v1")
    return root + MANIFEST_PATH


async def fetch_manifest(client: httpx.AsyncClient, base_url: str) -> EngineManifest:
    """GET the manifest of the engine at ``base_url``; raise a ``ManifestError`` on any doubt."""
    url = manifest_url(base_url)
    try:
        response = await client.get(url)
    except httpx.HTTPError as exc:
        raise ManifestUnreachable(f"engine manifest at {url} unreachable: {type(exc).__name__}") from exc
    if response.status_code != 200:
        raise ManifestUnreachable(f"engine manifest at {url} answered HTTP {response.status_code}")
    try:
        data = response.json()
    except ValueError as exc:
        raise ManifestMalformed(f"engine manifest at {url} is not JSON") from exc
    return EngineManifest.from_json(data)


# What a split deployment must prove before Tier 3 may go to it (the 2026 leak's split-path fixes).
_SPLIT_PROTECTIONS = (
    ("kv_boundary_check", "the KV boundary check (decode over blocks no sender vouched for)"),
    ("kv_deferred_release", "deferred release of blocks in flight"),
    ("kv_checksums", "per-block KV checksums"),
    ("paired_aborts", "paired aborts of prefill and decode"),
)


def manifest_problems(m: EngineManifest, context_window: int) -> list[str]:
    """Why Tier 3 must not go to this engine; empty when it is hardened and consistent.

    ``context_window`` is the context length the gateway assumes for this upstream (what its own
    over-length check admits). Messages name numbers and settings, never request content.
    """
    problems: list[str] = []
    if context_window <= 0:
        problems.append(f"gateway context window {context_window} is not positive")
    if not m.kv_zeroing or m.zeroing_processes < 1:
        problems.append("KV zero-on-allocate is not active in every engine process")
    if m.plugin_version is None:
        problems.append("the Tiergate KV hygiene plugin is not loaded")
    if m.prefix_caching and not m.cache_salt_required:
        problems.append("prefix cache is shared across tenants: cache_salt is not required")
    if not m.over_long_rejected:
        problems.append("over-long prompts are not rejected by the engine front")
    if not m.truncation_dropped:
        problems.append("client truncation parameters are not dropped")
    if m.disaggregated:
        for name, missing in _SPLIT_PROTECTIONS:
            if not getattr(m, name):
                problems.append(f"prefill/decode disaggregation without {missing}")
    if not m.preflight_ok:
        problems.append("engine preflight did not pass")
    if m.block_size <= 0 or m.pool_tokens != (m.num_blocks - 1) * m.block_size:
        problems.append("engine KV pool numbers are inconsistent")
    if m.pool_tokens < m.max_model_len:
        problems.append(f"KV pool {m.pool_tokens} tokens < max_model_len {m.max_model_len}")
    if m.pool_tokens < context_window:
        problems.append(f"KV pool {m.pool_tokens} tokens < gateway context window {context_window}")
    if m.max_model_len < context_window:
        problems.append(f"engine max_model_len {m.max_model_len} < gateway context window {context_window}")
    return problems
