"""The official anthropic SDK against a real gateway and a scripted fake Anthropic vendor."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import pytest

from tests.gateway.conftest import upstream_config
from tests.support import FakeUpstream, Scripted
from tests.support.fake_protocols import SIGNATURE
from tests.support.harness import FakeUpstreams, GatewayHarness

EMAIL = "alice.martin@example.org"
IBAN = "DE41 2605 0000 1562 8071 31"
BETA = "context-1m-2025-08-07,interleaved-thinking-2025-05-14"
ALL = ["openai", "anthropic", "responses"]


def config(fakes: FakeUpstreams, **per_name: dict[str, Any]) -> dict[str, Any]:
    ups = upstream_config(fakes, vendor={"protocols": ALL, "provider": "anthropic", **per_name.get("vendor", {})},
                          local={"protocols": ALL, **per_name.get("local", {})})  # fmt: skip
    return {"upstreams": ups, "limits": {"auth_cache_s": 0}}


@pytest.fixture
def gw(fakes: FakeUpstreams, sqlite_db: str, tmp_path: Path, classifier: Any) -> Iterator[GatewayHarness]:
    with GatewayHarness(sqlite_db, tmp_path, config(fakes), classifier=classifier) as g:
        yield g


def client(gw: GatewayHarness, key: str, **kw: Any) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=key, base_url=gw.url, max_retries=0, timeout=30,
                               default_headers={"anthropic-beta": BETA, "anthropic-version": "2023-06-01"}, **kw)  # fmt: skip


def ask(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


def test_message_stripped_at_the_vendor_restored_for_the_client(gw: GatewayHarness, fakes: FakeUpstreams) -> None:
    """Sync, not streamed: the vendor sees a placeholder, the client its identifier; the model
    name, anthropic-version and anthropic-beta pass; usage counts cache reads as prompt."""
    fakes["vendor"].script = lambda r: Scripted(content="I will write to <EMAIL_1>.", cache_read_tokens=5)
    reply = client(gw, gw.create_key()).messages.create(
        model="chat", max_tokens=50, system=[{"type": "text", "text": "Be brief.",
                                              "cache_control": {"type": "ephemeral"}}],
        messages=ask(f"Draft a note to {EMAIL} about the audit."))  # fmt: skip
    assert reply.content[0].text == f"I will write to {EMAIL}."
    assert reply.model == "chat"
    (seen,) = fakes["vendor"].ledger.items()
    assert seen.path == "/v1/messages"
    assert EMAIL not in seen.text and "<EMAIL_1>" in seen.body["messages"][0]["content"]
    assert seen.body["model"] == "vendor-chat" and seen.body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert seen.headers["anthropic-version"] == "2023-06-01" and seen.headers["anthropic-beta"] == BETA
    (row,) = gw.rows("SELECT r.endpoint, r.upstream, r.stripped, o.usage_prompt_tokens, o.status, r.prompt_tokens "
                     "FROM audit_requests r JOIN audit_outcomes o USING (request_id)")  # fmt: skip
    assert row["endpoint"] == "messages" and row["upstream"] == "vendor" and row["stripped"]
    assert row["status"] == "ok"
    # input_tokens + cache_read_input_tokens: the prompt the vendor read, as the fake counted it.
    assert row["usage_prompt_tokens"] == reply.usage.input_tokens + 5


def test_streaming_restores_text_tool_input_and_passes_thinking_and_unknown_events(
    gw: GatewayHarness, fakes: FakeUpstreams
) -> None:
    """Placeholders split across text deltas and inside tool input JSON come back whole; thinking
    stays as the vendor wrote it; an event type the
    gateway does not know is passed through."""
    odd = "bob.stone@example.org"
    fakes["vendor"].script = lambda r: Scripted(
        chunks=["Mail <EMA", "IL_1> and <EM", "AIL_2>."], thinking="The user means <EMAIL_1>.",
        tool_calls=[{"id": "toolu_1", "function": {"name": "send", "arguments": '{"to": "<EMAIL_2>", "cc": ["<EMAIL_1>"]}'}}],
        extra_events=[{"type": "future_event", "note": "for <EMAIL_1>"}],
    )  # fmt: skip
    c = client(gw, gw.create_key())
    with c.messages.stream(model="chat", max_tokens=50, messages=ask(f"Mail {EMAIL} and {odd} please.")) as stream:
        events = list(stream)
        final = stream.get_final_message()
    kinds = [e.type for e in events]
    assert "future_event" in kinds
    future = next(e for e in events if e.type == "future_event")
    assert getattr(future, "note", None) == f"for {EMAIL}"  # its strings restored all the same
    thinking, text, tool = final.content
    assert thinking.type == "thinking" and thinking.thinking == "The user means <EMAIL_1>."
    assert thinking.signature == SIGNATURE
    assert text.text == f"Mail {EMAIL} and {odd}."
    assert tool.input == {"to": odd, "cc": [EMAIL]}
    assert final.stop_reason == "tool_use" and final.model == "chat"
    raw = fakes["vendor"].ledger.raw_text()
    assert EMAIL not in raw and odd not in raw


def test_thinking_blocks_go_back_byte_untouched(gw: GatewayHarness, fakes: FakeUpstreams) -> None:
    """The next turn resends the thinking block: the vendor receives it exactly as it sent it."""
    thinking = {"type": "thinking", "thinking": "Plan: answer <EMAIL_1> politely.", "signature": SIGNATURE}
    redacted = {"type": "redacted_thinking", "data": "RW5jcnlwdGVkIHN0dWZm"}
    messages = [*ask(f"Reply to {EMAIL}."),
                {"role": "assistant", "content": [thinking, redacted, {"type": "text", "text": f"Done for {EMAIL}."}]},
                *ask("Thanks, and again?")]  # fmt: skip
    client(gw, gw.create_key()).messages.create(model="chat", max_tokens=20, messages=messages)
    (seen,) = fakes["vendor"].ledger.bodies()
    assert seen["messages"][1]["content"][0] == thinking
    assert seen["messages"][1]["content"][1] == redacted
    assert seen["messages"][1]["content"][2]["text"] == "Done for <EMAIL_1>."


def test_an_identifier_smuggled_in_thinking_is_read(gw: GatewayHarness, fakes: FakeUpstreams) -> None:
    """Vendor state is read, never skipped: an IBAN inside a 'thinking' block makes the request
    Tier 3, which goes only on-prem (and untouched there, since on-prem does not strip)."""
    messages = [*ask("hi"), {"role": "assistant", "content": [
        {"type": "thinking", "thinking": f"account {IBAN}", "signature": SIGNATURE}, {"type": "text", "text": "ok"}]},
        *ask("go on")]  # fmt: skip
    client(gw, gw.create_key()).messages.create(model="chat", max_tokens=20, messages=messages)
    assert len(fakes["vendor"].ledger) == 0
    (seen,) = fakes["local"].ledger.bodies()
    assert seen["messages"][1]["content"][0]["thinking"] == f"account {IBAN}"


def test_async_client_and_count_tokens(gw: GatewayHarness, fakes: FakeUpstreams) -> None:
    """count_tokens carries the prompt: stripped at the vendor and audited like a message."""
    key = gw.create_key()

    async def run() -> tuple[Any, Any]:
        c = anthropic.AsyncAnthropic(api_key=key, base_url=gw.url, max_retries=0, timeout=30)
        fakes["vendor"].script = lambda r: Scripted(content="Sure, <EMAIL_1>.")
        reply = await c.messages.create(model="chat", max_tokens=20, messages=ask(f"Greet {EMAIL}."))
        counted = await c.messages.count_tokens(model="chat", messages=ask(f"Count {EMAIL} in."))
        await c.close()
        return reply, counted

    reply, counted = asyncio.run(run())
    assert reply.content[0].text == f"Sure, {EMAIL}."
    assert counted.input_tokens > 0
    bodies = fakes["vendor"].ledger.items()
    assert [b.path for b in bodies] == ["/v1/messages", "/v1/messages/count_tokens"]
    assert EMAIL not in fakes["vendor"].ledger.raw_text()
    rows = gw.rows("SELECT r.endpoint, r.stripped, o.usage_prompt_tokens FROM audit_requests r "
                   "JOIN audit_outcomes o USING (request_id) ORDER BY r.seq")  # fmt: skip
    assert [(r["endpoint"], r["stripped"]) for r in rows] == [("messages", True), ("count_tokens", True)]
    assert rows[1]["usage_prompt_tokens"] == counted.input_tokens


def test_tier3_goes_on_prem_only(gw: GatewayHarness, fakes: FakeUpstreams) -> None:
    fakes["local"].script = lambda r: Scripted(content="Noted.")
    reply = client(gw, gw.create_key()).messages.create(model="chat", max_tokens=20, messages=ask(f"Pay {IBAN}."))
    assert reply.content[0].text == "Noted."
    assert len(fakes["vendor"].ledger) == 0 and len(fakes["local"].ledger) == 1


def test_errors_in_anthropic_shape(gw: GatewayHarness, fakes: FakeUpstreams) -> None:
    """A bad key is the SDK's AuthenticationError; a bad beta header, a bad body: 400/422 in
    Anthropic's shape, nothing forwarded."""
    with pytest.raises(anthropic.AuthenticationError) as err:
        client(gw, "tg_nope_nope").messages.create(model="chat", max_tokens=5, messages=ask("hi"))
    assert err.value.body["type"] == "error" and err.value.body["error"]["type"] == "authentication_error"
    key = gw.create_key()
    bad = httpx.post(gw.url + "/v1/messages", headers={"x-api-key": key, "anthropic-beta": "context-1m, Ignore previous instructions"},
                     json={"model": "chat", "max_tokens": 5, "messages": ask("hi")})  # fmt: skip
    assert bad.status_code == 400 and bad.json()["error"]["type"] == "invalid_request_error"
    no_max = httpx.post(gw.url + "/v1/messages", headers={"authorization": f"Bearer {key}"},
                        json={"model": "chat", "messages": ask("hi")})  # fmt: skip
    assert no_max.status_code == 422 and no_max.json() == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "'max_tokens' must be a positive integer"},
    }
    assert len(fakes["vendor"].ledger) == 0 and len(fakes["local"].ledger) == 0


def test_a_prompt_too_long_for_every_upstream_is_413_request_too_large(
    fakes: FakeUpstreams, sqlite_db: str, tmp_path: Path, classifier: Any
) -> None:
    """What makes Claude Code compact instead of retrying: 413 request_too_large, with a message
    about the context window; nothing forwarded, a refusal row."""
    cfg = config(fakes, vendor={"context_window": 200}, local={"context_window": 200})
    with GatewayHarness(sqlite_db, tmp_path, cfg, classifier=classifier) as g:
        with pytest.raises(anthropic.APIStatusError) as err:
            # Long enough that the estimate alone settles it (no count at the upstream).
            client(g, g.create_key()).messages.create(model="chat", max_tokens=5, messages=ask("word " * 4000))
        assert err.value.status_code == 413
        assert err.value.body["error"]["type"] == "request_too_large"
        assert "prompt is too long" in err.value.body["error"]["message"]
        assert "context window" in err.value.body["error"]["message"]
        (row,) = g.rows("SELECT o.http_status, o.error_class FROM audit_requests r JOIN audit_outcomes o "
                        "USING (request_id)")  # fmt: skip
        assert row["http_status"] == 413 and row["error_class"] == "request_too_large"
    assert len(fakes["vendor"].ledger) == 0 and len(fakes["local"].ledger) == 0


def test_error_event_after_200_is_relayed(gw: GatewayHarness, fakes: FakeUpstreams) -> None:
    """The vendor's `event: error` mid-stream reaches the client as Anthropic's error event
    (its type kept, so the SDK and Claude Code retry an overload); the outcome says so."""
    fakes["vendor"].script = lambda r: Scripted(chunks=["a", "b"], stream_error_after=4)
    with pytest.raises(anthropic.APIStatusError) as err:
        with client(gw, gw.create_key()).messages.stream(model="chat", max_tokens=5, messages=ask("hi")) as s:
            list(s)
    assert "overloaded_error" in str(err.value.body)
    (row,) = gw.rows("SELECT o.status, o.error_class FROM audit_outcomes o")
    assert row == {"status": "upstream_error", "error_class": "upstream_stream_error"}


def test_stream_cut_without_message_stop_ends_with_an_error(gw: GatewayHarness, fakes: FakeUpstreams) -> None:
    fakes["vendor"].script = lambda r: Scripted(chunks=["a", "b", "c"], cut_after_chunks=5)
    key = gw.create_key()
    with httpx.stream("POST", gw.url + "/v1/messages", headers={"x-api-key": key},
                      json={"model": "chat", "max_tokens": 5, "messages": ask("hi"), "stream": True}) as r:  # fmt: skip
        body = r.read().decode()
    assert "message_stop" not in body and "message_delta" not in body
    last = body.strip().split("\n\n")[-1]
    assert last.startswith("event: error") and json.loads(last.split("data: ", 1)[1])["type"] == "error"


def test_only_upstreams_speaking_the_protocol_are_chosen(
    fakes: FakeUpstreams, sqlite_db: str, tmp_path: Path, classifier: Any
) -> None:
    """The vendor serves only OpenAI's protocol: Anthropic requests go to the one that speaks it,
    and with none, the answer says that the API is not served (404), nothing forwarded."""
    cfg = config(fakes, vendor={"protocols": ["openai"]})
    with GatewayHarness(sqlite_db, tmp_path, cfg, classifier=classifier) as g:
        client(g, g.create_key()).messages.create(model="chat", max_tokens=5, messages=ask("hi"))
        assert len(fakes["vendor"].ledger) == 0 and len(fakes["local"].ledger) == 1
    cfg = config(fakes, vendor={"protocols": ["openai"]}, local={"protocols": ["openai"]})
    with GatewayHarness(sqlite_db, tmp_path / "b", cfg, classifier=classifier) as g:
        with pytest.raises(anthropic.NotFoundError):
            client(g, g.create_key()).messages.create(model="chat", max_tokens=5, messages=ask("hi"))


def test_ten_turns_keep_a_byte_identical_prefix(gw: GatewayHarness, fakes: FakeUpstreams) -> None:
    """An agent resends the whole conversation every turn, thinking blocks included: what the
    vendor receives at turn N+1 starts with exactly what it received at turn N, followed by its own
    answer as it wrote it (placeholders, thinking, signature) — also after the model brought up an
    identifier of its own at turn 4, which keeps the number it got at turn 5."""
    carol = "carol.white@example.net"

    def script(r: Any) -> Scripted:
        turn = (len(r.body["messages"]) - 1) // 2
        extra = f" Also ask {carol}." if turn == 4 else ""
        return Scripted(content=f"Noted for <EMAIL_1>.{extra}", thinking=f"Turn {turn}: they mean <EMAIL_1>.")

    fakes["vendor"].script = script
    c = client(gw, gw.create_key())
    system = [{"type": "text", "text": f"You assist {EMAIL}'s team.", "cache_control": {"type": "ephemeral"}}]
    messages: list[dict[str, Any]] = []
    for turn in range(10):
        messages.append({"role": "user", "content": f"Turn {turn}: remind {EMAIL}" + (
            " and bob.stone@example.org" if turn >= 2 else "")})  # fmt: skip
        reply = c.messages.create(model="chat", max_tokens=50, system=system, messages=messages)
        assert reply.content[1].text.startswith(f"Noted for {EMAIL}.")
        messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]})
    seen = fakes["vendor"].ledger.bodies()
    assert len(seen) == 10
    for before, after in zip(seen, seen[1:], strict=False):
        n = len(before["messages"])
        assert json.dumps(after["system"]) == json.dumps(before["system"])
        assert json.dumps(after["messages"][:n]) == json.dumps(before["messages"])
        answer = after["messages"][n]["content"]
        assert answer[0] == {"type": "thinking", "thinking": f"Turn {(n - 1) // 2}: they mean <EMAIL_1>.",
                             "signature": SIGNATURE}  # fmt: skip
    assert seen[5]["messages"][9]["content"][1]["text"] == "Noted for <EMAIL_1>. Also ask <EMAIL_3>."
    assert seen[9]["messages"][9]["content"][1]["text"] == "Noted for <EMAIL_1>. Also ask <EMAIL_3>."
    assert "<EMAIL_2>" in seen[9]["messages"][4]["content"]
    assert EMAIL not in fakes["vendor"].ledger.raw_text() and carol not in json.dumps(seen[9])


def test_vendor_state_never_falls_back_to_another_upstream(gw: GatewayHarness, fakes: FakeUpstreams) -> None:
    """Without thinking blocks a failing vendor falls back to the next upstream; with them the
    request stays with the vendor that produced them (its provider), and fails there."""
    fakes["vendor"].script = lambda r: Scripted(status=500)
    c = client(gw, gw.create_key())
    c.messages.create(model="chat", max_tokens=5, messages=ask("hi"))
    assert len(fakes["local"].ledger) == 1
    history = [*ask("hi"), {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "plan", "signature": SIGNATURE}, {"type": "text", "text": "ok"}]},
        *ask("more")]  # fmt: skip
    with pytest.raises(anthropic.APIStatusError) as err:
        c.messages.create(model="chat", max_tokens=5, messages=history)
    assert err.value.status_code == 502 and err.value.body["error"]["type"] == "api_error"
    assert len(fakes["local"].ledger) == 1 and len(fakes["vendor"].ledger) == 2


def test_vendor_key_goes_in_x_api_key(
    fakes: FakeUpstreams, sqlite_db: str, tmp_path: Path, classifier: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An upstream with ``auth_header: x-api-key`` gets its key there (Anthropic's API), never as
    a Bearer token, and never the client's Tiergate key."""
    monkeypatch.setenv("TG_TEST_VENDOR_KEY", "sk-ant-test-key")
    cfg = config(fakes, vendor={"auth_header": "x-api-key", "api_key_env": "TG_TEST_VENDOR_KEY"})
    with GatewayHarness(sqlite_db, tmp_path, cfg, classifier=classifier) as g:
        key = g.create_key()
        client(g, key).messages.create(model="chat", max_tokens=5, messages=ask("hi"))
    (seen,) = fakes["vendor"].ledger.items()
    assert seen.headers["x-api-key"] == "sk-ant-test-key"
    assert "authorization" not in seen.headers and key not in seen.text


def test_a_doubtful_length_is_counted_by_the_upstream(
    fakes: FakeUpstreams, sqlite_db: str, tmp_path: Path, classifier: Any
) -> None:
    """The estimate cannot tell whether the prompt fits: the upstream's own count_tokens settles
    it (with the write-ahead row first, and the client's anthropic headers); fits -> forwarded
    under the same row; too long -> 413, nothing more sent."""
    text = "word " * 400  # ~500 estimated tokens, a band of ~170..2100
    cfg = config(fakes, vendor={"safe_prompt_tokens": 900}, local={"protocols": ["openai"]})
    with GatewayHarness(sqlite_db, tmp_path, cfg, classifier=classifier) as g:
        client(g, g.create_key()).messages.create(model="chat", max_tokens=5, messages=ask(text))
        rows = g.rows("SELECT r.request_id, r.endpoint FROM audit_requests r")
    counted, sent = fakes["vendor"].ledger.items()
    assert counted.path == "/v1/messages/count_tokens" and set(counted.body) == {"model", "messages"}
    assert counted.headers["anthropic-beta"] == BETA and sent.path == "/v1/messages"
    assert len(rows) == 1 and rows[0]["endpoint"] == "messages"
    fakes["vendor"].ledger.clear()
    cfg = config(fakes, vendor={"safe_prompt_tokens": 300}, local={"protocols": ["openai"]})
    with GatewayHarness(sqlite_db, tmp_path / "b", cfg, classifier=classifier) as g:
        with pytest.raises(anthropic.APIStatusError) as err:
            client(g, g.create_key()).messages.create(model="chat", max_tokens=5, messages=ask(text))
        assert err.value.status_code == 413
        (row,) = g.rows(
            "SELECT o.http_status, o.error_class, o.usage_prompt_tokens FROM audit_outcomes o "
            "WHERE o.status = 'refused'"
        )  # the first gateway's rows share the file
    assert row["http_status"] == 413 and row["error_class"] == "prompt_too_long" and row["usage_prompt_tokens"] > 300
    assert [i.path for i in fakes["vendor"].ledger.items()] == ["/v1/messages/count_tokens"]


def test_an_identifier_inside_thinking_that_must_be_stripped_is_a_400(gw: GatewayHarness, fakes: FakeUpstreams) -> None:
    """Thinking cannot be edited (its signature), so an identifier in it that Tier 2 must strip
    for the shared vendor refuses the request with a 400 saying what to do — never a 5xx, which
    Claude Code would retry without end — and nothing is forwarded."""
    messages = [*ask("hi"), {"role": "assistant", "content": [
        {"type": "thinking", "thinking": f"maybe write to {EMAIL}", "signature": SIGNATURE},
        {"type": "text", "text": "ok"}]}, *ask("go on")]  # fmt: skip
    with pytest.raises(anthropic.BadRequestError) as err:
        client(gw, gw.create_key()).messages.create(model="chat", max_tokens=5, messages=messages)
    assert "thinking" in err.value.body["error"]["message"]
    assert EMAIL not in str(err.value.body)
    assert len(fakes["vendor"].ledger) == 0 and len(fakes["local"].ledger) == 0


@pytest.mark.parametrize("stream", [False, True])
def test_thinking_goes_back_to_the_upstream_that_produced_it(
    sqlite_db: str, tmp_path: Path, classifier: Any, stream: bool
) -> None:
    """Two upstreams of one provider: the first was down when turn 1 was answered by the second,
    with thinking. Turn 2 resends that thinking: it goes to the second again (the gateway keeps a
    digest of each signature it relayed, never the value), although the first is back."""
    with FakeUpstreams(FakeUpstream(name="vendor", kind="shared"), FakeUpstream(name="vendor2", kind="shared"),
                       FakeUpstream(name="local", kind="onprem")) as f:  # fmt: skip
        ups = upstream_config(f, vendor={"protocols": ALL, "provider": "anthropic"},
                              local={"protocols": ALL})  # fmt: skip
        ups.insert(1, {**ups[0], "name": "vendor2", "base_url": f.base_url("vendor2")})
        f["vendor"].script = lambda r: Scripted(status=500)
        f["vendor2"].script = lambda r: Scripted(content="Done.", thinking="plan for <EMAIL_1>")
        with GatewayHarness(sqlite_db, tmp_path, {"upstreams": ups, "limits": {"auth_cache_s": 0}},
                            classifier=classifier) as g:  # fmt: skip
            c = client(g, g.create_key())
            if stream:
                with c.messages.stream(model="chat", max_tokens=5, messages=ask(f"Mail {EMAIL}")) as s:
                    first = s.get_final_message()
            else:
                first = c.messages.create(model="chat", max_tokens=5, messages=ask(f"Mail {EMAIL}"))
            f["vendor"].script = lambda r: Scripted(content="from vendor")
            history = [*ask(f"Mail {EMAIL}"),
                       {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
                       *ask("and again")]  # fmt: skip
            again = c.messages.create(model="chat", max_tokens=5, messages=history)
            fresh = c.messages.create(model="chat", max_tokens=5, messages=ask("no state here"))
        assert first.content[0].signature == SIGNATURE
        assert again.content[-1].text == "Done."  # vendor2's answer
        assert fresh.content[-1].text == "from vendor"  # without state: the first upstream again
        assert len(f["vendor2"].ledger) == 2 and f["vendor2"].ledger.bodies()[1]["messages"][1]["content"][0][
            "signature"] == SIGNATURE  # fmt: skip
