"""The engine manifest: strict parsing, fetch errors, and the gateway's hardening judgement."""

from __future__ import annotations

import asyncio
import dataclasses

import httpx
import pytest

from engine.manifest import (
    EngineManifest,
    ManifestMalformed,
    ManifestUnreachable,
    fetch_manifest,
    manifest_problems,
    manifest_url,
)

GOOD = EngineManifest(
    schema=1,
    vllm_version="0.32.0",
    plugin_version="0.1.0",
    model="tiny",
    max_model_len=2048,
    block_size=128,
    num_blocks=33,
    pool_tokens=4096,
    kv_zeroing=True,
    zeroing_processes=2,
    version_override=False,
    prefix_caching=True,
    cache_salt_required=True,
    over_long_rejected=True,
    truncation_dropped=True,
    disaggregated=False,
    preflight_ok=True,
    started_at="2026-11-29T16:00:00+00:00",
)


def _fetch(handler) -> EngineManifest:
    async def go() -> EngineManifest:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            return await fetch_manifest(client, "http://engine:8000/v1")

    return asyncio.run(go())


def test_hardened_consistent_manifest_has_no_problems() -> None:
    """A manifest with every hardening on and pool >= context window passes."""
    assert manifest_problems(GOOD, 2048) == []


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"kv_zeroing": False}, "zero-on-allocate"),
        ({"zeroing_processes": 0}, "zero-on-allocate"),
        ({"plugin_version": None}, "plugin is not loaded"),
        ({"cache_salt_required": False}, "cache_salt"),
        ({"over_long_rejected": False}, "over-long"),
        ({"truncation_dropped": False}, "truncation"),
        ({"disaggregated": True}, "disaggregation"),
        ({"preflight_ok": False}, "preflight"),
        (
            {"num_blocks": 9, "pool_tokens": 1024},
            "KV pool 1024 tokens < max_model_len 2048",
        ),
        ({"num_blocks": 40}, "inconsistent"),
    ],
)
def test_each_missing_hardening_is_a_problem(change: dict, needle: str) -> None:
    """Turning off any single hardening (or a pool below the context) yields a named problem."""
    problems = manifest_problems(dataclasses.replace(GOOD, **change), 2048)
    assert any(needle in p for p in problems), problems


def test_salting_is_not_needed_without_prefix_caching() -> None:
    """With prefix caching off there is no shared cache, so an unsalted engine is acceptable."""
    m = dataclasses.replace(GOOD, prefix_caching=False, cache_salt_required=False)
    assert manifest_problems(m, 2048) == []


def test_gateway_context_window_beyond_engine_is_a_problem() -> None:
    """A gateway that admits more context than the pool or max_model_len is flagged twice."""
    problems = manifest_problems(GOOD, 8192)
    assert any("pool 4096 tokens < gateway context window 8192" in p for p in problems)
    assert any("max_model_len 2048 < gateway context window 8192" in p for p in problems)


def test_fetch_parses_a_served_manifest() -> None:
    """fetch_manifest GETs /tiergate/manifest (stripping /v1) and returns the parsed value."""
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(200, json=GOOD.to_json())

    assert _fetch(handler) == GOOD
    assert seen == ["http://engine:8000/tiergate/manifest"]
    assert manifest_url("http://e:1/") == "http://e:1/tiergate/manifest"


@pytest.mark.parametrize(
    "body",
    [
        [],
        {**GOOD.to_json(), "schema": 2},
        {k: v for k, v in GOOD.to_json().items() if k != "kv_zeroing"},
        {**GOOD.to_json(), "kv_zeroing": 1},
        {**GOOD.to_json(), "pool_tokens": True},
        {**GOOD.to_json(), "pool_tokens": "4096"},
    ],
)
def test_malformed_manifests_are_refused(body: object) -> None:
    """Wrong schema, missing fields and wrong types (1 for true, true for 1) raise ManifestMalformed."""
    with pytest.raises(ManifestMalformed) as info:
        _fetch(lambda request: httpx.Response(200, json=body))
    assert info.value.status_code == 503


def test_non_json_is_malformed() -> None:
    """A 200 whose body is not JSON raises ManifestMalformed."""
    with pytest.raises(ManifestMalformed):
        _fetch(lambda request: httpx.Response(200, text="<html>"))


def test_unreachable_and_non_200_are_refused() -> None:
    """A connection error and a 404 both raise ManifestUnreachable (fail closed)."""

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    with pytest.raises(ManifestUnreachable):
        _fetch(refuse)
    with pytest.raises(ManifestUnreachable, match="HTTP 404"):
        _fetch(lambda request: httpx.Response(404))
