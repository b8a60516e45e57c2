"""The split router over real HTTP: two stand-in halves on 127.0.0.1, the router under uvicorn.

The halves are small ASGI apps that record what they were sent and notice when the router
closes their connection (which is how vLLM's server learns of an abort). Only the engines are
stand-ins: the router, its HTTP clients and the sockets are the real ones.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from engine.manifest import manifest_problems
from engine.pd.records import RecordStore
from engine.pd.router import SplitRouterConfig, combine_manifests, create_router
from tests.engine.test_manifest import GOOD
from tests.support.servers import serve

GUARDED = dataclasses.replace(GOOD, disaggregated=True, kv_boundary_check=True, kv_deferred_release=True,
                              kv_checksums=True)  # fmt: skip
WAIT_S = 30.0  # generous bound for an event that must happen; never a speed assertion


class Half:
    """``mode``: "answer" (JSON at once), "hold" (never answers), "stream" (SSE until closed),
    "queued" (SSE headers and nothing more, as vLLM does for a request waiting in its queue)."""

    def __init__(self, mode: str = "answer", manifest: dict[str, Any] | None = None) -> None:
        self.mode = mode
        self.manifest = manifest
        self.bodies: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.tenants: list[str | None] = []
        self.aborted = threading.Event()
        self.called = threading.Event()

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                msg = await receive()
                await send({"type": msg["type"] + ".complete"})
                if msg["type"] == "lifespan.shutdown":
                    return
        body = b""
        while True:
            msg = await receive()
            body += msg.get("body", b"")
            if not msg.get("more_body"):
                break
        if scope["path"] in ("/health", "/tiergate/manifest"):
            payload = {"ok": True} if scope["path"] == "/health" else self.manifest
            await self._json(send, payload, 200 if payload is not None else 503)
            return
        self.bodies.append(json.loads(body))
        self.paths.append(scope["path"])
        self.tenants.append(dict(scope["headers"]).get(b"x-tiergate-tenant", b"").decode() or None)
        self.called.set()
        if self.mode == "answer":
            await self._json(send, {"choices": [{"text": "x"}], "kv_transfer_params": {"remote_block_ids": [1, 2]}})
            return
        if self.mode in ("stream", "queued"):
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"text/event-stream")]})  # fmt: skip
        if self.mode == "stream":
            await send({"type": "http.response.body", "body": b'data: {"choices": []}\n\n', "more_body": True})
        while (await receive())["type"] != "http.disconnect":
            pass
        self.aborted.set()

    @staticmethod
    async def _json(send: Any, payload: object, status: int = 200) -> None:
        await send(
            {"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json")]}
        )
        await send({"type": "http.response.body", "body": json.dumps(payload).encode()})


def _router(prefill: Half, decode: Half, tmp_path: Path, **kw: Any):
    halves = serve(prefill), serve(decode)
    p, d = (h.__enter__() for h in halves)
    cfg = SplitRouterConfig(p.url, d.url, record_dir=tmp_path / "records", **kw)
    return halves, serve(create_router(cfg))


def _body(**extra: Any) -> dict[str, Any]:
    return {"model": "tiny", "prompt": "hello", "max_tokens": 20, **extra}


def test_both_halves_see_one_transfer_id_and_the_prefill_computes_only_the_prompt(tmp_path: Path) -> None:
    prefill, decode = Half(), Half()
    halves, router = _router(prefill, decode, tmp_path)
    try:
        with router as r:
            answer = httpx.post(r.url + "/v1/completions", json=_body(), timeout=WAIT_S)
        assert answer.status_code == 200
        sent_p, sent_d = prefill.bodies[0], decode.bodies[0]
        tid = sent_p["kv_transfer_params"]["tiergate_transfer_id"]
        assert sent_d["kv_transfer_params"] == {"remote_block_ids": [1, 2], "tiergate_transfer_id": tid}
        assert sent_p["max_tokens"] == 1 and sent_d["max_tokens"] == 20
    finally:
        for h in halves:
            h.__exit__(None, None, None)


@pytest.mark.parametrize("why", ["client_gone", "limit"])
def test_a_request_abandoned_in_prefill_aborts_it_and_never_decodes(tmp_path: Path, why: str) -> None:
    """Client gone (or the limit hit) while prefilling: the prefill connection is closed, the
    decode half never starts, and the prefill side is told nobody will read its blocks."""
    prefill, decode = Half("hold"), Half()
    halves, router = _router(prefill, decode, tmp_path, request_timeout_s=1.0 if why == "limit" else 600.0)
    try:
        with router as r:
            if why == "client_gone":
                with pytest.raises(httpx.ReadTimeout):
                    httpx.post(r.url + "/v1/completions", json=_body(), timeout=httpx.Timeout(5.0, read=1.0))
            else:
                assert httpx.post(r.url + "/v1/completions", json=_body(), timeout=WAIT_S).status_code == 504
            assert prefill.aborted.wait(WAIT_S)
            tid = prefill.bodies[0]["kv_transfer_params"]["tiergate_transfer_id"]
            store = RecordStore(tmp_path / "records")
            assert _wait_for(lambda: store.acked(tid, "consumer", 1))
            assert not decode.called.is_set()
            metrics = httpx.get(r.url + "/metrics", timeout=WAIT_S).text
        reason = "client_gone" if why == "client_gone" else "timeout"
        assert f'tiergate_pd_paired_aborts_total{{reason="{reason}",stage="prefill"}} 1.0' in metrics
    finally:
        for h in halves:
            h.__exit__(None, None, None)


@pytest.mark.parametrize("stream", [True, False])
def test_a_client_gone_during_decode_aborts_the_decode(tmp_path: Path, stream: bool) -> None:
    prefill, decode = Half(), Half("stream" if stream else "hold")
    halves, router = _router(prefill, decode, tmp_path)
    try:
        with router as r:
            with httpx.Client(timeout=httpx.Timeout(5.0, read=1.0)) as client:
                if stream:
                    with client.stream("POST", r.url + "/v1/completions", json=_body(stream=True)) as resp:
                        assert resp.status_code == 200
                        next(resp.iter_lines())
                else:
                    with pytest.raises(httpx.ReadTimeout):
                        client.post(r.url + "/v1/completions", json=_body())
            assert decode.aborted.wait(WAIT_S)
    finally:
        for h in halves:
            h.__exit__(None, None, None)


@pytest.mark.parametrize("why", ["limit", "client_gone"])
def test_a_streamed_decode_with_no_token_yet_is_aborted_and_the_client_gets_a_504(tmp_path: Path, why: str) -> None:
    """The decode half sent its stream's headers only: the router has sent the client nothing, so
    its limit answers 504 in the API's shape (not a 200 stream), and either way the decode is closed."""
    prefill, decode = Half(), Half("queued")
    halves, router = _router(prefill, decode, tmp_path, request_timeout_s=1.0 if why == "limit" else 600.0)
    try:
        with router as r:
            if why == "limit":
                late = httpx.post(r.url + "/v1/completions", json=_body(stream=True), timeout=WAIT_S)
                assert late.status_code == 504 and late.json()["error"]["code"] == "timeout"
            else:
                with pytest.raises(httpx.ReadTimeout):
                    httpx.post(r.url + "/v1/completions", json=_body(stream=True), timeout=httpx.Timeout(5.0, read=1.0))
            assert decode.aborted.wait(WAIT_S)
            reason = "timeout" if why == "limit" else "client_gone"
            line = f'tiergate_pd_paired_aborts_total{{reason="{reason}",stage="decode"}} 1.0'
            assert _wait_for(lambda: line in httpx.get(r.url + "/metrics", timeout=WAIT_S).text)
    finally:
        for h in halves:
            h.__exit__(None, None, None)


def _wait_for(check: Any) -> bool:
    import time

    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return False


def test_the_combined_manifest_passes_only_when_both_halves_are_guarded(tmp_path: Path) -> None:
    prefill = Half(manifest=GUARDED.to_json())
    decode = Half(manifest=dataclasses.replace(GUARDED, pool_tokens=2048, num_blocks=17).to_json())
    halves, router = _router(prefill, decode, tmp_path)
    try:
        with router as r:
            m = httpx.get(r.url + "/tiergate/manifest", timeout=WAIT_S).json()
            decode.manifest = dataclasses.replace(GUARDED, kv_checksums=False).to_json()
            weak = httpx.get(r.url + "/tiergate/manifest", timeout=WAIT_S).json()
            decode.manifest = None
            down = httpx.get(r.url + "/tiergate/manifest", timeout=WAIT_S)
    finally:
        for h in halves:
            h.__exit__(None, None, None)
    from engine.manifest import EngineManifest

    combined = EngineManifest.from_json(m)
    assert combined.paired_aborts and combined.disaggregated and combined.pool_tokens == 2048
    assert manifest_problems(combined, 2048) == []
    assert manifest_problems(combined, 4096) != []  # the smaller half's pool counts
    assert any("checksums" in p for p in manifest_problems(EngineManifest.from_json(weak), 2048))
    assert down.status_code == 503


def test_a_half_reached_directly_is_not_trusted_for_tier3() -> None:
    """An instance manifest never claims paired aborts: only the router in front of both can."""
    assert manifest_problems(GUARDED, 2048) == [
        "prefill/decode disaggregation without paired aborts of prefill and decode"
    ]
    assert combine_manifests(GUARDED, dataclasses.replace(GUARDED, kv_zeroing=False)).kv_zeroing is False


@pytest.mark.parametrize(
    ("path", "limit"), [("/v1/chat/completions", "max_tokens"), ("/v1/messages", "max_tokens"),
                        ("/v1/responses", "max_output_tokens")]
)  # fmt: skip
def test_every_api_the_front_serves_is_split_under_its_own_output_limit(tmp_path: Path, path: str, limit: str) -> None:
    """The gateway reaches a split only through the router: Messages and Responses too. The
    prefill leg computes one token under that API's limit (a Responses leg is not stored), the
    decode leg gets the client's, and both see the tenant header the front derives salts from."""
    prefill, decode = Half(), Half()
    halves, router = _router(prefill, decode, tmp_path)
    body = {"model": "tiny", limit: 20, "stream": False, "min_tokens": 3}
    try:
        with router as r:
            answer = httpx.post(r.url + path, json=body, headers={"X-Tiergate-Tenant": "acme"}, timeout=WAIT_S)
    finally:
        for h in halves:
            h.__exit__(None, None, None)
    assert answer.status_code == 200
    (sent_p,), (sent_d,) = prefill.bodies, decode.bodies
    assert prefill.paths == decode.paths == [path] and prefill.tenants == decode.tenants == ["acme"]
    assert sent_p[limit] == 1 and "min_tokens" not in sent_p and sent_d[limit] == 20 and sent_d["min_tokens"] == 3
    assert sent_p.get("store") is (False if path == "/v1/responses" else None)
    assert sent_p["kv_transfer_params"]["tiergate_transfer_id"] == sent_d["kv_transfer_params"]["tiergate_transfer_id"]


def test_counting_goes_to_one_half_and_an_anthropic_limit_answers_in_its_shape(tmp_path: Path) -> None:
    prefill, decode = Half(), Half("hold")
    halves, router = _router(prefill, decode, tmp_path, request_timeout_s=1.0)
    try:
        with router as r:
            counted = httpx.post(r.url + "/tokenize", json={"prompt": "hi"}, timeout=WAIT_S)
            late = httpx.post(r.url + "/v1/messages", json={"model": "tiny", "max_tokens": 5}, timeout=WAIT_S)
            assert decode.aborted.wait(WAIT_S)
    finally:
        for h in halves:
            h.__exit__(None, None, None)
    assert counted.status_code == 200 and prefill.paths[0] == "/tokenize" and decode.paths == ["/v1/messages"]
    assert (
        late.status_code == 504 and late.json()["type"] == "error" and late.json()["error"]["type"] == "timeout_error"
    )
