"""Unicode evasion through the real HTTP path: identifiers disguised with zero-width characters,
soft hyphens or fullwidth forms are still found; the shared upstream never sees them in any form
(raw, NFKC-folded or with the invisibles removed) and the client gets its own text back."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.faults._gw import chat_body, one_upstream
from tests.support import FakeUpstream
from tests.support.crosstalk import echo
from tests.support.harness import FakeUpstreams, GatewayHarness

EMAIL = "maria.keller@corp-mail.example.org"
ZW = "\u200b"


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


DISGUISED_EMAILS = {
    "zero_width_space": ZW.join(EMAIL),
    "zero_width_joiner": EMAIL.replace(".", "\u200d.").replace("@", "\u2060@"),
    "soft_hyphens": EMAIL.replace("keller", "kel\u00adler").replace("example", "exam\u00adple"),
    "fullwidth": _fullwidth(EMAIL),
    "mixed": _fullwidth("maria.keller") + ZW + "@corp-mail.example.org",
    "bom_inside": EMAIL.replace("@", "\ufeff@"),
}


def _forms(text: str) -> set[str]:
    folded = unicodedata.normalize("NFKC", text)
    visible = "".join(c for c in folded if unicodedata.category(c) != "Cf")
    return {text, folded, visible, "maria.keller", "keller@corp", "corp-mail.example"}


@pytest.fixture(scope="module")
def env(
    tmp_path_factory: pytest.TempPathFactory, classifier: Any
) -> Iterator[tuple[GatewayHarness, FakeUpstream, str]]:
    tmp: Path = tmp_path_factory.mktemp("unicode")
    with FakeUpstreams(FakeUpstream(name="vendor", script=echo)) as fakes:
        cfg = {"upstreams": [one_upstream(fakes.base_url("vendor"))]}
        with GatewayHarness(f"sqlite+aiosqlite:///{tmp / 'audit.db'}", tmp, cfg, classifier=classifier) as gw:
            yield gw, fakes["vendor"], gw.create_key()


@pytest.mark.parametrize("name", sorted(DISGUISED_EMAILS))
@pytest.mark.parametrize("stream", [False, True])
def test_disguised_identifier_is_stripped_before_the_shared_upstream(
    name: str, stream: bool, env: tuple[GatewayHarness, FakeUpstream, str]
) -> None:
    """A disguised e-mail address reaches the shared upstream only as a placeholder, in no form,
    and the client's answer carries the client's original (disguised) text back."""
    gw, fake, key = env
    disguised = DISGUISED_EMAILS[name]
    prompt = f"Please draft a polite reply to {disguised} about the delayed shipment."
    before = len(fake.ledger)
    r = httpx.post(gw.url + "/v1/chat/completions", json=chat_body(prompt, stream=stream),
                   headers={"authorization": f"Bearer {key}"}, timeout=30)  # fmt: skip
    assert r.status_code == 200, r.text
    assert len(fake.ledger) == before + 1
    received = fake.ledger.items()[-1]
    seen = json.dumps(received.body, ensure_ascii=False) + received.text
    leaked = [form for form in _forms(disguised) if form in seen]
    assert leaked == []
    assert r.headers.get("x-tiergate-tier") == "2"
    if stream:
        text = "".join(
            (c.get("delta") or {}).get("content") or ""
            for line in r.text.splitlines() if line.startswith("data: {")
            for c in json.loads(line[6:]).get("choices", [])
        )  # fmt: skip
    else:
        text = r.json()["choices"][0]["message"]["content"]
    assert text == prompt


@pytest.mark.parametrize("ssn", ["078-05-1120", _fullwidth("078-05-1120"), ZW.join("078-05-1120")])
def test_disguised_tier3_identifier_never_reaches_a_shared_upstream(
    ssn: str, env: tuple[GatewayHarness, FakeUpstream, str]
) -> None:
    """A disguised SSN (Tier 3) with only a shared upstream configured is refused (403), not sent."""
    gw, fake, key = env
    before = len(fake.ledger)
    prompt = f"STRICTLY CONFIDENTIAL. Employee record: SSN {ssn}, salary review notes."
    r = httpx.post(gw.url + "/v1/chat/completions", json=chat_body(prompt),
                   headers={"authorization": f"Bearer {key}"}, timeout=30)  # fmt: skip
    assert r.status_code == 403 and r.json()["error"]["code"] == "tier_not_allowed"
    assert len(fake.ledger) == before


def test_identifier_in_an_unknown_message_field_is_not_forwarded(env: tuple[GatewayHarness, FakeUpstream, str]) -> None:
    """An identifier hidden in a message field the OpenAI schema does not define never reaches the
    shared upstream (it is scanned, dropped, or the request refused)."""
    gw, fake, key = env
    before = len(fake.ledger)
    body = {
        "model": "chat",
        "messages": [{"role": "user", "content": "Say hello.", "notes": [f"SSN 536-90-4399 {EMAIL}"]}],
    }
    httpx.post(gw.url + "/v1/chat/completions", json=body, headers={"authorization": f"Bearer {key}"}, timeout=30)
    sent = "".join(r.text for r in fake.ledger.items()[before:])
    assert "536-90-4399" not in sent and EMAIL not in sent
