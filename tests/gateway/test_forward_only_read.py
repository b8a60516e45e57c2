"""Forward only what was read: whatever a request carries, no vendor below its tier receives an
identifier in the clear — not in object keys, numbers, nested metadata, tool schemas, content
parts, inline files or token ids.

A real gateway in front of two ledger-keeping fake vendors (``vendor`` shared, ``local`` on-prem);
hypothesis plants identifiers at random places of request bodies of every endpoint and the
vendor's ledger is then read the way a vendor could read it: every key, string and number, data
URIs and base64 files decoded, token ids decoded with the tokenizer, all after NFKC, removal of
invisible characters and percent-decoding.
"""

from __future__ import annotations

import base64
import binascii
import json
import random
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import httpx
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from tests.gateway.conftest import upstream_config
from tests.support.harness import FakeUpstreams, GatewayHarness
from tests.support.tokenizer_files import byte_tokenizer, counter

# -- identifiers ------------------------------------------------------------------------------


def _luhn_card(rng: random.Random) -> str:
    digits = [4] + [rng.randrange(10) for _ in range(14)]
    total = 0
    for i, d in enumerate(reversed(digits)):
        d = d * 2 if i % 2 == 0 else d
        total += d - 9 if d > 9 else d
    return "".join(map(str, digits)) + str((10 - total % 10) % 10)


def _iban(rng: random.Random) -> str:
    bban = "".join(str(rng.randrange(10)) for _ in range(18))
    check = 98 - int(bban + "131400") % 97  # "DE" -> 13 14, then "00"
    return f"DE{check:02d}{bban}"


def _email(rng: random.Random) -> str:
    user = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(7))
    return f"{user}.{rng.randrange(100, 999)}@acme-mail.de"


PLANTS = {"card": (_luhn_card, 3), "iban": (_iban, 3), "email": (_email, 2)}

# -- where they go ----------------------------------------------------------------------------

_PROTOCOLISH = ["id", "model", "type", "role", "format", "tool_call_id", "service_tier", "name"]


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _place(body: dict[str, Any], place: str, value: str, rng: random.Random, tok: Tokenizer) -> None:
    """Put ``value`` at ``place`` of a chat / completions / embeddings body."""
    meta = body.setdefault("metadata", {})
    if place == "content":
        body["messages"].append({"role": "user", "content": f"Please look at {value} today."})
    elif place == "part":
        body["messages"].append({"role": "user", "content": [{"type": "text", "text": f"ref {value}"}]})
    elif place == "meta_value":
        meta.setdefault("outer", {})[rng.choice(_PROTOCOLISH)] = value
    elif place == "meta_key":
        meta[value] = "x"
    elif place == "meta_number":
        meta[f"n{len(meta)}"] = int("".join(ch for ch in value if ch.isdigit()) or "0")
    elif place == "tool_property":
        body.setdefault("tools", []).append(
            {
                "type": "function",
                "function": {
                    "name": "lookup",
                    "parameters": {
                        "type": "object",
                        "properties": {value: {"type": "string", rng.choice(_PROTOCOLISH): value}},
                    },
                },
            }
        )
    elif place == "user":
        body["user"] = f"{body.get('user', '')} {value}".strip()
    elif place == "data_url":
        body["messages"].append(
            {
                "role": "user",
                "content": [
                    {"type": "image_url", "image_url": {"url": "data:text/plain;base64," + _b64(f"note: {value}\n")}}
                ],
            }
        )
    elif place == "file":
        body["messages"].append(
            {
                "role": "user",
                "content": [
                    {
                        "type": "file",
                        "file": {
                            "filename": "a.txt",
                            "file_data": rng.choice(["", "data:text/plain;base64,"]) + _b64(f"row;{value};\n"),
                        },
                    }
                ],
            }
        )
    elif place == "file_header":  # in a data URI's parameters, the file itself says nothing
        name = rng.choice(["name", "filename", "x-owner"])
        body["messages"].append(
            {
                "role": "user",
                "content": [
                    {"type": "file", "file": {"file_data": f"data:text/plain;{name}={value};base64," + _b64("ok\n")}}
                ],
            }
        )
    elif place == "file_chunks":
        data = _b64(f"header\n{value}\nfooter\n")
        cut = 4 * rng.randrange(1, max(2, len(data) // 4))
        body["messages"].append(
            {"role": "user", "content": [{"type": "input_file", "file_data": [data[:cut], data[cut:]]}]}
        )
    elif place == "audio":
        body["messages"].append(
            {
                "role": "user",
                "content": [{"type": "input_audio", "input_audio": {"data": _b64(value), "format": "wav"}}],
            }
        )
    elif place == "logit_bias":
        body.setdefault("logit_bias", {})["".join(ch for ch in value if ch.isdigit()) or value] = 1
    else:
        raise AssertionError(place)


CHAT_PLACES = [
    "content",
    "part",
    "meta_value",
    "meta_key",
    "meta_number",
    "tool_property",
    "user",
    "data_url",
    "file",
    "file_chunks",
    "audio",
    "logit_bias",
]


def _body(endpoint: str, plants: list[tuple[str, str]], rng: random.Random, tok: Tokenizer) -> dict[str, Any]:
    if endpoint == "messages":
        return _messages_body(plants, rng)
    if endpoint == "responses":
        return _responses_body(plants, rng)
    if endpoint == "chat":
        body: dict[str, Any] = {"model": "chat", "messages": [{"role": "user", "content": "Hello"}]}
        for place, value in plants:
            _place(body, place, value, rng, tok)
        return body
    field = "prompt" if endpoint == "completions" else "input"
    body = {"model": "chat" if endpoint == "completions" else "embed"}
    items: list[Any] = []
    for place, value in plants:
        if place == "tokens":
            items.append(tok.encode(f"see {value}", add_special_tokens=False).ids)
        elif place == "text":
            items.append(f"see {value}")
        else:
            _place(body, place, value, rng, tok)  # metadata, user, logit_bias: no messages here
    if items and all(isinstance(i, list) for i in items):
        body[field] = items[0] if len(items) == 1 and endpoint == "completions" else items
    else:  # an API takes strings or token lists, never a mix
        body[field] = [i if isinstance(i, str) else tok.decode(i) for i in items] or "hello"
    return body


OTHER_PLACES = ["tokens", "text", "meta_value", "meta_key", "meta_number", "user", "logit_bias"]
MESSAGES_PLACES = [
    "system",
    "a_text",
    "a_block",
    "a_tool_input_key",
    "a_tool_input_number",
    "a_tool_result",
    "a_document_text",
    "a_document_b64",
    "a_image",
    "a_tool_schema",
    "a_metadata",
]
RESPONSES_PLACES = [
    "instructions",
    "r_input",
    "r_input_text",
    "r_function_args",
    "r_function_output",
    "r_input_file",
    "r_tool_schema",
    "r_metadata_key",
]


def _messages_body(plants: list[tuple[str, str]], rng: random.Random) -> dict[str, Any]:
    """An Anthropic Messages body with the values planted."""
    body: dict[str, Any] = {"model": "chat", "max_tokens": 50, "messages": [{"role": "user", "content": "Hello"}]}
    for place, value in plants:
        content: Any
        if place == "system":
            body.setdefault("system", []).append({"type": "text", "text": f"Context: {value}"})
            continue
        if place == "a_tool_schema":
            body.setdefault("tools", []).append(
                {"name": "lookup", "input_schema": {"type": "object", "properties": {value: {"type": "string"}}}}
            )
            continue
        if place == "a_metadata":
            body["metadata"] = {"user_id": f"{body.get('metadata', {}).get('user_id', '')} {value}".strip()}
            continue
        if place == "a_text":
            content = f"Please check {value}."
        elif place == "a_block":
            content = [{"type": "text", "text": f"ref {value}"}]
        elif place in ("a_tool_input_key", "a_tool_input_number", "a_tool_result"):
            tool_input: dict[str, Any] = {"q": "x"}
            if place == "a_tool_input_key":
                tool_input = {value: 1}
            elif place == "a_tool_input_number":
                tool_input = {"n": int("".join(ch for ch in value if ch.isdigit()))}
            body["messages"] += [
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": tool_input}],
                },
            ]
            result = f"found {value}" if place == "a_tool_result" else "ok"
            content = [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": result}]}]
        elif place == "a_document_text":
            content = [
                {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": f"row {value}"}}
            ]
        elif place == "a_document_b64":
            content = [
                {
                    "type": "document",
                    "source": {"type": "base64", "media_type": "text/plain", "data": _b64(f"row {value}")},
                }
            ]
        elif place == "a_image":
            content = [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": _b64(value)}}]
        else:
            raise AssertionError(place)
        body["messages"].append({"role": "user", "content": content})
    return body


def _responses_body(plants: list[tuple[str, str]], rng: random.Random) -> dict[str, Any]:
    """An OpenAI Responses body with the values planted."""
    body: dict[str, Any] = {"model": "chat", "input": [{"role": "user", "content": "Hello"}]}
    for place, value in plants:
        if place == "instructions":
            body["instructions"] = f"{body.get('instructions', '')} You help {value}.".strip()
        elif place == "r_input":
            body["input"].append({"role": "user", "content": f"see {value}"})
        elif place == "r_input_text":
            body["input"].append({"role": "user", "content": [{"type": "input_text", "text": f"ref {value}"}]})
        elif place == "r_function_args":
            body["input"].append(
                {"type": "function_call", "call_id": "c1", "name": "f", "arguments": json.dumps({"who": value})}
            )
            body["input"].append({"type": "function_call_output", "call_id": "c1", "output": "ok"})
        elif place == "r_function_output":
            body["input"].append({"type": "function_call", "call_id": "c2", "name": "f", "arguments": "{}"})
            body["input"].append({"type": "function_call_output", "call_id": "c2", "output": f"got {value}"})
        elif place == "r_input_file":
            body["input"].append(
                {
                    "role": "user",
                    "content": [{"type": "input_file", "filename": "a.txt", "file_data": _b64(f"row {value}")}],
                }
            )
        elif place == "r_tool_schema":
            body.setdefault("tools", []).append(
                {
                    "type": "function",
                    "name": "f",
                    "parameters": {"type": "object", "properties": {value: {"type": "string"}}},
                }
            )
        elif place == "r_metadata_key":
            body.setdefault("metadata", {})[value] = "1"
        else:
            raise AssertionError(place)
    return body


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, list[tuple[str, str, str]], int]:
    endpoint = draw(
        st.sampled_from(["chat", "chat", "completions", "embeddings", "messages", "messages", "responses", "responses"])
    )
    places = {"chat": CHAT_PLACES, "messages": MESSAGES_PLACES, "responses": RESPONSES_PLACES}.get(
        endpoint, OTHER_PLACES
    )
    n = draw(st.integers(1, 3))
    picked = []
    for _ in range(n):
        place = draw(st.sampled_from(places))
        # A number can only carry a number: a card there (an IBAN's digits alone identify nothing).
        numeric = ("meta_number", "logit_bias", "a_tool_input_number")
        kind = "card" if place in numeric else draw(st.sampled_from(sorted(PLANTS)))
        picked.append((place, kind))
    return endpoint, picked, draw(st.integers(0, 2**32))


# -- reading the ledger as a vendor could ---------------------------------------------------------


def _clean(text: str) -> str:
    text = unquote(text)
    text = "".join(ch for ch in unicodedata.normalize("NFKC", text) if unicodedata.category(ch) != "Cf")
    return text


def _decoded(text: str) -> Iterator[str]:
    yield text
    payload = text.split(",", 1)[1] if text.startswith("data:") and "," in text else text
    try:
        raw = base64.b64decode(payload + "=" * (-len(payload) % 4), validate=True)
        yield raw.decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        pass


def _readable(value: Any, tok: Tokenizer) -> Iterator[str]:
    if isinstance(value, str):
        yield from _decoded(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _decoded(k)
            yield from _readable(v, tok)
    elif isinstance(value, list):
        if value and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            yield tok.decode(value)
        for v in value:
            yield from _readable(v, tok)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        yield str(value)


def vendor_text(body: Any, tok: Tokenizer) -> str:
    return "\n".join(_clean(t) for t in _readable(body, tok))


# -- the test ---------------------------------------------------------------------------------------


@pytest.fixture
def tokenizer_path(tmp_path: Path) -> Path:
    return byte_tokenizer(tmp_path / "bytes.json")


def test_no_planted_identifier_reaches_a_vendor_in_the_clear(
    fakes: FakeUpstreams, sqlite_db: str, tmp_path: Path, classifier: Any, tokenizer_path: Path
) -> None:
    """The invariant, over generated bodies: the shared vendor's ledger never holds a planted
    value in the clear; a Tier-3 value (or anything unreadable) never reaches it at all; every
    request has its audit row."""
    tok = Tokenizer.from_file(str(tokenizer_path))
    for name in ("vendor", "local"):  # vendors counting with the tokenizer the gateway is given
        fakes[name].count_tokens = counter(tokenizer_path)
    every = ["openai", "anthropic", "responses"]
    ups = upstream_config(
        fakes,
        vendor={"tokenizer_file": str(tokenizer_path), "protocols": every},
        local={"tokenizer_file": str(tokenizer_path), "protocols": every},
    )
    cfg = {"upstreams": ups, "limits": {"auth_cache_s": 60}}
    with GatewayHarness(sqlite_db, tmp_path, cfg, classifier=classifier) as gw:
        key = gw.create_key()
        http = httpx.Client(base_url=gw.url, headers={"authorization": f"Bearer {key}"}, timeout=30)

        @settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
        @given(cases())
        def check(case: tuple[str, list[tuple[str, str, str]], int]) -> None:
            endpoint, picked, seed = case
            note(f"{endpoint} {picked}")
            rng = random.Random(seed)
            plants = [(place, PLANTS[kind][0](rng), PLANTS[kind][1]) for place, kind in picked]
            body = _body(endpoint, [(p, v) for p, v, _ in plants], rng, tok)
            before = len(fakes["vendor"].ledger)
            path = {
                "chat": "/v1/chat/completions",
                "completions": "/v1/completions",
                "embeddings": "/v1/embeddings",
                "messages": "/v1/messages",
                "responses": "/v1/responses",
            }[endpoint]
            r = http.post(path, json=body)
            assert r.status_code in (200, 403), r.text
            rid = r.headers.get("x-request-id")
            got = fakes["vendor"].ledger.bodies()[before:]
            seen = "\n".join(vendor_text(b, tok) for b in got)
            for place, value, _tier in plants:
                for form in {value, "".join(ch for ch in value if ch.isalnum())}:
                    assert _clean(form) not in seen, (place, endpoint)
            unreadable = any(place in ("audio", "a_image") for place, _, _ in plants)
            if any(tier == 3 for _, _, tier in plants) or unreadable:
                assert not got, ("a Tier-3 request reached the shared vendor", [p for p, _, _ in plants])
            if r.status_code == 200 and not unreadable:
                assert rid is not None
                (row,) = gw.rows("SELECT tier FROM audit_requests WHERE request_id = :r", {"r": rid})
                assert row["tier"] == max(t for _, _, t in plants)

        check()


def test_every_piece_of_a_body_is_in_its_content(tokenizer_path: Path) -> None:
    """The total content model as a property of ``extract_content`` alone: over arbitrary JSON
    in the free-form parts of a body, every key, every string and every long number is a
    segment (or opaque), and writing every segment back changed leaves none of them as it was."""
    from hypothesis import given as given_
    from tiers import apply_content, extract_content
    from tiers.types import Content, Segment

    leaves = st.one_of(
        st.text(min_size=1, max_size=12).map(lambda t: "Q" + t), st.integers(10**6, 10**17), st.booleans(), st.none()
    )
    blobs = st.recursive(
        leaves,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4),
            st.dictionaries(st.text(min_size=1, max_size=8).map(lambda t: "K" + t), inner, max_size=4),
        ),
        max_leaves=20,
    )

    @settings(max_examples=300, deadline=None)
    @given_(blobs, st.sampled_from(["metadata", "extra_vendor_field", "user"]))
    def check(blob: Any, where: str) -> None:
        # Two copies, as a JSON parser would make them (never one object at two places).
        body = {
            "model": "m",
            "messages": [{"role": "user", "content": "hi", "x": blob}],
            where: json.loads(json.dumps(blob)),
        }
        content = extract_content("chat", body)
        marked = Content(
            tuple(Segment(s.path, "\u00a7" + s.text, s.prompt, s.kind, s.via) for s in content.segments), content.opaque
        )
        out = apply_content(body, marked, content)
        for piece in _pieces(out):
            if piece in ("m", "user", "hi") or piece.startswith("\u00a7"):
                continue
            raise AssertionError(f"{piece!r} was not read")

    check()


def _pieces(value: Any) -> Iterator[str]:
    """Keys, strings and long numbers of a body, except the schema's own names."""
    schema = {"model", "messages", "role", "content", "metadata", "user", "extra_vendor_field", "x"}
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            if k not in schema:
                yield k
            yield from _pieces(v)
    elif isinstance(value, list):
        for v in value:
            yield from _pieces(v)
    elif isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**5:
        yield str(value)


# -- one test per way a value once slipped through unread ------------------------------------------

CARD = "4539578763621486"
EMAIL = "ivan.petrov@acme-mail.de"


def _chat(**extra: Any) -> dict[str, Any]:
    return {"model": "chat", "messages": [{"role": "user", "content": "Summarise, please."}], **extra}


def _part(part: dict[str, Any]) -> dict[str, Any]:
    return {"model": "chat", "messages": [{"role": "user", "content": [{"type": "text", "text": "see file"}, part]}]}


FINDINGS: dict[str, tuple[str, Any, str, int]] = {
    # name: (endpoint, body or a function of the tokenizer, planted value, tier)
    "completion token ids": ("completions", lambda tok: {"model": "chat", "prompt": tok(f"card {CARD}")}, CARD, 3),
    "embedding token ids (LangChain's default)": (
        "embeddings",
        lambda tok: {"model": "embed", "input": [tok(f"mail {EMAIL}"), tok("hello")]},
        EMAIL,
        2,
    ),
    "metadata key": ("chat", _chat(metadata={EMAIL: "1"}), EMAIL, 2),
    "tool-schema property name": (
        "chat",
        _chat(
            tools=[
                {
                    "type": "function",
                    "function": {
                        "name": "f",
                        "parameters": {"type": "object", "properties": {EMAIL: {"type": "string"}}},
                    },
                }
            ]
        ),
        EMAIL,
        2,
    ),
    "logit_bias key": ("chat", _chat(logit_bias={CARD: 5}), CARD, 3),
    "protocol-looking key inside metadata": ("chat", _chat(metadata={"a": {"id": EMAIL, "model": CARD}}), CARD, 3),
    "protocol-looking key inside a tool schema": (
        "chat",
        _chat(
            tools=[
                {
                    "type": "function",
                    "function": {"name": "f", "parameters": {"type": "object", "format": EMAIL, "role": EMAIL}},
                }
            ]
        ),
        EMAIL,
        2,
    ),
    "string starting with data:": ("chat", _chat(metadata={"note": "data:," + EMAIL}), EMAIL, 2),
    "key named input_audio in metadata": ("chat", _chat(metadata={"input_audio": {"x": EMAIL}}), EMAIL, 2),
    "number where text is expected": ("chat", _chat(metadata={"n": int(CARD)}), CARD, 3),
    "input_file part": (
        "chat",
        _part({"type": "input_file", "file_data": base64.b64encode(f"mail {EMAIL}".encode()).decode()}),
        EMAIL,
        2,
    ),
    "file_data as a list": (
        "chat",
        _part(
            {
                "type": "file",
                "file": {
                    "file_data": [
                        base64.b64encode(f"mail {EMAIL}!".encode()).decode()[:8],
                        base64.b64encode(f"mail {EMAIL}!".encode()).decode()[8:],
                    ]
                },
            }
        ),
        EMAIL,
        2,
    ),
    "file as a string": (
        "chat",
        _part(
            {"type": "file", "file": "data:text/plain;base64," + base64.b64encode(f"mail {EMAIL}".encode()).decode()}
        ),
        EMAIL,
        2,
    ),
    "image_url holding text/plain": (
        "chat",
        _part(
            {
                "type": "image_url",
                "image_url": {"url": "data:text/plain;base64," + base64.b64encode(f"card {CARD}".encode()).decode()},
            }
        ),
        CARD,
        3,
    ),
    "input_audio.data holding plain text": (
        "chat",
        _part(
            {
                "type": "input_audio",
                "input_audio": {"data": base64.b64encode(f"card {CARD}".encode()).decode(), "format": "wav"},
            }
        ),
        CARD,
        3,
    ),
    # Found by an adversarial review of the first version:
    "a card in seed": ("chat", _chat(seed=int(CARD)), CARD, 3),
    "a host in an enum field": (
        "chat",
        _part(
            {
                "type": "image_url",
                "image_url": {"url": "https://example.org/a.png", "detail": "payroll.corp.example.com"},
            }
        ),
        "payroll",
        2,
    ),
    "chunks with padding inside": (
        "chat",
        _part({"type": "file", "file": {"file_data": ["YQ==", base64.b64encode(f"card {CARD}".encode()).decode()]}}),
        CARD,
        3,
    ),
    "a charset the vendor does not read": (
        "chat",
        _part(
            {
                "type": "image_url",
                "image_url": {
                    "url": "data:text/plain;charset=utf-16;base64,"
                    + base64.b64encode(f"card {CARD} ".encode()).decode()
                },
            }
        ),
        CARD,
        3,
    ),
    "an unknown charset": (
        "chat",
        _part(
            {
                "type": "image_url",
                "image_url": {
                    "url": "data:text/plain;charset=undefined;base64,"
                    + base64.b64encode(f"card {CARD}".encode()).decode()
                },
            }
        ),
        CARD,
        3,
    ),
    "a PDF": (
        "chat",
        _part(
            {
                "type": "file",
                "file": {
                    "file_data": base64.b64encode(
                        b"\n%PDF-1.4\n1 0 obj <<>> endobj\n(card " + CARD.encode() + b")\n%%EOF"
                    ).decode()
                },
            }
        ),
        CARD,
        3,
    ),
    "a data URI in odd case": (
        "chat",
        _part(
            {
                "type": "image_url",
                "image_url": {"url": " dAta:text/plain;base64," + base64.b64encode(f"card {CARD}".encode()).decode()},
            }
        ),
        CARD,
        3,
    ),
    "a card as an inline file's name": (
        "chat",
        _part({"type": "file", "file": {"file_data": f"data:text/plain;name={CARD}.txt;base64," + _b64("ok\n")}}),
        CARD,
        3,
    ),
    "a long value after its key": (
        "chat",
        _chat(metadata={"bank account number": "912345678901" + " " * 600}),
        "912345678901",
        3,
    ),
}


@pytest.mark.parametrize("finding", sorted(FINDINGS))
def test_each_path_that_once_passed_unread(
    finding: str, fakes: FakeUpstreams, sqlite_db: str, tmp_path: Path, classifier: Any, tokenizer_path: Path
) -> None:
    """Each shape found forwarding a value unread: the value is read, the request gets its tier,
    and the shared vendor never receives the value in the clear (a Tier-3 one: nothing at all)."""
    tok = Tokenizer.from_file(str(tokenizer_path))
    for name in ("vendor", "local"):
        fakes[name].count_tokens = counter(tokenizer_path)
    ups = upstream_config(
        fakes, vendor={"tokenizer_file": str(tokenizer_path)}, local={"tokenizer_file": str(tokenizer_path)}
    )
    endpoint, body, value, tier = FINDINGS[finding]
    if callable(body):
        body = body(lambda text: tok.encode(text, add_special_tokens=False).ids)
    with GatewayHarness(sqlite_db, tmp_path, {"upstreams": ups}, classifier=classifier) as gw:
        path = {"chat": "/v1/chat/completions", "completions": "/v1/completions", "embeddings": "/v1/embeddings"}
        r = httpx.post(
            gw.url + path[endpoint], json=body, headers={"authorization": f"Bearer {gw.create_key()}"}, timeout=30
        )
        assert r.status_code == 200, r.text
        (row,) = gw.rows(
            "SELECT tier, upstream, findings FROM audit_requests WHERE request_id = :r",
            {"r": r.headers["x-request-id"]},
        )
    assert row["tier"] == tier
    seen = "\n".join(vendor_text(b, tok) for b in fakes["vendor"].ledger.bodies())
    assert value not in seen
    if tier == 3:
        assert len(fakes["vendor"].ledger) == 0 and row["upstream"] == "local"
    else:
        assert len(fakes["vendor"].ledger) == 1 and row["upstream"] == "vendor"


def test_an_unknown_model_name_is_never_stored_as_sent(gateway: GatewayHarness, sqlite_db: str) -> None:
    """A refused request's model string is whatever the client typed; it is not stored."""
    planted = f"{CARD} {EMAIL}"
    r = httpx.post(
        gateway.url + "/v1/chat/completions",
        json={"model": planted, "messages": [{"role": "user", "content": "hi"}]},
        headers={"authorization": f"Bearer {gateway.create_key()}"},
    )
    assert r.status_code == 404 and CARD not in r.text
    (row,) = gateway.rows("SELECT client_model, upstream FROM audit_requests ORDER BY seq DESC LIMIT 1")
    assert row["client_model"] is None and row["upstream"] is None
    db = Path(sqlite_db.split("///", 1)[1])
    gateway.settle()
    for f in db.parent.glob(db.name + "*"):  # the database file and its WAL
        assert CARD.encode() not in f.read_bytes() and EMAIL.encode() not in f.read_bytes()


def test_an_identifier_in_a_files_header_never_reaches_a_vendor(
    fakes: FakeUpstreams, sqlite_db: str, tmp_path: Path, classifier: Any, tokenizer_path: Path
) -> None:
    """A data URI's parameters (``;name=…``) are sent as written: an identifier there is read.
    One the shared vendor may get stripped refuses the request (400, the header is not
    rewritten), a Tier-3 one sends it on-prem; never is it in the shared vendor's ledger, and
    every request has its audit row."""
    tok = Tokenizer.from_file(str(tokenizer_path))
    for name in ("vendor", "local"):
        fakes[name].count_tokens = counter(tokenizer_path)
    ups = upstream_config(
        fakes, vendor={"tokenizer_file": str(tokenizer_path)}, local={"tokenizer_file": str(tokenizer_path)}
    )
    with GatewayHarness(sqlite_db, tmp_path, {"upstreams": ups}, classifier=classifier) as gw:
        http = httpx.Client(base_url=gw.url, headers={"authorization": f"Bearer {gw.create_key()}"}, timeout=30)

        @settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
        @given(
            kind=st.sampled_from(sorted(PLANTS)),
            seed=st.integers(0, 10**6),
            others=st.sampled_from(["content", "part"]),
        )
        def check(kind: str, seed: int, others: str) -> None:
            rng = random.Random(seed)
            value, tier = PLANTS[kind][0](rng), PLANTS[kind][1]
            body = _body("chat", [("file_header", value), (others, "plain words")], rng, tok)
            before = len(fakes["vendor"].ledger)
            (count,) = gw.rows("SELECT count(*) AS n FROM audit_requests")
            r = http.post("/v1/chat/completions", json=body)
            seen = "\n".join(vendor_text(b, tok) for b in fakes["vendor"].ledger.bodies()[before:])
            assert _clean(value) not in seen
            rows = gw.rows("SELECT tier, upstream, forwarded FROM audit_requests ORDER BY seq DESC LIMIT 1")
            assert gw.rows("SELECT count(*) AS n FROM audit_requests")[0]["n"] == count["n"] + 1  # its row
            assert rows[0]["tier"] == tier
            if tier == 3:
                assert r.status_code == 200 and rows[0]["upstream"] == "local", r.text
            else:
                assert r.status_code == 400 and r.json()["error"]["code"] == "file_header_holds_identifier", r.text
                assert not rows[0]["forwarded"] and len(fakes["vendor"].ledger) == before

        check()
