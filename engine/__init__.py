"""The hardened on-prem vLLM engine: config, preflight, KV hygiene plugin, admission front, manifest.

What the gateway uses (importing none of vLLM): ``derive_cache_salt`` for the per-tenant
``cache_salt`` it injects, and ``fetch_manifest`` / ``manifest_problems`` to decide whether Tier 3
may go to an on-prem upstream. The manifest lives at ``GET <engine>/tiergate/manifest``.
"""

from engine.manifest import (
    MANIFEST_PATH,
    EngineManifest,
    ManifestError,
    ManifestMalformed,
    ManifestUnreachable,
    fetch_manifest,
    manifest_problems,
    manifest_url,
)
from engine.salt import derive_cache_salt

__all__ = [
    "MANIFEST_PATH",
    "EngineManifest",
    "ManifestError",
    "ManifestMalformed",
    "ManifestUnreachable",
    "derive_cache_salt",
    "fetch_manifest",
    "manifest_problems",
    "manifest_url",
]
