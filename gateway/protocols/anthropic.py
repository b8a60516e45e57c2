"""Anthropic Messages: ``/v1/messages`` and ``/v1/messages/count_tokens`` (``wire: anthropic``).

* Keys come as ``x-api-key`` or ``Authorization: Bearer`` (gateway/auth.py reads both).
* ``anthropic-version`` and ``anthropic-beta`` go to the upstream unchanged — dropping the beta
  list silently turns off the 1M context — but only when they have the strict shape of a date
  and of a comma-separated list of feature tokens: a forwarded header is content too, and these
  cannot carry prose.
* Usage: ``input_tokens`` leaves out cached tokens, so the prompt the upstream read is
  ``input_tokens + cache_read_input_tokens + cache_creation_input_tokens``.
* Errors: ``{"type": "error", "error": {"type": …, "message": …}}``; a prompt too long for every
  eligible upstream is 413 ``request_too_large`` with a context-window message, the answer that
  makes Claude Code compact its history instead of retrying (it retries 5xx without end).
* Thinking blocks (and their signatures) are relayed and restored *not at all*: the client must
  hold exactly what the vendor produced, so that it can send it back byte-identical.
* ``count_tokens`` carries the whole prompt: it is classified, stripped, routed and audited like
  a message request, only its answer is a count.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

from audit.types import OutcomeKind
from gateway.errors import BadRequest, GatewayError, PayloadTooLarge, Unprocessable
from gateway.integrity import TRIVIAL_TOKENS
from gateway.protocols.base import Protocol, Usage
from gateway.protocols.events import EventRelay, StreamFailure, drive, restore_strings, sse
from tiers import Restorer

if TYPE_CHECKING:
    from gateway.tokens import PromptCount

__all__ = ["COUNT_TOKENS", "MESSAGES", "ContextWindowExceeded"]

_VERSION = re.compile(r"\d{4}-\d{2}-\d{2}\Z")
_BETA = re.compile(r"[a-z0-9][a-z0-9._-]{0,79}\Z")
_MAX_BETAS = 64
# What count_tokens takes: everything that reaches the model's context.
_COUNTED = ("model", "messages", "system", "tools", "tool_choice", "thinking", "mcp_servers")

# HTTP status -> Anthropic error type (what its SDKs map to their exception classes).
_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
          404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
          503: "overloaded_error", 529: "overloaded_error"}  # fmt: skip
_VENDOR_TYPE = re.compile(r"[a-z][a-z_]{0,39}\Z")


class ContextWindowExceeded(PayloadTooLarge):
    default_code = "request_too_large"
    default_message = ("prompt is too long: it exceeds the context window of every upstream this request may go to; "
                       "compact the conversation")  # fmt: skip


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    parts = [raw.get(k) for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")]
    if not isinstance(parts[0], int) or isinstance(parts[0], bool):
        return None
    prompt = sum(p for p in parts if isinstance(p, int) and not isinstance(p, bool) and p > 0)
    out: Usage = {"prompt_tokens": prompt}
    completion = raw.get("output_tokens")
    if isinstance(completion, int) and not isinstance(completion, bool):
        out["completion_tokens"] = completion
    return out


def _has_answer(blocks: Any) -> bool:
    for b in blocks or ():
        if isinstance(b, dict) and (b.get("type") in ("tool_use", "server_tool_use") or b.get("text")):
            return True
    return False


def _state_of(blocks: Any) -> list[str]:
    out = []
    for b in blocks or ():
        if isinstance(b, dict) and b.get("type") in ("thinking", "redacted_thinking"):
            out += [b[k] for k in ("signature", "data") if isinstance(b.get(k), str) and b[k]]
    return out


def _restore_block(block: Any, restorer: Restorer) -> None:
    if not isinstance(block, dict) or block.get("type") in ("thinking", "redacted_thinking"):
        return  # vendor state: the client must hold it as the vendor sent it
    restore_strings(block, restorer)


class _Anthropic(Protocol):
    wire = "anthropic"
    # Every Anthropic upstream counts exactly what it would receive (vLLM's and the engine
    # front's too): the estimate's doubt is settled there, with a write-ahead row first.
    count_path = "/messages/count_tokens"

    def tokenize_request(self, body: dict[str, Any]) -> dict[str, Any] | None:
        return {k: body[k] for k in _COUNTED if k in body}  # count_tokens refuses any other field

    def validate(self, body: dict[str, Any], stream: bool) -> None:
        if not isinstance(body.get("messages"), list) or not body["messages"]:
            raise Unprocessable("'messages' must be a non-empty array", param="messages")

    def forward_headers(self, headers: Any) -> dict[str, str]:
        out: dict[str, str] = {}
        versions = headers.getall("anthropic-version")
        if versions:
            if len(versions) > 1 or not _VERSION.match(versions[0].strip()):
                raise BadRequest("anthropic-version must be one date such as 2023-06-01", param="anthropic-version")
            out["anthropic-version"] = versions[0].strip()
        betas = headers.getall("anthropic-beta")
        if betas:
            tokens = [t.strip() for value in betas for t in value.split(",")]
            if len(tokens) > _MAX_BETAS or not all(_BETA.match(t) for t in tokens):
                raise BadRequest("anthropic-beta must be a comma-separated list of feature names",
                                 param="anthropic-beta")  # fmt: skip
            out["anthropic-beta"] = ",".join(betas) if len(betas) > 1 else betas[0]
        return out

    def too_long(self) -> GatewayError:
        return ContextWindowExceeded()

    def usage(self, data: dict[str, Any]) -> Usage | None:
        return _usage(data.get("usage"))

    def error_body(self, exc: GatewayError) -> dict[str, Any]:
        status = exc.status_code
        etype = _TYPES.get(status) or ("invalid_request_error" if status < 500 else "api_error")
        return {"type": "error", "error": {"type": etype, "message": exc.message}}


class _Messages(_Anthropic):
    name = "messages"
    path = "/messages"

    def validate(self, body: dict[str, Any], stream: bool) -> None:
        super().validate(body, stream)
        tokens = body.get("max_tokens")
        if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 1:
            raise Unprocessable("'max_tokens' must be a positive integer", param="max_tokens")

    def check_answer(self, count: PromptCount, data: dict[str, Any]) -> str | None:
        if (
            count.tokens >= TRIVIAL_TOKENS
            and data.get("stop_reason") == "max_tokens"
            and not _has_answer(data.get("content"))
        ):
            return "empty_length"
        return None

    def restore(self, data: dict[str, Any], mapping: dict[str, str], client_model: str) -> None:
        if mapping:
            restorer = Restorer(mapping)
            for block in data.get("content") or ():
                _restore_block(block, restorer)
        if "model" in data:
            data["model"] = client_model

    def relay(self, response: Any, *, mapping: dict[str, str], count: Any, promised_usage: bool,
              body: dict[str, Any], client_model: str, on_done: Any,
              on_state: Any = None) -> AsyncGenerator[bytes, None]:  # fmt: skip
        return drive(response, _MessagesRelay(mapping, client_model), count=count, promised_usage=promised_usage,
                     on_done=on_done, on_state=on_state)  # fmt: skip

    def vendor_state(self, data: dict[str, Any]) -> list[str]:
        return _state_of(data.get("content"))


class _CountTokens(_Anthropic):
    name = "count_tokens"
    path = "/messages/count_tokens"
    streams = False

    def usage(self, data: dict[str, Any]) -> Usage | None:
        return _usage(data)  # the answer is the count: {"input_tokens": n}

    def restore(self, data: dict[str, Any], mapping: dict[str, str], client_model: str) -> None:
        pass  # a count: nothing to restore


class _MessagesRelay(EventRelay):
    """Anthropic's stream: message_start (usage), content blocks (text, tool input as partial
    JSON, citations, thinking), message_delta (stop reason, output usage), message_stop."""

    def __init__(self, mapping: dict[str, str], client_model: str) -> None:
        super().__init__(mapping, client_model)
        self.raw_usage: dict[str, Any] = {}
        self.answered = False
        self.stop_reason: str | None = None
        self.held: list[bytes] = []
        self.open_blocks: set[int] = set()
        self.signatures: dict[int, str] = {}  # per thinking block, as the client will hold it

    def _set_usage(self, raw: Any) -> None:
        if isinstance(raw, dict):
            self.raw_usage.update({k: v for k, v in raw.items() if v is not None})
            self.usage = _usage(self.raw_usage)

    def feed(self, name: str | None, event: dict[str, Any]) -> list[bytes]:
        etype = event.get("type") if isinstance(event.get("type"), str) else name
        if etype == "message_start":
            message = event.get("message")
            if isinstance(message, dict):
                self._set_usage(message.get("usage"))
                if "model" in message:
                    message["model"] = self.client_model
                if self.restorer is not None:
                    for block in message.get("content") or ():
                        _restore_block(block, self.restorer)
            # Anthropic reports the prompt here, before any text: checked before any is relayed.
            # vLLM's Messages front reports 0 here and the real figure in message_delta, which
            # the check at the end reads (the later figures replace these).
            self.usage_early = bool(self.usage and self.usage["prompt_tokens"] > 0)
            return [sse("message_start", event)]
        if etype == "content_block_start":
            index = event.get("index", 0)
            self.open_blocks.add(index)
            block = event.get("content_block")
            self.state += _state_of([block])
            if isinstance(block, dict):
                if block.get("type") in ("tool_use", "server_tool_use") or block.get("text"):
                    self.answered = True
                if self.restorer is not None:
                    _restore_block(block, self.restorer)
            return [sse("content_block_start", event)]
        if etype == "content_block_delta":
            return [sse("content_block_delta", self._delta(event))]
        if etype == "content_block_stop":
            index = event.get("index", 0)
            self.open_blocks.discard(index)
            return [*self._flush(index), sse("content_block_stop", event)]
        if etype == "message_delta":
            delta = event.get("delta")
            if isinstance(delta, dict) and isinstance(delta.get("stop_reason"), str):
                self.stop_reason = delta["stop_reason"]
            self._set_usage(event.get("usage"))
            self.held.append(sse("message_delta", event))
            return []
        if etype == "message_stop":
            self.terminal = True
            self.held.append(sse("message_stop", event))
            return []
        if etype == "error":
            err = event.get("error")
            vendor = err.get("type") if isinstance(err, dict) else None
            raise StreamFailure("upstream_stream_error", vendor if isinstance(vendor, str) else None)
        if etype == "ping":
            return [sse("ping", event)]
        # An event type this gateway does not know yet: passed on, its strings restored.
        if self.restorer is not None:
            restore_strings(event, self.restorer)
        return [sse(etype or "message", event)]

    def _delta(self, event: dict[str, Any]) -> dict[str, Any]:
        index = event.get("index", 0)
        delta = event.get("delta")
        if not isinstance(delta, dict):
            return event
        dtype = delta.get("type")
        if dtype == "text_delta" and isinstance(delta.get("text"), str):
            self.answered = self.answered or bool(delta["text"])
            if self.streams is not None:
                delta["text"] = self.streams.feed((index, "text"), delta["text"])
        elif dtype == "input_json_delta" and isinstance(delta.get("partial_json"), str):
            self.answered = True
            if self.streams is not None:  # inside JSON string literals: restored JSON-escaped
                delta["partial_json"] = self.streams.feed((index, "tool"), delta["partial_json"])
        elif dtype in ("thinking_delta", "signature_delta"):
            if dtype == "signature_delta" and isinstance(delta.get("signature"), str):
                self.signatures[index] = self.signatures.get(index, "") + delta["signature"]
            # vendor state: byte-untouched
        elif self.restorer is not None:  # citations_delta, and delta types still to come
            restore_strings(delta, self.restorer)
        return event

    def _flush(self, index: int) -> list[bytes]:
        out = []
        if self.streams is not None:
            for key, rest in self.streams.flush_choice(index):
                if rest:
                    delta = ({"type": "input_json_delta", "partial_json": rest} if key[1] == "tool"
                             else {"type": "text_delta", "text": rest})  # fmt: skip
                    out.append(sse("content_block_delta", {"type": "content_block_delta", "index": index,
                                                           "delta": delta}))  # fmt: skip
        return out

    def finish(self) -> list[bytes]:
        out: list[bytes] = []
        if self.streams is not None:
            for index in self.streams.pending_choices():
                out.extend(self._flush(index))
        self.state += [s for s in self.signatures.values() if s]
        return out + self.held

    def answer_check(self, count: PromptCount) -> str | None:
        if count.tokens >= TRIVIAL_TOKENS and self.stop_reason == "max_tokens" and not self.answered:
            return "empty_length"
        return None

    def error_event(self, status: OutcomeKind, code: str, vendor_type: str | None) -> bytes:
        if vendor_type is not None and _VENDOR_TYPE.match(vendor_type):
            etype, message = vendor_type, f"the upstream reported an error ({vendor_type})"
        elif status is OutcomeKind.INTEGRITY_ERROR:
            etype, message = "api_error", "the upstream's stream failed the gateway's checks and was ended"
        elif status is OutcomeKind.TIMEOUT:
            etype, message = "api_error", f"the upstream's stream timed out ({code})"
        else:
            etype, message = "api_error", f"the upstream's stream failed ({code})"
        return sse("error", {"type": "error", "error": {"type": etype, "message": message}})


MESSAGES = _Messages()
COUNT_TOKENS = _CountTokens()
