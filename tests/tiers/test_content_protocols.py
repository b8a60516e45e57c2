"""The content schemas of Anthropic Messages and OpenAI Responses: every string the upstream
receives is read (vendor state too), protocol keywords are left out, nothing unknown is skipped."""

from __future__ import annotations

import base64
from dataclasses import replace

import pytest

from tiers import ContentError, StripError, apply_content, extract_content

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(64)).decode()
MESSAGES = {
    "model": "claude-x", "max_tokens": 100, "stream": True,
    "messages": [
        {"role": "user", "content": [
            {"type": "text", "text": "see the doc", "cache_control": {"type": "ephemeral", "ttl": "1h"}},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
            {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "plain doc"},
             "title": "Doc title"},
            {"type": "document", "source": {"type": "base64", "media_type": "text/plain",
                                            "data": base64.b64encode(b"encoded doc").decode()}},
        ]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "reasoning", "signature": "c2ln"},
            {"type": "redacted_thinking", "data": "ZW5j"},
            {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "/a/b"}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "file body"}]},
            {"type": "search_result", "source": "https://example.org", "title": "T", "content": [
                {"type": "text", "text": "found"}]},
        ]},
    ],
    "tools": [{"name": "Read", "description": "reads", "input_schema": {"type": "object"}}],
    "system": "be brief",
    "metadata": {"user_id": "u-1"},
}  # fmt: skip


def test_messages_every_string_in_reading_order() -> None:
    """System and tools first (whatever the key order), then the history: text, image (opaque),
    plain and base64 text documents, thinking and its signature as vendor state, tool input,
    tool results, and a block type this schema does not know, read whole."""
    c = extract_content("messages", MESSAGES)
    got = [(s.path, s.text, s.kind) for s in c.segments]
    assert got[:3] == [(("system",), "be brief", "text"), (("tools", 0, "name"), "Read", "text"),
                       (("tools", 0, "description"), "reads", "text")]  # fmt: skip
    texts = {(s.path, s.text, s.kind) for s in c.segments}
    m = "messages"
    for expected in [
        ((m, 0, "content", 0, "text"), "see the doc", "text"),
        ((m, 0, "content", 2, "source", "data"), "plain doc", "text"),
        ((m, 0, "content", 2, "title"), "Doc title", "text"),
        ((m, 0, "content", 3, "source", "data"), "encoded doc", "file"),
        ((m, 1, "content", 0, "thinking"), "reasoning", "state"),
        ((m, 1, "content", 0, "signature"), "c2ln", "state"),
        ((m, 1, "content", 1, "data"), "ZW5j", "state"),
        ((m, 1, "content", 2, "input", "file_path"), "/a/b", "text"),
        ((m, 2, "content", 0, "content", 0, "text"), "file body", "text"),
        ((m, 2, "content", 1, "source"), "https://example.org", "text"),
        ((m, 2, "content", 1, "content", 0, "text"), "found", "text"),
        (("metadata", "user_id"), "u-1", "text"),
    ]:
        assert expected in texts, expected
    assert not any(s.text in ("ephemeral", "1h", "base64", "image/png", "user", "assistant") and s.kind == "text"
                   and s.path[-1] in ("type", "media_type", "role") for s in c.segments)  # fmt: skip
    assert [(o.path, o.what) for o in c.opaque] == [((m, 0, "content", 1, "source", "data"), "image content")]
    assert not any(s.prompt for s in c.segments if s.kind == "state")


RESPONSES = {
    "model": "gpt-x", "stream": True, "store": False, "previous_response_id": "resp_1",
    "input": [
        {"role": "user", "content": [{"type": "input_text", "text": "hello"},
                                     {"type": "input_file", "filename": "a.txt",
                                      "file_data": "data:text/plain;base64," + base64.b64encode(b"file text").decode()}]},
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "thought"}],
         "encrypted_content": "gAAA"},
        {"type": "function_call", "call_id": "c1", "name": "exec", "arguments": '{"cmd": "ls"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "a.txt"},
        {"type": "compaction", "encrypted_content": "zzz"},
        {"type": "local_shell_call", "action": {"command": ["cat", "x"]}},
    ],
    "instructions": "be a coder",
    "tools": [{"type": "function", "name": "exec", "parameters": {"type": "object"}}],
}  # fmt: skip


def test_responses_every_string_in_reading_order() -> None:
    c = extract_content("responses", RESPONSES)
    got = {(s.path, s.text, s.kind) for s in c.segments}
    assert c.segments[0].path == ("instructions",)
    for expected in [
        (("input", 0, "content", 0, "text"), "hello", "text"),
        (("input", 0, "content", 1, "file_data"), "file text", "file"),
        (("input", 1, "summary", 0, "text"), "thought", "text"),
        (("input", 1, "encrypted_content"), "gAAA", "state"),
        (("input", 2, "arguments"), '{"cmd": "ls"}', "text"),
        (("input", 3, "output"), "a.txt", "text"),
        (("input", 4, "encrypted_content"), "zzz", "state"),
        (("input", 5, "action", "command", 1), "x", "text"),
        (("previous_response_id",), "resp_1", "text"),
    ]:
        assert expected in got, expected


def test_vendor_state_is_never_written_back() -> None:
    c = extract_content("messages", MESSAGES)
    i = next(n for n, s in enumerate(c.segments) if s.kind == "state")
    changed = c.segments[:i] + (replace(c.segments[i], text="edited"),) + c.segments[i + 1 :]
    with pytest.raises(StripError):
        apply_content(MESSAGES, replace(c, segments=changed), c)


def test_unreadable_shapes_raise() -> None:
    with pytest.raises(ContentError):
        extract_content("messages", {"model": "m", "messages": "hi"})
    with pytest.raises(ContentError):
        extract_content("messages", {"model": "m", "messages": [{"role": "user", "content": 5}]})
    with pytest.raises(ContentError):
        extract_content("responses", {"model": "m", "input": 5})
