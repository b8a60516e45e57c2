"""The hardened on-prem vLLM engine: config, preflight, KV hygiene plugin, admission front, manifest.

What the gateway uses, only through these names (importing none of vLLM): ``derive_cache_salt``
for the per-tenant ``cache_salt`` it injects; ``fetch_manifest`` / ``manifest_problems`` to decide
whether Tier 3 may go to an on-prem upstream (the manifest lives at ``GET
<engine>/tiergate/manifest``); ``tokenize_request`` and ``TRUNCATION_KEYS`` (``engine.counting``)
to count a prompt on a vLLM ``/tokenize`` and to drop what would let it read less; and
``engine_group``, the engine's commands, which ``tiergate engine`` runs.
"""

from engine.cli import engine_group
from engine.counting import RESPONSES_TRUNCATION_KEY, TRUNCATION_KEYS, tokenize_request
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
    "RESPONSES_TRUNCATION_KEY",
    "TRUNCATION_KEYS",
    "EngineManifest",
    "ManifestError",
    "ManifestMalformed",
    "ManifestUnreachable",
    "derive_cache_salt",
    "engine_group",
    "fetch_manifest",
    "manifest_problems",
    "manifest_url",
    "tokenize_request",
]
