"""Scripts that make the fake vendor behave like a model driving a coding agent.

Asked about files by name, the "model" calls the agent's read tool on each of them (Claude Code's
``Read``, Codex's ``exec_command``); shown the tool results, it answers by listing every
placeholder it was shown, so the agent's answer proves what was stripped and what was restored.

:func:`compacting_script` reads the files one a turn instead, so a long session grows round by
round (Claude Code can only compact a conversation of several rounds), and answers Claude Code's
compaction request ("Your task is to create a detailed summary…") with a summary.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tests.support.fake_upstream import Received, Scripted

__all__ = ["PLACEHOLDER", "SUMMARY_REQUEST", "agent_script", "compacting_script"]

PLACEHOLDER = re.compile(r"<[A-Z][A-Z0-9_]*_[0-9]+>")
# The opening of Claude Code 2.1's compaction prompt (its reactive and manual compaction alike).
SUMMARY_REQUEST = "Your task is to create a detailed summary"


def _listing(seen: Any) -> str:
    text = json.dumps(seen, ensure_ascii=False)
    found = list(dict.fromkeys(PLACEHOLDER.findall(text)))
    return "Found: " + (", ".join(found) if found else "nothing to hide") + "."


def _claude(r: Received, work: Path, files: Sequence[str]) -> Scripted:
    if r.path.endswith("/count_tokens"):
        return Scripted()
    # Claude Code may end the list with a system message (its mid-conversation-system beta).
    last = [m for m in r.body["messages"] if isinstance(m, dict) and m.get("role") == "user"][-1]
    content = last.get("content")
    results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"] if isinstance(
        content, list) else []  # fmt: skip
    if results:
        return Scripted(content=_listing([b.get("content") for b in results]))
    asked = [f for f in files if f in json.dumps(last)]
    calls = [{"id": f"toolu_{r.seq}_{i}", "function": {"name": "Read", "arguments": json.dumps({"file_path": str(work / f)})}}
             for i, f in enumerate(asked)]  # fmt: skip
    return Scripted(content="" if calls else "Nothing to read.", tool_calls=calls or None)


def _codex(r: Received, work: Path, files: Sequence[str]) -> Scripted:
    items = r.body.get("input") or []
    outputs = [i.get("output") for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"]
    if outputs:
        return Scripted(content=_listing(outputs))
    users = [i for i in items if isinstance(i, dict) and i.get("role") == "user"]
    asked = [f for f in files if users and f in json.dumps(users[-1])]
    if not asked:
        return Scripted(content=_listing(users[-1:]))
    cmd = "cat " + " ".join(asked)
    return Scripted(content="", tool_calls=[{"id": f"call_{r.seq}", "function": {
        "name": "exec_command", "arguments": json.dumps({"cmd": cmd, "workdir": str(work)})}}])  # fmt: skip


def agent_script(work: Path, files: Sequence[str]) -> Callable[[Received], Scripted]:
    """One script for every protocol the agents speak (Anthropic Messages, Responses)."""

    def script(r: Received) -> Scripted:
        if r.path.endswith("/responses"):
            return _codex(r, work, files)
        return _claude(r, work, files)

    return script


def _read_marker(name: str) -> str:
    return f"[read:{name}]"


def compacting_script(work: Path, files: Sequence[str]) -> Callable[[Received], Scripted]:
    """Claude Code only: one ``Read`` a turn, in the order of ``files``, of those the user named;
    the answer lists every placeholder in the user turns. Asked to compact, the "model" summarises:
    which files were asked for, which were read (a summary replaces the rounds that read them), and
    the placeholders it saw, so the compacted session still ends with every identifier."""

    def script(r: Received) -> Scripted:
        if r.path.endswith("/count_tokens"):
            return Scripted()
        everything = json.dumps(r.body["messages"])
        users = [m for m in r.body["messages"] if isinstance(m, dict) and m.get("role") == "user"]
        said = json.dumps(users)
        # read in this conversation (a Read call names the path) or in the rounds a summary replaced
        read = [f for f in files if str(work / f) in everything or _read_marker(f) in said]
        if SUMMARY_REQUEST in json.dumps(users[-1]):
            asked = ", ".join(f for f in files if f in said)
            marks = "".join(_read_marker(f) for f in read)
            return Scripted(content=f"<summary>Asked to read {asked}. {marks} {_listing(users)}</summary>")
        todo = [f for f in files if f in said and f not in read]
        if not todo:
            return Scripted(content=_listing(users))
        args = json.dumps({"file_path": str(work / todo[0])})
        return Scripted(
            content="", tool_calls=[{"id": f"toolu_{r.seq}", "function": {"name": "Read", "arguments": args}}]
        )

    return script
