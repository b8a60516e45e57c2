"""extract_content / apply_content: every string that reaches the model, and nothing else."""

from __future__ import annotations

import pytest

from tiers import Content, ContentError, Segment, apply_content, extract_content

CHAT = {
    "model": "gpt-x",
    "messages": [
        {"role": "system", "content": "be brief"},
        {"role": "user", "name": "alice", "content": [
            {"type": "text", "text": "look at this"},
            {"type": "image_url", "image_url": {"url": "https://example.org/a.png"}},
            {"type": "text", "text": "and this"},
        ]},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\": \"x\"}"}},
        ]},
        {"role": "tool", "tool_call_id": "c1", "content": "result text"},
    ],
}


def test_chat_paths_in_order() -> None:
    """Chat: string content, text parts, names, tool-call arguments and tool results, in order."""
    c = extract_content("chat", CHAT)
    assert [(s.path, s.text) for s in c.segments] == [
        (("messages", 0, "content"), "be brief"),
        (("messages", 1, "content", 0, "text"), "look at this"),
        (("messages", 1, "content", 2, "text"), "and this"),
        (("messages", 1, "name"), "alice"),
        (("messages", 2, "tool_calls", 0, "function", "arguments"), "{\"q\": \"x\"}"),
        (("messages", 3, "content"), "result text"),
        # Then every other string that reaches the upstream, protocol syntax (role, id, type) aside.
        (("messages", 1, "content", 1, "image_url", "url"), "https://example.org/a.png"),
        (("messages", 2, "tool_calls", 0, "function", "name"), "lookup"),
    ]


def test_strings_in_fields_no_reader_knows_are_still_extracted() -> None:
    """Unknown message fields, ``user`` and ``metadata`` reach the upstream, so they are analysed;
    inline media and protocol syntax are not."""
    body = {
        "model": "m", "user": "jane@corp.example.com", "metadata": {"ticket": "T-1"},
        "messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            {"type": "input_audio", "input_audio": {"data": "UklGR", "format": "wav"}},
        ], "notes": ["SSN 078-05-1120"]}],
    }
    got = [(s.path, s.text) for s in extract_content("chat", body).segments]
    assert got == [
        (("user",), "jane@corp.example.com"),
        (("metadata", "ticket"), "T-1"),
        (("messages", 0, "notes", 0), "SSN 078-05-1120"),
    ]


def test_nesting_deeper_than_the_bound_is_refused() -> None:
    """A body nested thousands of levels deep is a ContentError (400), never a RecursionError."""
    deep: object = "x"
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(ContentError):
        extract_content("chat", {"model": "m", "messages": [{"role": "user", "content": "hi"}], "x": deep})
    with pytest.raises(ContentError):
        extract_content("chat", {"model": "m", "messages": [{"role": "user", "content": [{"type": {"a": 1}}]}]})


@pytest.mark.parametrize(
    ("endpoint", "body", "expected"),
    [
        ("completions", {"prompt": "hello"}, [(("prompt",), "hello")]),
        ("completions", {"prompt": ["a", "b"]}, [(("prompt", 0), "a"), (("prompt", 1), "b")]),
        ("completions", {"prompt": [[1, 2, 3]]}, []),
        ("completions", {"prompt": "x", "suffix": "y"}, [(("prompt",), "x"), (("suffix",), "y")]),
        ("embeddings", {"input": "doc"}, [(("input",), "doc")]),
        ("embeddings", {"input": ["d1", "d2"]}, [(("input", 0), "d1"), (("input", 1), "d2")]),
        ("embeddings", {"input": [5, 6]}, []),
    ],
)
def test_completion_and_embedding_shapes(endpoint: str, body: dict, expected: list) -> None:
    """Completion prompts (str / list / token ids) and embedding inputs are read by path."""
    assert [(s.path, s.text) for s in extract_content(endpoint, body).segments] == expected


@pytest.mark.parametrize(
    ("endpoint", "body"),
    [
        ("chat", {}),
        ("chat", {"messages": "hi"}),
        ("chat", {"messages": [5]}),
        ("chat", {"messages": [{"role": "user", "content": 5}]}),
        ("chat", {"messages": [{"role": "user", "content": [{"type": "text", "text": 3}]}]}),
        ("chat", {"messages": [{"role": "assistant", "tool_calls": [{"function": {"arguments": {"a": 1}}}]}]}),
        ("completions", {"prompt": {"a": 1}}),
        ("embeddings", {"input": {"a": 1}}),
        ("embeddings", {}),
        ("rerank", {"input": "x"}),
    ],
)
def test_unreadable_shapes_raise(endpoint: str, body: dict) -> None:
    """Shapes that cannot be read raise ContentError (a ValueError with status 400)."""
    with pytest.raises(ContentError) as info:
        extract_content(endpoint, body)
    assert isinstance(info.value, ValueError) and info.value.status_code == 400


def test_apply_content_writes_back_by_path_on_a_copy() -> None:
    """apply_content puts each segment's text back at its path in a deep copy."""
    c = extract_content("chat", CHAT)
    changed = Content(tuple(Segment(s.path, s.text.upper(), s.prompt) for s in c.segments))
    new = apply_content(CHAT, changed)
    assert new["messages"][1]["content"][2]["text"] == "AND THIS"
    assert new["messages"][2]["tool_calls"][0]["function"]["arguments"] == "{\"Q\": \"X\"}"
    assert new["messages"][1]["name"] == "ALICE"
    assert CHAT["messages"][1]["content"][2]["text"] == "and this"
    assert extract_content("chat", new) == changed


def test_apply_content_rejects_a_path_that_is_not_a_string() -> None:
    """A segment path that does not address a string in the body raises ContentError."""
    with pytest.raises(ContentError):
        apply_content({"prompt": [1]}, Content((Segment(("prompt", 0), "x"),)))


def test_tool_definitions_and_response_schemas_are_read_and_written_back() -> None:
    """Tool descriptions, schema prose and enums reach the model, so they are analysed and stripped."""
    body = {
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [
            {"type": "function", "function": {
                "name": "notify",
                "description": "Mail ops-lead@corp.example.com",
                "parameters": {"type": "object", "properties": {
                    "name": {"type": "string", "description": "who", "enum": ["Jane Roe"]},
                }},
            }},
            {"type": "code_interpreter"},
        ],
        "response_format": {"type": "json_schema", "json_schema": {
            "name": "answer", "schema": {"type": "object", "description": "for batch LOT-42"}}},
    }
    content = extract_content("chat", body)
    paths = [s.path for s in content.segments]
    assert paths == [
        ("messages", 0, "content"),
        ("tools", 0, "function", "description"),
        ("tools", 0, "function", "parameters", "properties", "name", "description"),
        ("tools", 0, "function", "parameters", "properties", "name", "enum", 0),
        ("response_format", "json_schema", "schema", "description"),
        # names are read too (the sweep over every other string), and left as they are if clean
        ("tools", 0, "function", "name"),
        ("response_format", "json_schema", "name"),
    ]
    # Schema syntax ("type", "name") is left for the model untouched.
    assert "object" not in [s.text for s in content.segments]
    redacted = Content(tuple(
        Segment(s.path, s.text if s.path[-1] == "name" else s.text.upper()) for s in content.segments
    ))
    out = apply_content(body, redacted)
    assert out["tools"][0]["function"]["description"] == "MAIL OPS-LEAD@CORP.EXAMPLE.COM"
    assert out["tools"][0]["function"]["name"] == "notify"
    assert out["tools"][0]["function"]["parameters"]["properties"]["name"]["enum"] == ["JANE ROE"]
    assert body["tools"][0]["function"]["description"] == "Mail ops-lead@corp.example.com"
