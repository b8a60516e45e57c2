"""Put the client's identifiers back into the upstream's answer (plain, streamed, tool calls).

The placeholder mapping lives in these objects only, for the life of one request.
"""

from __future__ import annotations

import json
from typing import Any

from tiers import Restorer, StreamRestorer

__all__ = ["Restorers", "restore_arguments", "restore_response"]

StreamKey = tuple[Any, ...]  # (choice index, "content" | "text" | "tool", [tool-call index])


class Restorers:
    """One streaming restorer per (choice, field), created on first use.

    Streamed tool-call arguments are fragments of a JSON document, so a placeholder there sits
    inside a JSON string literal: its original goes back JSON-escaped (an identifier holding a
    quote or a backslash must not break the client's ``json.loads``). Whole arguments are
    restored in the decoded JSON instead (:func:`restore_response`)."""

    def __init__(self, mapping: dict[str, str]) -> None:
        self._mapping = mapping
        self._escaped: dict[str, str] | None = None
        self._streams: dict[StreamKey, StreamRestorer] = {}

    def feed(self, key: StreamKey, text: str) -> str:
        stream = self._streams.get(key)
        if stream is None:
            mapping = self._mapping
            if key[1] == "tool":
                if self._escaped is None:
                    self._escaped = {k: json.dumps(v, ensure_ascii=False)[1:-1] for k, v in self._mapping.items()}
                mapping = self._escaped
            stream = self._streams[key] = StreamRestorer(mapping)
        return stream.feed(text)

    def pending_choices(self) -> list[int]:
        """Choices whose restorers still hold text (a stream that ended without finish_reason)."""
        return sorted({k[0] for k in self._streams})

    def held_keys(self) -> list[Any]:
        """The first key element of every restorer still open, in the order they were opened."""
        return list(dict.fromkeys(k[0] for k in self._streams))

    def flush_choice(self, index: Any) -> list[tuple[StreamKey, str]]:
        out = []
        for key in [k for k in self._streams if k[0] == index]:
            out.append((key, self._streams.pop(key).flush()))
        return out


def _restore_json_strings(value: Any, restorer: Restorer) -> Any:
    if isinstance(value, str):
        return restorer.restore(value)
    if isinstance(value, list):
        return [_restore_json_strings(v, restorer) for v in value]
    if isinstance(value, dict):
        return {k: _restore_json_strings(v, restorer) for k, v in value.items()}
    return value


def restore_arguments(arguments: str, restorer: Restorer) -> str:
    """Restore inside the decoded JSON so that a value needing escapes stays valid JSON."""
    try:
        decoded = json.loads(arguments)
    except ValueError:
        return restorer.restore(arguments)
    return json.dumps(_restore_json_strings(decoded, restorer), ensure_ascii=False)


def _restore_message(message: dict[str, Any], restorer: Restorer) -> None:
    content = message.get("content")
    if isinstance(content, str):
        message["content"] = restorer.restore(content)
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                part["text"] = restorer.restore(part["text"])
    for call in message.get("tool_calls") or ():
        fn = call.get("function") if isinstance(call, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("arguments"), str):
            fn["arguments"] = restore_arguments(fn["arguments"], restorer)
    fn = message.get("function_call")
    if isinstance(fn, dict) and isinstance(fn.get("arguments"), str):
        fn["arguments"] = restore_arguments(fn["arguments"], restorer)
    if isinstance(message.get("refusal"), str):
        message["refusal"] = restorer.restore(message["refusal"])


def restore_response(body: dict[str, Any], mapping: dict[str, str]) -> dict[str, Any]:
    """Restore placeholders in a chat or completions response body, in place; returns it."""
    if not mapping:
        return body
    restorer = Restorer(mapping)
    for choice in body.get("choices") or ():
        if not isinstance(choice, dict):
            continue
        if isinstance(choice.get("message"), dict):
            _restore_message(choice["message"], restorer)
        if isinstance(choice.get("text"), str):
            choice["text"] = restorer.restore(choice["text"])
    return body
