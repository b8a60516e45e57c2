"""`tiergate serve --demo`: a first run that shows the product without a vendor account.

A built-in *echo vendor* is served by the gateway itself under ``/demo-vendor/v1`` on loopback and
configured as a **shared** upstream named ``demo-echo`` (provider ``tiergate-demo``). It answers
every chat or completion with exactly what it received, so a client sees what a shared vendor
would have seen: ``<EMAIL_1>`` instead of the address. The placeholder is shown with angle
*quotation marks* (‹EMAIL_1›) so that the gateway's restore step leaves the echo alone; everything
else the client gets back is restored as usual. Nothing here can be mistaken for a real vendor:
the model names say ``demo``, every answer starts with ``[demo echo vendor]``, and the server
logs the demo at start.

Upstreams whose API key variable is not set are replaced by the echo vendor in routing (the on-prem
engine, with no key, stays: a Tier-3 prompt is then refused until it runs).
"""

from __future__ import annotations

import math
import os
import re
import time
from typing import Any

import msgspec
from litestar import Request, Router, post
from litestar.response import Response, Stream

from gateway.settings import ModelAlias, Settings, UpstreamSettings
from tiers.types import Tier, UpstreamKind

__all__ = ["DEMO_UPSTREAM", "demo_router", "with_demo"]

DEMO_UPSTREAM = "demo-echo"
DEMO_PATH = "/demo-vendor/v1"
_PLACEHOLDER = re.compile(r"<([A-Z][A-Z0-9_]*_[0-9]+)>")
_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder()


def with_demo(settings: Settings) -> Settings:
    """``settings`` with the echo vendor in place of every vendor whose key is not configured."""
    missing = {u.name for u in settings.upstreams
               if u.kind != UpstreamKind.ONPREM and u.api_key_env and not os.environ.get(u.api_key_env)}  # fmt: skip
    models = sorted({m for u in settings.upstreams if u.name in missing for m in u.models} | {"demo"})
    echo = UpstreamSettings(
        name=DEMO_UPSTREAM,
        base_url=f"http://127.0.0.1:{settings.server.port}{DEMO_PATH}",
        kind=UpstreamKind.SHARED,
        provider="tiergate-demo",
        max_tier=Tier.INTERNAL,
        models={m: f"demo-echo-of-{m}" for m in models},
        context_window=128_000,
    )
    upstreams = [u for u in settings.upstreams if u.name not in missing] + [echo]
    aliases = [
        ModelAlias(name=a.name, upstreams=[DEMO_UPSTREAM if n in missing else n for n in a.upstreams])
        for a in settings.aliases
    ]
    return settings.model_copy(update={"upstreams": upstreams, "aliases": aliases})


def _shown(text: str) -> str:
    return _PLACEHOLDER.sub(lambda m: f"\u2039{m.group(1)}\u203a", text)


def _received(body: dict[str, Any]) -> tuple[str, int]:
    """What the echo says it received (the last user message), and an honest prompt count."""
    texts: list[str] = []
    for msg in body.get("messages") or ():
        content = msg.get("content") if isinstance(msg, dict) else None
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts += [p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
    if isinstance(body.get("prompt"), str):
        texts.append(body["prompt"])
    size = sum(len(t.encode()) for t in texts)
    return (texts[-1] if texts else ""), max(1, math.ceil(size / 4))


@post(f"{DEMO_PATH}/chat/completions", media_type="application/json", include_in_schema=False)
async def _chat(request: Request[Any, Any, Any]) -> Response[bytes] | Stream:
    return _answer(_decode.decode(await request.body()), chat=True)


@post(f"{DEMO_PATH}/completions", media_type="application/json", include_in_schema=False)
async def _completions(request: Request[Any, Any, Any]) -> Response[bytes] | Stream:
    return _answer(_decode.decode(await request.body()), chat=False)


def _answer(body: dict[str, Any], *, chat: bool) -> Response[bytes] | Stream:
    last, prompt_tokens = _received(body)
    # The first copy shows the placeholders as the vendor saw them; the second comes back to the
    # client restored, as a real model's answer would.
    text = f"[demo echo vendor] I received: {_shown(last)}\nEchoed back: {last}"
    usage = {"prompt_tokens": prompt_tokens, "completion_tokens": len(text) // 4,
             "total_tokens": prompt_tokens + len(text) // 4}  # fmt: skip
    base = {"id": f"demo-{time.monotonic_ns()}", "created": int(time.time()), "model": body.get("model", "demo")}
    if body.get("stream"):
        return Stream(_events(base, text, usage, chat), media_type="text/event-stream")
    choice = {"index": 0, "finish_reason": "stop"}
    choice |= {"message": {"role": "assistant", "content": text}} if chat else {"text": text}
    kind = "chat.completion" if chat else "text_completion"
    return Response(_encode({**base, "object": kind, "choices": [choice], "usage": usage}))


async def _events(base: dict[str, Any], text: str, usage: dict[str, int], chat: bool) -> Any:
    kind = "chat.completion.chunk" if chat else "text_completion"
    for i in range(0, len(text), 16):
        piece = text[i : i + 16]
        choice = {"index": 0, "delta": {"content": piece}} if chat else {"index": 0, "text": piece}
        yield b"data: " + _encode({**base, "object": kind, "choices": [choice]}) + b"\n\n"
    end = (
        {"index": 0, "delta": {}, "finish_reason": "stop"}
        if chat
        else {"index": 0, "text": "", "finish_reason": "stop"}
    )
    yield b"data: " + _encode({**base, "object": kind, "choices": [end]}) + b"\n\n"
    yield b"data: " + _encode({**base, "object": kind, "choices": [], "usage": usage}) + b"\n\n"
    yield b"data: [DONE]\n\n"


def demo_router() -> Router:
    return Router(path="/", route_handlers=[_chat, _completions])
