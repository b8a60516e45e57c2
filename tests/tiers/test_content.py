"""extract_content / apply_content: every string that reaches the model, and nothing else."""

from __future__ import annotations

import base64
from dataclasses import replace

import pytest

from tiers import Content, ContentError, Segment, apply_content, extract_content

CHAT = {
    "model": "gpt-x",
    "messages": [
        {"role": "system", "content": "be brief"},
        {
            "role": "user",
            "name": "alice",
            "content": [
                {"type": "text", "text": "look at this"},
                {"type": "image_url", "image_url": {"url": "https://example.org/a.png"}},
                {"type": "text", "text": "and this"},
            ],
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "x"}'}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "result text"},
    ],
}


def test_chat_paths_in_order() -> None:
    """Chat, in document order: string content, text parts, names, tool-call ids, names and
    arguments, tool results, and the image link; protocol keywords (role, type) left out."""
    c = extract_content("chat", CHAT)
    assert [(s.path, s.text, s.kind) for s in c.segments] == [
        (("messages", 0, "content"), "be brief", "text"),
        (("messages", 1, "name"), "alice", "text"),
        (("messages", 1, "content", 0, "text"), "look at this", "text"),
        (("messages", 1, "content", 1, "image_url", "url"), "https://example.org/a.png", "text"),
        (("messages", 1, "content", 2, "text"), "and this", "text"),
        (("messages", 2, "tool_calls", 0, "id"), "c1", "text"),
        (("messages", 2, "tool_calls", 0, "function", "name"), "lookup", "text"),
        (("messages", 2, "tool_calls", 0, "function", "arguments"), '{"q": "x"}', "text"),
        (("messages", 3, "tool_call_id"), "c1", "text"),
        (("messages", 3, "content"), "result text", "text"),
    ]
    prompt = [s.path for s in c.segments if s.prompt]
    assert ("messages", 1, "content", 1, "image_url", "url") not in prompt
    assert ("messages", 2, "tool_calls", 0, "function", "arguments") in prompt


def test_fields_no_schema_names_are_read_whole() -> None:
    """Unknown message fields, ``user`` and ``metadata`` reach the upstream: every key, string and
    long number of them is read, whatever the key is called (``id``, ``type``, ``model`` deep
    inside metadata are not protocol); audio is opaque."""
    body = {
        "model": "m",
        "user": "jane@corp.example.com",
        "metadata": {
            "ticket": "T-1",
            "inner": {"id": "4556017283906414", "type": "x y"},
            "n": 4556017283906414,
            "small": 12345,
            "jane@corp.example.com": True,
        },
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "input_audio", "input_audio": {"data": "UklGR", "format": "wav"}},
                ],
                "notes": ["SSN 078-05-1120"],
            }
        ],
    }
    c = extract_content("chat", body)
    got = [(s.path, s.text, s.kind) for s in c.segments]
    assert got == [
        (("user",), "jane@corp.example.com", "text"),
        (("metadata", "ticket"), "ticket", "key"),
        (("metadata", "ticket"), "T-1", "text"),
        (("metadata", "inner"), "inner", "key"),
        (("metadata", "inner", "id"), "id", "key"),
        (("metadata", "inner", "type"), "type", "key"),
        (("metadata", "inner", "id"), "4556017283906414", "text"),
        (("metadata", "inner", "type"), "x y", "text"),
        (("metadata", "n"), "n", "key"),
        (("metadata", "n"), "4556017283906414", "number"),
        (("metadata", "small"), "small", "key"),
        (("metadata", "jane@corp.example.com"), "jane@corp.example.com", "key"),
        (("messages", 0, "notes"), "notes", "key"),
        (("messages", 0, "notes", 0), "SSN 078-05-1120", "text"),
    ]
    assert [(o.path, o.what) for o in c.opaque] == [(("messages", 0, "content", 0, "input_audio", "data"), "audio")]


def test_a_keyword_at_a_schema_path_is_read_when_it_is_not_a_keyword() -> None:
    """``role`` and ``type`` are left out only while they look like protocol keywords."""
    body = {
        "model": "m",
        "messages": [{"role": "jane@corp.example.com", "content": [{"type": "4556 0172 8390 6414", "text": "hi"}]}],
    }
    texts = [s.text for s in extract_content("chat", body).segments]
    assert "jane@corp.example.com" in texts and "4556 0172 8390 6414" in texts


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.mark.parametrize(
    ("part", "kind"),
    [
        ({"type": "file", "file": {"file_data": "data:text/plain;base64," + _b64(b"IBAN here")}}, "file"),
        ({"type": "file", "file": {"file_data": _b64(b"IBAN here")}}, "file"),
        ({"type": "file", "file": {"file_data": [_b64(b"IBAN here")[:4], _b64(b"IBAN here")[4:]]}}, "file"),
        # padding inside the join: each chunk decoded, all of it read (a lenient decoder of the
        # join would stop at the padding, and miss the rest a vendor may read)
        ({"type": "file", "file": {"file_data": ["YQ==", _b64(b"IBAN here")]}}, "file"),
        ({"type": "input_file", "file_data": "data:application/json;base64," + _b64(b'{"a": "IBAN here"}')}, "file"),
        ({"type": "file", "file": "data:text/csv,IBAN%20here"}, "file"),
        ({"type": "image_url", "image_url": {"url": "data:text/plain;base64," + _b64(b"IBAN here")}}, "file"),
        (
            {
                "type": "image_url",
                "image_url": "data:text/markdown;charset=latin-1;base64," + _b64("IBAN here é".encode("latin-1")),
            },
            "file",
        ),
    ],
)
def test_inline_text_files_are_decoded_and_read(part: dict, kind: str | None) -> None:
    """Inline files in every shape clients send: text-like data is decoded and read."""
    c = extract_content("chat", {"model": "m", "messages": [{"role": "user", "content": [part]}]})
    assert any("IBAN" in s.text and (kind is None or s.kind == kind) for s in c.segments), c
    assert not c.opaque


@pytest.mark.parametrize(
    "part",
    [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        {"type": "file", "file": {"file_data": "data:application/octet-stream;base64,AAECAwQF"}},
        {"type": "file", "file": {"file_data": _b64(bytes(range(256)))}},
        {"type": "file", "file": {"file_data": "not base64 at all!!"}},
        {"type": "file", "file": {"file_data": "data:text/plain;charset=utf-16;base64," + _b64(b"IBAN here")}},
        {"type": "file", "file": {"file_data": _b64(b"\n%PDF-1.4 (IBAN here)")}},
        {"type": "input_audio", "input_audio": {"data": _b64(b"my card is 4556 0172 8390 6414"), "format": "wav"}},
    ],
)
def test_what_cannot_be_read_is_opaque(part: dict) -> None:
    """Images, audio, binary and undecodable files are opaque (the UNREADABLE entity), never skipped."""
    c = extract_content("chat", {"model": "m", "messages": [{"role": "user", "content": [part]}]})
    assert len(c.opaque) == 1


def test_token_ids_are_decoded_or_opaque() -> None:
    """Token ids are read through the upstream's tokenizer; without one, or with an id it does not
    know, they are opaque."""
    decode = lambda ids: None if max(ids) > 255 else bytes(ids).decode("latin-1")
    body = {"model": "m", "prompt": list(b"IBAN DE89")}
    c = extract_content("completions", body, decode_tokens=decode)
    assert [(s.path, s.text, s.kind) for s in c.segments] == [(("prompt",), "IBAN DE89", "tokens")]
    assert extract_content("completions", body).opaque[0].what == "token ids without a tokenizer"
    assert extract_content("embeddings", {"input": [[300, 1]]}, decode_tokens=decode).opaque[0].what == "token ids"


def test_stripped_keys_numbers_files_and_tokens_are_written_back() -> None:
    """apply_content writes a changed key as a renamed key (order kept), a changed number as a
    string, a changed file re-encoded as it came, changed token ids as text (with their siblings)."""
    body = {
        "model": "m",
        "metadata": {"a": 1, "jane@x.org": 2, "n": 4556017283906414},
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "file", "file": {"file_data": "data:text/plain;base64," + _b64(b"mail jane@x.org")}}
                ],
            }
        ],
    }
    c = extract_content("chat", body)
    swapped = Content(
        tuple(
            replace(s, text=s.text.replace("jane@x.org", "<EMAIL_1>").replace("4556017283906414", "<CARD_1>"))
            for s in c.segments
        ),
        c.opaque,
    )
    out = apply_content(body, swapped, c)
    assert list(out["metadata"]) == ["a", "<EMAIL_1>", "n"] and out["metadata"]["n"] == "<CARD_1>"
    data = out["messages"][0]["content"][0]["file"]["file_data"]
    assert data.startswith("data:text/plain;base64,") and base64.b64decode(data.split(",", 1)[1]) == b"mail <EMAIL_1>"
    assert body["metadata"]["n"] == 4556017283906414  # the original is untouched
    emb = {"input": [list(b"a@b.io"), list(b"hello")]}
    decode = lambda ids: bytes(ids).decode()
    c2 = extract_content("embeddings", emb, decode_tokens=decode)
    swapped2 = Content(tuple(replace(s, text=s.text.replace("a@b.io", "<EMAIL_1>")) for s in c2.segments))
    assert apply_content(emb, swapped2, c2)["input"] == ["<EMAIL_1>", "hello"]
    assert apply_content(emb, c2, c2)["input"] == emb["input"]  # unchanged: still token ids


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
    assert new["messages"][2]["tool_calls"][0]["function"]["arguments"] == '{"Q": "X"}'
    assert new["messages"][1]["name"] == "ALICE"
    assert CHAT["messages"][1]["content"][2]["text"] == "and this"
    assert extract_content("chat", new) == changed


def test_apply_content_rejects_a_path_that_is_not_a_string() -> None:
    """A segment path that does not address a string in the body raises ContentError."""
    with pytest.raises(ContentError):
        apply_content({"prompt": [1]}, Content((Segment(("prompt", 0), "x"),)))


def test_tool_definitions_and_response_schemas_are_read_and_written_back() -> None:
    """Tool schemas reach the model: names, descriptions, property names (keys), enums and every
    other string in them are read, and stripped ones are written back."""
    body = {
        "messages": [{"role": "user", "content": "hi"}],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "notify",
                    "description": "Mail ops-lead@corp.example.com",
                    "parameters": {
                        "type": "object",
                        "properties": {
                            "Jane Roe": {"type": "string", "description": "who", "enum": ["Jane Roe"]},
                        },
                    },
                },
            },
            {"type": "code_interpreter"},
        ],
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "answer", "schema": {"type": "object", "description": "for batch LOT-42"}},
        },
    }
    content = extract_content("chat", body)
    by_path = {(s.path, s.kind): s.text for s in content.segments}
    base = ("tools", 0, "function")
    assert by_path[((*base, "description"), "text")] == "Mail ops-lead@corp.example.com"
    assert by_path[((*base, "parameters", "properties", "Jane Roe"), "key")] == "Jane Roe"
    assert by_path[((*base, "parameters", "properties", "Jane Roe", "enum", 0), "text")] == "Jane Roe"
    assert by_path[(("response_format", "json_schema", "schema", "description"), "text")] == "for batch LOT-42"
    assert by_path[((*base, "name"), "text")] == "notify"
    redacted = Content(
        tuple(
            replace(s, text=s.text.replace("Jane Roe", "<NAME_1>").replace("ops-lead", "<X>")) for s in content.segments
        )
    )
    out = apply_content(body, redacted, content)
    assert out["tools"][0]["function"]["description"] == "Mail <X>@corp.example.com"
    props = out["tools"][0]["function"]["parameters"]["properties"]
    assert list(props) == ["<NAME_1>"] and props["<NAME_1>"]["enum"] == ["<NAME_1>"]
    assert out["tools"][0]["function"]["name"] == "notify"
    assert body["tools"][0]["function"]["description"] == "Mail ops-lead@corp.example.com"
