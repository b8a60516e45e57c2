"""Restoring identifiers into answers: tool-call arguments stay valid JSON whatever the identifier
holds, whole or streamed in fragments that cut placeholders anywhere."""

from __future__ import annotations

import json

from gateway.restore import Restorers, restore_response

MAPPING = {"<SECRET_1>": 'pa"ss\\word', "<EMAIL_1>": "ana@example.org"}
ARGS = json.dumps({"to": "<EMAIL_1>", "password": "<SECRET_1>", "note": "see <EMAIL_1>"})
EXPECTED = {"to": "ana@example.org", "password": 'pa"ss\\word', "note": "see ana@example.org"}


def test_whole_tool_call_arguments_stay_valid_json() -> None:
    """A non-streamed tool call: arguments parse, identifiers with quote and backslash restored."""
    body = {"choices": [{"message": {"tool_calls": [{"function": {"name": "f", "arguments": ARGS}}]}}]}
    restore_response(body, MAPPING)
    assert json.loads(body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]) == EXPECTED


def test_streamed_tool_call_arguments_stay_valid_json_at_every_cut() -> None:
    """Arguments streamed in two fragments, cut at every position: the joined text parses to the
    restored object, and plain content still gets the identifier unescaped."""
    for cut in range(1, len(ARGS)):
        restorers = Restorers(MAPPING)
        key = (0, "tool", 0)
        out = restorers.feed(key, ARGS[:cut]) + restorers.feed(key, ARGS[cut:])
        out += "".join(rest for _k, rest in restorers.flush_choice(0))
        assert json.loads(out) == EXPECTED, cut
    plain = Restorers(MAPPING)
    text = plain.feed((0, "content"), "pass: <SECRET_1>") + "".join(r for _k, r in plain.flush_choice(0))
    assert text == 'pass: pa"ss\\word'
