"""Reading the prompt strings out of an OpenAI-style request body, and putting them back.

Only decoded strings are analysed, never the raw JSON: escapes such as ``\\u0040`` are already
resolved by the JSON parser, so an identifier cannot hide behind JSON syntax.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import Any

from .errors import ContentError
from .types import Content, Segment

__all__ = ["apply_content", "extract_content"]

Path = tuple[str | int, ...]

# Content-part types whose text reaches the model; any other part type carries no text we can
# read (images, audio by reference) and is skipped, except that unknown types with a "text" key
# are still read so that new text-bearing types do not slip through.
_TEXT_PARTS = {"text", "input_text", "output_text", "refusal"}


def _fail(what: str, path: Path) -> ContentError:
    return ContentError(f"cannot read {what} at {'/'.join(map(str, path)) or '<body>'}")


def _content_value(value: Any, path: Path) -> Iterator[Segment]:
    if value is None:
        return
    if isinstance(value, str):
        yield Segment(path, value)
        return
    if not isinstance(value, list):
        raise _fail("message content", path)
    for i, part in enumerate(value):
        ppath = (*path, i)
        if isinstance(part, str):
            yield Segment(ppath, part)
            continue
        if not isinstance(part, Mapping):
            raise _fail("content part", ppath)
        ptype = part.get("type")
        if ptype is not None and not isinstance(ptype, str):
            raise _fail("content part type", ppath)
        if ptype in _TEXT_PARTS or (ptype not in ("image_url", "input_audio", "file") and "text" in part):
            key = "refusal" if ptype == "refusal" and "refusal" in part else "text"
            text = part.get(key)
            if not isinstance(text, str):
                raise _fail("text part", ppath)
            yield Segment((*ppath, key), text)
        elif ptype == "file":
            file = part.get("file")
            if isinstance(file, Mapping) and isinstance(file.get("file_data"), str):
                # Inline file data is opaque base64 to us; refuse rather than let it pass unread.
                raise _fail("inline file data", ppath)


# Schema keywords whose string values are machine syntax the model needs intact, never prose.
_SCHEMA_SYNTAX = frozenset({"type", "$ref", "format", "name"})


def _schema_strings(value: Any, path: Path) -> Iterator[Segment]:
    """Every prose string inside a tool or response schema (descriptions, enums, defaults …)."""
    if isinstance(value, str):
        yield Segment(path, value, prompt=False)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(item, str) and key in _SCHEMA_SYNTAX:
                continue
            yield from _schema_strings(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _schema_strings(item, (*path, i))


def _definitions(body: Mapping[str, Any]) -> Iterator[Segment]:
    """Tool / function definitions and response schemas: they reach the model as prompt text."""
    for key, inner in (("tools", "function"), ("functions", None)):
        items = body.get(key)
        if items is None:
            continue
        if not isinstance(items, list):
            raise _fail(key, (key,))
        for i, item in enumerate(items):
            fn = item.get(inner) if inner and isinstance(item, Mapping) else item
            if not isinstance(fn, Mapping):
                continue  # built-in tools carry no text of the caller's
            base: Path = (key, i, inner) if inner else (key, i)
            for field in ("description", "parameters"):
                if field in fn:
                    yield from _schema_strings(fn[field], (*base, field))
    fmt = body.get("response_format")
    if isinstance(fmt, Mapping) and isinstance(fmt.get("json_schema"), Mapping):
        yield from _schema_strings(fmt["json_schema"], ("response_format", "json_schema"))


def _chat(body: Mapping[str, Any]) -> Iterator[Segment]:
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise _fail("messages", ("messages",))
    for i, msg in enumerate(messages):
        mpath: Path = ("messages", i)
        if not isinstance(msg, Mapping):
            raise _fail("message", mpath)
        yield from _content_value(msg.get("content"), (*mpath, "content"))
        if isinstance(msg.get("refusal"), str):
            yield Segment((*mpath, "refusal"), msg["refusal"])
        if isinstance(msg.get("name"), str):
            # Names reach the model and are often a person's name or login.
            yield Segment((*mpath, "name"), msg["name"])
        calls = msg.get("tool_calls")
        if calls is not None:
            if not isinstance(calls, list):
                raise _fail("tool_calls", (*mpath, "tool_calls"))
            for j, call in enumerate(calls):
                cpath: Path = (*mpath, "tool_calls", j, "function")
                fn = call.get("function") if isinstance(call, Mapping) else None
                if not isinstance(fn, Mapping):
                    raise _fail("tool call", cpath)
                args = fn.get("arguments")
                if args is not None and not isinstance(args, str):
                    raise _fail("tool call arguments", (*cpath, "arguments"))
                if args:
                    yield Segment((*cpath, "arguments"), args)
        legacy = msg.get("function_call")
        if isinstance(legacy, Mapping) and isinstance(legacy.get("arguments"), str):
            yield Segment((*mpath, "function_call", "arguments"), legacy["arguments"])
    yield from _definitions(body)


def _completions(body: Mapping[str, Any]) -> Iterator[Segment]:
    prompt = body.get("prompt")
    if isinstance(prompt, str):
        yield Segment(("prompt",), prompt)
    elif isinstance(prompt, list):
        for i, item in enumerate(prompt):
            if isinstance(item, str):
                yield Segment(("prompt", i), item)
            elif isinstance(item, int) or (
                isinstance(item, list) and all(isinstance(t, int) for t in item)
            ):
                continue  # token ids carry no text we could read
            else:
                raise _fail("prompt item", ("prompt", i))
    elif prompt is not None:
        raise _fail("prompt", ("prompt",))
    if isinstance(body.get("suffix"), str):
        yield Segment(("suffix",), body["suffix"])


def _embeddings(body: Mapping[str, Any]) -> Iterator[Segment]:
    value = body.get("input")
    if isinstance(value, str):
        yield Segment(("input",), value)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, str):
                yield Segment(("input", i), item)
            elif isinstance(item, int) or (
                isinstance(item, list) and all(isinstance(t, int) for t in item)
            ):
                continue
            else:
                raise _fail("input item", ("input", i))
    else:
        raise _fail("input", ("input",))


_READERS = {"chat": _chat, "completions": _completions, "embeddings": _embeddings}

# Keys whose string values are protocol syntax the upstream needs verbatim, never prose.
_PROTOCOL_KEYS = frozenset({"model", "role", "type", "id", "tool_call_id", "tool_choice", "$ref",
                            "format", "encoding_format", "reasoning_effort", "service_tier", "detail"})
# Nesting deeper than this is refused rather than walked (and no real request comes close).
MAX_DEPTH = 64


def _everything_else(body: Mapping[str, Any], seen: set[Path]) -> Iterator[Segment]:
    """Every other string of the body, wherever it sits: fields the readers above do not know
    (``user``, ``metadata``, a vendor extension, an unknown message field …) still reach the
    upstream, so they are analysed and stripped like the prompt itself (fail closed)."""
    stack: list[tuple[Path, Any]] = [((), body)]  # depth-first, in document order
    while stack:
        path, value = stack.pop()
        if len(path) > MAX_DEPTH:
            raise ContentError(f"the request nests deeper than {MAX_DEPTH} levels")
        if isinstance(value, str):
            if path not in seen and not value.startswith("data:"):  # inline media: opaque bytes
                yield Segment(path, value, prompt=False)
        elif isinstance(value, Mapping):
            children = [
                ((*path, key), item)
                for key, item in value.items()
                # base64 audio is opaque to us; protocol syntax must reach the upstream verbatim
                if key != "input_audio" and not (isinstance(item, str) and key in _PROTOCOL_KEYS)
            ]
            stack.extend(reversed(children))
        elif isinstance(value, list):
            stack.extend(reversed([((*path, i), item) for i, item in enumerate(value)]))


def extract_content(endpoint: str, body: Mapping[str, Any]) -> Content:
    """Every string of ``body`` that reaches the model, with its JSON path, in request order.

    ``endpoint`` is ``"chat"``, ``"completions"`` or ``"embeddings"``. Raises :class:`ContentError`
    on a shape that cannot be read (fail closed: an unreadable body is never forwarded).
    """
    reader = _READERS.get(endpoint)
    if reader is None:
        raise ContentError(f"unknown endpoint kind {endpoint!r}")
    if not isinstance(body, Mapping):
        raise _fail("request body", ())
    known = tuple(reader(body))
    rest = tuple(_everything_else(body, {seg.path for seg in known}))
    return Content(known + rest)


def apply_content(body: Mapping[str, Any], content: Content) -> dict[str, Any]:
    """A deep copy of ``body`` with each segment's text written back at its path."""
    new = copy.deepcopy(dict(body))
    for seg in content.segments:
        if not seg.path:
            raise ContentError("segment without a path")
        parent: Any = new
        try:
            for key in seg.path[:-1]:
                parent = parent[key]
            if not isinstance(parent[seg.path[-1]], str):
                raise TypeError
            parent[seg.path[-1]] = seg.text
        except (KeyError, IndexError, TypeError) as exc:
            raise _fail("segment path", seg.path) from exc
    return new
