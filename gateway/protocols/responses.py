"""OpenAI Responses: ``/v1/responses``, streaming and not (``wire: responses``).

* ``store`` defaults to true at the vendor (it keeps the conversation): on a shared upstream it
  is forced to false unless the upstream's ``vendor_storage_max_tier`` allows the request's tier.
* ``previous_response_id`` / ``conversation`` make the vendor prepend history it holds: such a
  request only goes where the vendor may hold it, and otherwise is refused, saying so.
* ``truncation: auto`` would let the upstream drop input the audit log says it received: the
  gateway owns it (dropped; the vendor's default is to refuse an over-long input).
* Text lives in many places of the answer: every ``*.delta``, every ``*.done``, the items of
  ``response.output_item.done`` and the final ``response.completed.response.output`` — the object
  clients keep as history. All of them are restored; encrypted reasoning is passed untouched.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

from audit.types import OutcomeKind
from engine import RESPONSES_TRUNCATION_KEY
from gateway.errors import BadRequest, GatewayError, Unprocessable
from gateway.integrity import TRIVIAL_TOKENS
from gateway.protocols.base import Protocol, Usage
from gateway.protocols.events import EventRelay, StreamFailure, drive, restore_strings, sse
from gateway.restore import restore_arguments
from tiers import Restorer
from tiers.types import UpstreamKind

if TYPE_CHECKING:
    from gateway.routing import Candidate
    from gateway.tokens import PromptCount
    from tiers.types import Tier

__all__ = ["RESPONSES", "restore_item"]

_VENDOR_HISTORY = ("previous_response_id", "conversation")


def storage_allowed(candidate: Candidate, tier: Tier) -> bool:
    """Whether this upstream may keep the conversation of a request of ``tier``."""
    return candidate.kind != UpstreamKind.SHARED or int(tier) <= candidate.upstream.vendor_storage_max_tier


def restore_item(item: Any, restorer: Restorer) -> None:
    """An output item restored in place: function-call arguments as JSON, the rest as text;
    encrypted reasoning and ids untouched."""
    if not isinstance(item, dict):
        return
    for key, value in item.items():
        if key == "arguments" and isinstance(value, str):
            item[key] = restore_arguments(value, restorer)
        elif key in ("content", "summary", "output", "text", "refusal", "input", "action", "annotations"):
            item[key] = restore_strings(value, restorer)


def _state_of(items: Any) -> list[str]:
    """Encrypted reasoning / compaction items: ciphertext only their producer reads."""
    return [
        i["encrypted_content"]
        for i in items or ()
        if isinstance(i, dict) and isinstance(i.get("encrypted_content"), str) and i["encrypted_content"]
    ]


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    prompt = raw.get("input_tokens")  # cached tokens are included (input_tokens_details)
    if not isinstance(prompt, int) or isinstance(prompt, bool):
        return None
    out: Usage = {"prompt_tokens": prompt}
    completion = raw.get("output_tokens")
    if isinstance(completion, int) and not isinstance(completion, bool):
        out["completion_tokens"] = completion
    return out


def _answered(output: Any) -> bool:
    for item in output or ():
        if not isinstance(item, dict):
            continue
        if item.get("type") not in ("message", "reasoning", None):
            return True  # a tool call
        for part in item.get("content") or ():
            if isinstance(part, dict) and (part.get("text") or part.get("refusal")):
                return True
    return False


def _empty_cut(count: PromptCount, response: Any) -> str | None:
    if not isinstance(response, dict) or count.tokens < TRIVIAL_TOKENS:
        return None
    details = response.get("incomplete_details")
    reason = details.get("reason") if isinstance(details, dict) else None
    if (
        response.get("status") == "incomplete"
        and reason == "max_output_tokens"
        and not _answered(response.get("output"))
    ):
        return "empty_length"
    return None


class _Responses(Protocol):
    name = "responses"
    wire = "responses"
    path = "/responses"

    def validate(self, body: dict[str, Any], stream: bool) -> None:
        if "input" not in body and not any(k in body for k in _VENDOR_HISTORY):
            raise Unprocessable("'input' is required", param="input")

    def prepare(self, out: dict[str, Any], *, stream: bool, candidate: Candidate, tier: Tier) -> None:
        out.pop(RESPONSES_TRUNCATION_KEY, None)
        if not storage_allowed(candidate, tier):
            out["store"] = False

    def admits(self, body: dict[str, Any], candidate: Candidate, tier: Tier) -> bool:
        return not any(body.get(k) is not None for k in _VENDOR_HISTORY) or storage_allowed(candidate, tier)

    def refused(self) -> GatewayError | None:
        return BadRequest(
            "previous_response_id refers to history the vendor keeps, and this request's tier does not allow "
            "any upstream of this model to keep it: send the conversation as 'input' (with store: false)",
            code="vendor_storage_not_allowed", param="previous_response_id",
        )  # fmt: skip

    def usage(self, data: dict[str, Any]) -> Usage | None:
        return _usage(data.get("usage"))

    def check_answer(self, count: PromptCount, data: dict[str, Any]) -> str | None:
        return _empty_cut(count, data)

    def restore(self, data: dict[str, Any], mapping: dict[str, str], client_model: str) -> None:
        if mapping:
            restorer = Restorer(mapping)
            for item in data.get("output") or ():
                restore_item(item, restorer)
            if isinstance(data.get("output_text"), str):
                data["output_text"] = restorer.restore(data["output_text"])
        if "model" in data:
            data["model"] = client_model

    def relay(self, response: Any, *, mapping: dict[str, str], count: Any, promised_usage: bool,
              body: dict[str, Any], client_model: str, on_done: Any,
              on_state: Any = None) -> AsyncGenerator[bytes, None]:  # fmt: skip
        return drive(response, _ResponsesRelay(mapping, client_model), count=count, promised_usage=promised_usage,
                     on_done=on_done, on_state=on_state)  # fmt: skip

    def vendor_state(self, data: dict[str, Any]) -> list[str]:
        return _state_of(data.get("output"))


_TERMINAL = frozenset({"response.completed", "response.incomplete"})


class _ResponsesRelay(EventRelay):
    """Typed events with ``sequence_number`` (renumbered here: the gateway may add a delta that
    releases text held back at a ``.done``), no ``[DONE]``; ends with completed/incomplete/failed."""

    def __init__(self, mapping: dict[str, str], client_model: str) -> None:
        super().__init__(mapping, client_model)
        self.seq = 0
        self.final: dict[str, Any] | None = None
        self.terminal_event: tuple[str, dict[str, Any]] = ("response.completed", {})

    def _out(self, etype: str, event: dict[str, Any]) -> bytes:
        if "sequence_number" in event:
            event["sequence_number"] = self.seq
            self.seq += 1
        return sse(etype, event)

    def _response(self, event: dict[str, Any]) -> None:
        response = event.get("response")
        if not isinstance(response, dict):
            return
        if "model" in response:
            response["model"] = self.client_model
        if self.restorer is not None:
            for item in response.get("output") or ():
                restore_item(item, self.restorer)

    @staticmethod
    def _ident(event: dict[str, Any], base: str) -> tuple[Any, ...]:
        return (event.get("item_id", event.get("output_index")), event.get("content_index"),
                event.get("summary_index"), base)  # fmt: skip

    def feed(self, name: str | None, event: dict[str, Any]) -> list[bytes]:
        given = event.get("type")
        etype = given if isinstance(given, str) else (name or "message")
        if etype in _TERMINAL:
            self._response(event)
            response = event.get("response")
            if isinstance(response, dict):
                self.usage = _usage(response.get("usage"))
                self.final = response
                self.state += _state_of(response.get("output"))
            self.terminal = True
            self.terminal_event = (etype, event)  # held: released by finish, once checked
            return []
        if etype == "response.failed" or etype == "error":
            raise StreamFailure("upstream_stream_error")
        if "response" in event:  # created, in_progress
            self._response(event)
            return [self._out(etype, event)]
        if etype.endswith(".delta") and isinstance(event.get("delta"), str):
            base = etype[: -len(".delta")]
            if self.streams is not None:
                kind = "tool" if "arguments" in base else "text"
                event["delta"] = self.streams.feed((self._ident(event, base), kind), event["delta"])
            return [self._out(etype, event)]
        out: list[bytes] = []
        if etype.endswith(".done"):
            out.extend(self._flush(event, etype[: -len(".done")]))
        if self.restorer is not None:
            for key in ("text", "refusal"):
                if isinstance(event.get(key), str):
                    event[key] = self.restorer.restore(event[key])
            if isinstance(event.get("arguments"), str):
                event["arguments"] = restore_arguments(event["arguments"], self.restorer)
            if "item" in event:
                restore_item(event["item"], self.restorer)
            for key in ("part", "annotation"):
                if key in event:
                    restore_strings(event[key], self.restorer)
            if not etype.endswith(".done") and not any(k in event for k in ("item", "part", "annotation")):
                restore_strings(event, self.restorer)  # an event type still to come
        out.append(self._out(etype, event))
        return out

    def _flush(self, event: dict[str, Any], base: str) -> list[bytes]:
        if self.streams is None:
            return []
        ident = self._ident(event, base)
        out = []
        for _key, rest in self.streams.flush_choice(ident):
            if rest:
                delta: dict[str, Any] = {k: event[k] for k in ("item_id", "output_index", "content_index", "summary_index")
                         if k in event}  # fmt: skip
                out.append(self._out(base + ".delta", {"type": base + ".delta", "sequence_number": 0, **delta,
                                                       "delta": rest}))  # fmt: skip
        return out

    def finish(self) -> list[bytes]:
        out: list[bytes] = []
        if self.streams is not None:  # text held for a part that never sent its .done
            for ident in self.streams.held_keys():
                base = ident[3] if isinstance(ident, tuple) and len(ident) > 3 else "response.output_text"
                for _key, rest in self.streams.flush_choice(ident):
                    if rest:
                        out.append(self._out(base + ".delta", {"type": base + ".delta", "sequence_number": 0,
                                                               "delta": rest}))  # fmt: skip
        etype, event = self.terminal_event
        out.append(self._out(etype, event))
        return out

    def answer_check(self, count: PromptCount) -> str | None:
        return _empty_cut(count, self.final)

    def error_event(self, status: OutcomeKind, code: str, vendor_type: str | None) -> bytes:
        if status is OutcomeKind.INTEGRITY_ERROR:
            code, message = (
                "upstream_integrity_error",
                "the upstream's stream failed the gateway's checks and was ended",
            )
        else:
            message = f"the upstream's stream failed ({code})"
        return self._out("error", {"type": "error", "code": code, "message": message, "param": None,
                                   "sequence_number": 0})  # fmt: skip


RESPONSES = _Responses()
