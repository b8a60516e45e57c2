"""The openai SDK's Responses API against a real gateway and a scripted fake Responses vendor."""

from __future__ import annotations

import base64
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

from tests.gateway.test_anthropic import ALL, EMAIL, IBAN, config
from tests.support import Scripted
from tests.support.harness import FakeUpstreams, GatewayHarness

TOOL_ARGS = '{"to": "<EMAIL_1>", "subject": "audit"}'


@pytest.fixture
def gw(fakes: FakeUpstreams, sqlite_db: str, tmp_path: Path, classifier: Any) -> Iterator[GatewayHarness]:
    with GatewayHarness(sqlite_db, tmp_path, config(fakes), classifier=classifier) as g:
        yield g


def test_response_stripped_and_restored_store_forced_false(gw: GatewayHarness, fakes: FakeUpstreams) -> None:
    """Instructions and input are stripped; output text and function-call arguments restored;
    ``store`` is false at the shared vendor whatever the client asked; truncation dropped."""
    fakes["vendor"].script = lambda r: Scripted(
        content="Sending to <EMAIL_1>.",
        tool_calls=[{"id": "call_1", "function": {"name": "mail", "arguments": TOOL_ARGS}}],
    )
    c = gw.openai(gw.create_key())
    reply = c.responses.create(model="chat", instructions=f"You help {EMAIL}.", input=f"Mail {EMAIL} now.",
                               store=True, truncation="auto")  # fmt: skip
    assert reply.output_text == f"Sending to {EMAIL}."
    call = [i for i in reply.output if i.type == "function_call"][0]
    assert call.arguments == '{"to": "' + EMAIL + '", "subject": "audit"}'
    assert reply.model == "chat"
    (seen,) = fakes["vendor"].ledger.items()
    assert seen.path == "/v1/responses" and EMAIL not in seen.text
    assert seen.body["instructions"] == "You help <EMAIL_1>." and seen.body["input"] == "Mail <EMAIL_1> now."
    assert seen.body["store"] is False and "truncation" not in seen.body
    (row,) = gw.rows("SELECT r.endpoint, r.stripped, o.status, o.usage_prompt_tokens FROM audit_requests r "
                     "JOIN audit_outcomes o USING (request_id)")  # fmt: skip
    assert row["endpoint"] == "responses" and row["stripped"] and row["status"] == "ok"
    assert row["usage_prompt_tokens"] == reply.usage.input_tokens


def test_streamed_response_restored_everywhere_text_lives(gw: GatewayHarness, fakes: FakeUpstreams) -> None:
    """Deltas (a placeholder split across them), .done events, output_item.done and the final
    response.completed output: the client sees identifiers in every one, never a placeholder."""
    fakes["vendor"].script = lambda r: Scripted(
        chunks=["Hi <EMA", "IL_1>, bye <EM", "AIL_1"], encrypted_reasoning="gAAAAB-opaque",
        tool_calls=[{"id": "call_1", "function": {"name": "mail", "arguments": TOOL_ARGS}}])  # fmt: skip
    c = gw.openai(gw.create_key())
    events = list(c.responses.create(model="chat", input=f"Greet {EMAIL}.", stream=True))
    dump = "".join(e.model_dump_json() for e in events)
    assert "<EMAIL_1>" not in dump
    deltas = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert deltas == f"Hi {EMAIL}, bye <EMAIL_1"[: -len("<EMAIL_1")] + "<EMAIL_1"  # the unfinished tail as sent
    (done,) = [e for e in events if e.type == "response.output_text.done"]
    assert done.text == deltas
    args = "".join(e.delta for e in events if e.type == "response.function_call_arguments.delta")
    assert args == '{"to": "' + EMAIL + '", "subject": "audit"}'
    final = events[-1]
    assert final.type == "response.completed" and final.response.model == "chat"
    assert final.response.output_text == deltas
    reasoning = [i for i in final.response.output if i.type == "reasoning"][0]
    assert reasoning.encrypted_content == "gAAAAB-opaque"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert EMAIL not in fakes["vendor"].ledger.raw_text()


def test_stream_helper_final_response(gw: GatewayHarness, fakes: FakeUpstreams) -> None:
    fakes["vendor"].script = lambda r: Scripted(chunks=["To <EMAIL", "_1>."])
    c = gw.openai(gw.create_key())
    with c.responses.stream(model="chat", input=[{"role": "user", "content": [
            {"type": "input_text", "text": f"Write {EMAIL}"}]}]) as s:  # fmt: skip
        final = s.get_final_response()
    assert final.output_text == f"To {EMAIL}."


def test_encrypted_reasoning_goes_back_untouched(gw: GatewayHarness, fakes: FakeUpstreams) -> None:
    """A reasoning item's encrypted_content and the history's function calls go back as sent;
    history identifiers are stripped to the same placeholders as before."""
    history = [
        {"role": "user", "content": f"Mail {EMAIL}."},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAAB-opaque+/="},
        {"type": "function_call", "call_id": "call_1", "name": "mail", "arguments": '{"to": "' + EMAIL + '"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": f"sent to {EMAIL}"},
    ]
    gw.openai(gw.create_key()).responses.create(model="chat", input=history)
    (seen,) = fakes["vendor"].ledger.bodies()
    assert seen["input"][1] == history[1]
    assert seen["input"][2]["arguments"] == '{"to": "<EMAIL_1>"}'
    assert seen["input"][3]["output"] == "sent to <EMAIL_1>"


def test_previous_response_id_needs_a_vendor_allowed_to_keep_history(
    fakes: FakeUpstreams, sqlite_db: str, tmp_path: Path, classifier: Any
) -> None:
    """No upstream may keep the conversation: refused, saying why, nothing forwarded. With
    vendor_storage_max_tier covering the tier, it goes and store passes as the client set it."""
    cfg = config(fakes, local={"protocols": ["openai"]})
    with GatewayHarness(sqlite_db, tmp_path, cfg, classifier=classifier) as g:
        with pytest.raises(openai.BadRequestError) as err:
            g.openai(g.create_key()).responses.create(model="chat", input="and then?", previous_response_id="resp_9")
        assert err.value.code == "vendor_storage_not_allowed"
        assert "history the vendor keeps" in err.value.message
        assert len(fakes["vendor"].ledger) == 0
    cfg = config(fakes, vendor={"vendor_storage_max_tier": 1}, local={"protocols": ["openai"]})
    with GatewayHarness(sqlite_db, tmp_path / "b", cfg, classifier=classifier) as g:
        c = g.openai(g.create_key())
        c.responses.create(model="chat", input="and then?", previous_response_id="resp_9", store=True)
        assert fakes["vendor"].ledger.bodies()[-1]["store"] is True
        with pytest.raises(openai.BadRequestError):  # Tier 2: above what this vendor may keep
            c.responses.create(model="chat", input=f"and {EMAIL}?", previous_response_id="resp_9")


def test_tier3_and_too_long(fakes: FakeUpstreams, sqlite_db: str, tmp_path: Path, classifier: Any) -> None:
    """Tier 3 goes on-prem only; a prompt too long everywhere is OpenAI's context_length_exceeded."""
    cfg = config(fakes, vendor={"context_window": 400}, local={"context_window": 400})
    with GatewayHarness(sqlite_db, tmp_path, cfg, classifier=classifier) as g:
        c = g.openai(g.create_key())
        c.responses.create(model="chat", input=f"Pay {IBAN}.")
        assert len(fakes["vendor"].ledger) == 0 and len(fakes["local"].ledger) == 1
        with pytest.raises(openai.BadRequestError) as err:
            c.responses.create(model="chat", input="word " * 2000)
        assert err.value.code == "context_length_exceeded"


def test_websocket_upgrade_is_426(gw: GatewayHarness) -> None:
    """Codex tries a WebSocket first; 426 sends it to HTTP at once."""
    host, port = gw.url.removeprefix("http://").split(":")
    key = base64.b64encode(os.urandom(16)).decode()
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall((f"GET /v1/responses HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())  # fmt: skip
        head = sock.recv(4096).decode("latin-1")
    assert head.startswith("HTTP/1.1 426"), head
    assert ALL  # the shared config speaks every protocol
