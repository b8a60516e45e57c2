"""Tier routing on real servers: Tier 3 never reaches a shared upstream; Tier 2 reaches it stripped,
and the client gets its identifiers back — plain, streamed (placeholders split), in tool calls."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from engine import derive_cache_salt
from tests.gateway.conftest import base_config
from tests.support import HARDENED_MANIFEST, FakeUpstream, Received, Scripted
from tests.support.harness import SECRETS, FakeUpstreams, GatewayHarness

EMAIL = "maria.keller@corp-mail.example.org"
TIER2 = f"Draft a short reply to {EMAIL} about the delayed shipment."
SSN = "078-05-1120"
TIER3 = f"STRICTLY CONFIDENTIAL. Employee record: SSN {SSN}, salary review notes."


def _user_text(r: Received) -> str:
    return "\n".join(m["content"] for m in r.body["messages"] if isinstance(m.get("content"), str))


def _echo(r: Received) -> Scripted:
    return Scripted(content="You wrote: " + _user_text(r))


def test_tier3_goes_onprem_with_salt_never_shared(gateway: GatewayHarness, fakes: FakeUpstreams) -> None:
    """A Tier-3 prompt skips the shared upstream (first in order) and reaches on-prem with the
    tenant's derived cache_salt; the client's own salt and truncation fields are dropped."""
    client = gateway.openai(gateway.create_key("acme"))
    reply = client.chat.completions.create(
        model="chat", messages=[{"role": "user", "content": TIER3}],
        extra_body={"cache_salt": "client-chosen", "truncate_prompt_tokens": 5, "truncation_side": "left",
                    "top_k": 7},
    )  # fmt: skip
    assert reply.choices[0].message.content == "ok"
    assert SSN not in fakes["vendor"].ledger.raw_text() and len(fakes["vendor"].ledger) == 0
    (seen,) = fakes["local"].ledger.bodies()
    assert SSN in json.dumps(seen)  # on-prem may receive it as is
    assert seen["cache_salt"] == derive_cache_salt(SECRETS["cache_salt_key"].encode(), "acme")
    assert "truncate_prompt_tokens" not in seen and "truncation_side" not in seen
    assert seen["top_k"] == 7  # everything else the client sent is forwarded


def test_tier3_refused_when_onprem_unhardened(fakes_unhardened: FakeUpstreams, sqlite_db: str, tmp_path: Path,
                                             classifier: Any) -> None:  # fmt: skip
    """With the on-prem engine's manifest showing no KV zeroing, Tier 3 gets 403 and nothing moves."""
    with GatewayHarness(sqlite_db, tmp_path, base_config(fakes_unhardened), classifier=classifier) as gw:
        client = gw.openai(gw.create_key())
        with pytest.raises(openai.PermissionDeniedError) as err:
            client.chat.completions.create(model="chat", messages=[{"role": "user", "content": TIER3}])
        assert err.value.body["code"] == "tier_not_allowed"  # type: ignore[index]  # an error body is a dict
        assert SSN not in str(err.value.body)
        text = httpx.get(gw.url + "/metrics").text
        assert 'tiergate_onprem_hardened{upstream="local"} 0.0' in text
    assert len(fakes_unhardened["vendor"].ledger) == 0 and len(fakes_unhardened["local"].ledger) == 0


@pytest.fixture
def fakes_unhardened() -> Any:
    manifest = {**HARDENED_MANIFEST, "kv_zeroing": False}
    with FakeUpstreams(FakeUpstream(name="vendor"), FakeUpstream(name="local", kind="onprem", manifest=manifest)) as f:
        yield f


def test_tier2_stripped_for_shared_and_restored(gateway: GatewayHarness, fakes: FakeUpstreams) -> None:
    """The shared upstream receives no identifier, only a placeholder; the client's answer has it back."""
    fakes["vendor"].script = _echo
    client = gateway.openai(gateway.create_key())
    reply = client.chat.completions.create(model="chat", messages=[{"role": "user", "content": TIER2}])
    assert reply.choices[0].message.content == "You wrote: " + TIER2
    raw = fakes["vendor"].ledger.raw_text()
    assert EMAIL not in raw and "maria.keller" not in raw
    sent = _user_text(fakes["vendor"].ledger.items()[0])
    assert sent != TIER2 and "Draft a short reply to " in sent
    assert reply.model_extra is None or EMAIL not in json.dumps(reply.model_extra)


def test_tier2_stream_placeholder_split_across_chunks(gateway: GatewayHarness, fakes: FakeUpstreams) -> None:
    """A placeholder cut into 3-character chunks is still restored in the client's stream."""

    def script(r: Received) -> Scripted:
        text = "Echo: " + _user_text(r)
        return Scripted(chunks=[text[i : i + 3] for i in range(0, len(text), 3)])

    fakes["vendor"].script = script
    client = gateway.openai(gateway.create_key())
    stream = client.chat.completions.create(model="chat", messages=[{"role": "user", "content": TIER2}], stream=True)
    pieces = [c.choices[0].delta.content or "" for c in stream if c.choices]
    assert "".join(pieces) == "Echo: " + TIER2
    assert len([p for p in pieces if p]) > 5  # it really streamed, not one buffered blob
    assert EMAIL not in fakes["vendor"].ledger.raw_text()


@pytest.mark.parametrize("stream", [False, True])
def test_tier2_tool_call_arguments_restored(gateway: GatewayHarness, fakes: FakeUpstreams, stream: bool) -> None:
    """Placeholders inside tool-call arguments come back as the identifiers, streamed or not."""

    def script(r: Received) -> Scripted:
        sent = _user_text(r)
        placeholder = sent.split("reply to ", 1)[1].split(" about", 1)[0]
        args = json.dumps({"to": placeholder, "subject": "shipment"})
        return Scripted(content="", finish_reason="tool_calls",
                        tool_calls=[{"id": "call_1", "type": "function",
                                     "function": {"name": "send_mail", "arguments": args}}])  # fmt: skip

    fakes["vendor"].script = script
    client = gateway.openai(gateway.create_key())
    tools = [{"type": "function", "function": {"name": "send_mail", "parameters": {"type": "object"}}}]
    messages = [{"role": "user", "content": TIER2}]
    if stream:
        args = ""
        for chunk in client.chat.completions.create(model="chat", messages=messages, tools=tools, stream=True):
            for choice in chunk.choices:
                for call in choice.delta.tool_calls or ():
                    args += call.function.arguments or "" if call.function else ""
    else:
        reply = client.chat.completions.create(model="chat", messages=messages, tools=tools)
        args = reply.choices[0].message.tool_calls[0].function.arguments  # type: ignore[index,union-attr]  # the answer has a tool call: the test fails here if not
    assert json.loads(args) == {"to": EMAIL, "subject": "shipment"}
    assert EMAIL not in fakes["vendor"].ledger.raw_text()


def test_key_tier_cap(gateway: GatewayHarness, fakes: FakeUpstreams) -> None:
    """A key capped at Tier 1 may not send a Tier-2 prompt anywhere: 403, nothing forwarded."""
    client = gateway.openai(gateway.create_key("acme", max_tier=1))
    with pytest.raises(openai.PermissionDeniedError):
        client.chat.completions.create(model="chat", messages=[{"role": "user", "content": TIER2}])
    client.chat.completions.create(model="chat", messages=[{"role": "user", "content": "What is 2+2?"}])
    assert len(fakes["vendor"].ledger) == 1 and len(fakes["local"].ledger) == 0
    assert EMAIL not in fakes["vendor"].ledger.raw_text()


def test_revoked_key(gateway: GatewayHarness, fakes: FakeUpstreams) -> None:
    """A key works until revoked, then gets 401 (auth cache off in tests)."""
    key = gateway.create_key()
    client = gateway.openai(key)
    client.chat.completions.create(model="chat", messages=[{"role": "user", "content": "hi"}])
    gateway.revoke(key)
    with pytest.raises(openai.AuthenticationError):
        client.chat.completions.create(model="chat", messages=[{"role": "user", "content": "hi"}])
    assert len(fakes["vendor"].ledger) == 1


def test_stream_ending_without_finish_releases_held_text(gateway: GatewayHarness, fakes: FakeUpstreams) -> None:
    """Text held back as a possible placeholder prefix is still delivered when the upstream's stream
    ends without a finish_reason."""

    def script(r: Received) -> Scripted:
        placeholder = _user_text(r).split("reply to ", 1)[1].split(" about", 1)[0]
        return Scripted(chunks=["Done ", placeholder[:3]], finish_reason="")

    fakes["vendor"].script = script
    client = gateway.openai(gateway.create_key())
    stream = client.chat.completions.create(model="chat", messages=[{"role": "user", "content": TIER2}], stream=True)
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert text.startswith("Done <") and len(text) == len("Done ") + 3


def test_client_may_raise_the_tier_never_lower_it(gateway: GatewayHarness, fakes: FakeUpstreams) -> None:
    """X-Tiergate-Tier: 3 sends a harmless prompt on-prem only; 1 does not lower a Tier-3 prompt;
    a bad value is a 400 with nothing forwarded."""
    client = gateway.openai(gateway.create_key("acme"))
    harmless = [{"role": "user", "content": "What is the boiling point of water?"}]
    raised = client.chat.completions.with_raw_response.create(
        model="chat", messages=harmless, extra_headers={"X-Tiergate-Tier": "3"})  # fmt: skip
    assert raised.headers["x-tiergate-tier"] == "3"
    assert len(fakes["vendor"].ledger) == 0 and len(fakes["local"].ledger) == 1

    lowered = client.chat.completions.with_raw_response.create(
        model="chat", messages=[{"role": "user", "content": TIER3}], extra_headers={"X-Tiergate-Tier": "1"})  # fmt: skip
    assert lowered.headers["x-tiergate-tier"] == "3"
    assert len(fakes["vendor"].ledger) == 0 and len(fakes["local"].ledger) == 2

    with pytest.raises(openai.BadRequestError) as err:
        client.chat.completions.create(model="chat", messages=harmless, extra_headers={"X-Tiergate-Tier": "0"})
    assert err.value.body["param"] == "x-tiergate-tier"  # type: ignore[index]  # an error body is a dict
    assert len(fakes["vendor"].ledger) == 0 and len(fakes["local"].ledger) == 2
