"""How a request's prompt is counted on a vLLM server, and the fields that would let it read less.

Public, and free of I/O: the engine front counts every request with these ``/tokenize`` bodies
before admitting it, and the gateway counts a prompt the same way on an upstream's ``/tokenize``
(``tokenize_url``) when its own estimate cannot tell whether it fits. Both drop the same
truncation fields: the one list of them is here.
"""

from __future__ import annotations

from typing import Any

__all__ = ["RESPONSES_TRUNCATION_KEY", "TRUNCATION_KEYS", "responses_tokenize_request", "tokenize_request"]

# vLLM's sampling parameters that keep only the *last* N tokens of an over-long prompt and answer
# 200: only the gateway (never a client) may decide that a prompt is read in part, and it never does.
TRUNCATION_KEYS = ("truncate_prompt_tokens", "truncation_side")
# OpenAI Responses' own ``truncation: auto``: the server may drop input items to fit.
RESPONSES_TRUNCATION_KEY = "truncation"


def tokenize_request(body: dict[str, Any], *, chat: bool) -> dict[str, Any] | None:
    """The /tokenize body that counts this request's prompt; None when it is already tokens."""
    if chat:
        request = {
            "model": body.get("model"),
            "messages": body["messages"],
            "add_generation_prompt": body.get("add_generation_prompt", True),
        }
        for key in (
            "continue_final_message",
            "tools",
            "chat_template",
            "chat_template_kwargs",
            "add_special_tokens",
        ):
            if key in body:
                request[key] = body[key]
        return request
    if isinstance(body["prompt"], list):
        return None
    request = {"model": body.get("model"), "prompt": body["prompt"]}
    if "add_special_tokens" in body:
        request["add_special_tokens"] = body["add_special_tokens"]
    return request


def _text(content: Any) -> Any:
    """A Responses message's content as the chat template reads it (parts' text joined)."""
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return content


def responses_tokenize_request(body: dict[str, Any]) -> dict[str, Any]:
    """A chat-shaped /tokenize body for a Responses request, mirroring vLLM 0.32's conversion
    (``construct_input_messages``: instructions as the system message, tool calls merged into
    the assistant message before them, tool outputs as tool messages). An approximation for item
    types it does not mirror, so the integrity check on its usage allows a band, not equality."""
    messages: list[dict[str, Any]] = []
    if body.get("instructions"):
        messages.append({"role": "system", "content": body["instructions"]})
    items = body["input"]
    if isinstance(items, str):
        messages.append({"role": "user", "content": items})
        items = []
    for item in items:
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        last = messages[-1] if messages and messages[-1].get("role") == "assistant" else None
        if kind == "message":
            messages.append({"role": item.get("role", "user"), "content": _text(item.get("content"))})
        elif kind in ("function_call", "custom_tool_call"):
            call = {
                "id": item.get("call_id"),
                "type": "function",
                "function": {"name": item.get("name"), "arguments": item.get("arguments", item.get("input", ""))},
            }
            if last is not None and "tool_calls" in last:
                last["tool_calls"].append(call)
            elif last is not None:
                last["tool_calls"] = [call]
            else:
                messages.append({"role": "assistant", "tool_calls": [call]})
        elif kind in ("function_call_output", "custom_tool_call_output"):
            messages.append({"role": "tool", "content": _text(item.get("output")), "tool_call_id": item.get("call_id")})
        elif kind == "reasoning":
            parts = item.get("content") or item.get("summary") or []
            text = parts[0].get("text", "") if parts and isinstance(parts[0], dict) else ""
            if last is not None and "reasoning" not in last:
                last["reasoning"] = text
            else:
                messages.append({"role": "assistant", "reasoning": text})
    request: dict[str, Any] = {"model": body.get("model"), "messages": messages, "add_generation_prompt": True}
    tools = [{"type": "function", "function": {k: t[k] for k in ("name", "description", "parameters") if k in t}}
             for t in body.get("tools") or () if isinstance(t, dict) and t.get("type") == "function"]  # fmt: skip
    if tools:
        request["tools"] = tools
    return request
