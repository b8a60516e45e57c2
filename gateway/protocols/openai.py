"""OpenAI chat completions, legacy completions and embeddings (``wire: openai``)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

from engine import tokenize_request
from gateway.errors import Unprocessable
from gateway.integrity import check_answer
from gateway.protocols.base import Protocol
from gateway.restore import Restorers, restore_response

if TYPE_CHECKING:
    from gateway.routing import Candidate
    from gateway.tokens import PromptCount
    from tiers.types import Tier

__all__ = ["CHAT", "COMPLETIONS", "EMBEDDINGS"]


def _token_ids(value: Any) -> int:
    """How many token ids (not strings) a completions prompt or embeddings input carries."""
    if not isinstance(value, list):
        return 0
    if value and all(isinstance(v, int) for v in value):
        return len(value)
    return sum(len(v) for v in value if isinstance(v, list))


class _OpenAI(Protocol):
    wire = "openai"

    def prepare(self, out: dict[str, Any], *, stream: bool, candidate: Candidate, tier: Tier) -> None:
        if stream:  # usage at the end of the stream: the integrity check needs it
            options = out.get("stream_options")
            options = dict(options) if isinstance(options, dict) else {}
            options["include_usage"] = True
            out["stream_options"] = options

    def check_answer(self, count: PromptCount, data: dict[str, Any]) -> str | None:
        return check_answer(count, [c for c in data.get("choices") or () if isinstance(c, dict)])

    def restore(self, data: dict[str, Any], mapping: dict[str, str], client_model: str) -> None:
        restore_response(data, mapping)
        if "model" in data:  # the name the client asked for: upstream names and routing stay inside
            data["model"] = client_model

    def relay(self, response: Any, *, mapping: dict[str, str], count: Any, promised_usage: bool,
              body: dict[str, Any], client_model: str, on_done: Any,
              on_state: Any = None) -> AsyncGenerator[bytes, None]:  # fmt: skip
        from gateway.streaming import relay_sse

        options = body.get("stream_options")
        return relay_sse(
            response,
            restorers=Restorers(mapping) if mapping else None,
            count=count,
            promised_usage=promised_usage,
            client_wants_usage=bool(isinstance(options, dict) and options.get("include_usage")),
            client_model=client_model,
            on_done=on_done,
        )


class _Chat(_OpenAI):
    name = "chat"
    path = "/chat/completions"

    def validate(self, body: dict[str, Any], stream: bool) -> None:
        if not isinstance(body.get("messages"), list) or not body["messages"]:
            raise Unprocessable("'messages' must be a non-empty array", param="messages")

    def tokenize_request(self, body: dict[str, Any]) -> dict[str, Any] | None:
        return tokenize_request(body, chat=True)


class _Completions(_OpenAI):
    name = "completions"
    path = "/completions"

    def validate(self, body: dict[str, Any], stream: bool) -> None:
        if "prompt" not in body:
            raise Unprocessable("'prompt' is required", param="prompt")

    def token_ids(self, body: dict[str, Any]) -> int:
        return _token_ids(body.get("prompt"))

    def tokenize_request(self, body: dict[str, Any]) -> dict[str, Any] | None:
        return tokenize_request(body, chat=False)


class _Embeddings(_OpenAI):
    name = "embeddings"
    path = "/embeddings"
    streams = False

    def validate(self, body: dict[str, Any], stream: bool) -> None:
        if "input" not in body:
            raise Unprocessable("'input' is required", param="input")

    def prepare(self, out: dict[str, Any], *, stream: bool, candidate: Candidate, tier: Tier) -> None:
        pass

    def token_ids(self, body: dict[str, Any]) -> int:
        return _token_ids(body.get("input"))

    def check_answer(self, count: PromptCount, data: dict[str, Any]) -> str | None:
        return None  # no answer text to be empty; /tokenize has no embeddings shape either


CHAT = _Chat()
COMPLETIONS = _Completions()
EMBEDDINGS = _Embeddings()
