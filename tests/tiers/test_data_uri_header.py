"""An inline file's data-URI header reaches the vendor as written, so what it says beyond the
payload's decoding (a ``;name=``, made-up parameters, a "media type" that is an address) is read
as a segment of its own, never rewritten: an identifier there that the tier must strip refuses
the request (``FileHeaderError``, a 400), one that decides the tier decides it. A header that is
only a media type, a charset and ``;base64`` adds nothing to read. The client's media type never
lands in an audit reason unless it is a registered top-level type."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tiers import Classifier, extract_content
from tiers.content import DATA_URI_HEADER, apply_content
from tiers.errors import FileHeaderError

_TOKEN = st.from_regex(r"[a-z0-9][a-z0-9.+-]{0,12}", fullmatch=True)
_EMAIL = st.builds(
    lambda u, d: f"{u}@{d}-mail.com",
    st.from_regex(r"[a-z]{4,10}\.[a-z]{3,8}", fullmatch=True),
    st.from_regex(r"[a-z]{4,9}", fullmatch=True),
)


def _body(uri: str) -> dict[str, object]:
    return {"model": "m", "messages": [{"role": "user", "content": [{"type": "file", "file": {"file_data": uri}}]}]}


@settings(max_examples=200, deadline=None)
@given(
    top=st.sampled_from(["text", "application"]),
    sub=_TOKEN,
    charset=st.sampled_from(["", ";charset=utf-8", ";charset=US-ASCII"]),
    b64=st.booleans(),
)
def test_a_plain_header_adds_nothing_to_read(top: str, sub: str, charset: str, b64: bool) -> None:
    payload = base64.b64encode(b"plain words\n").decode() if b64 else "plain%20words"
    content = extract_content("chat", _body(f"data:{top}/{sub}{charset}{';base64' if b64 else ''},{payload}"))
    assert all(seg.kind != "header" for seg in content.segments)


@settings(max_examples=120, deadline=None)
@given(email=_EMAIL, name=st.sampled_from(["name", "filename", "x-owner"]), b64=st.booleans())
def test_an_identifier_in_a_header_is_found_and_never_rewritten(
    clf: Classifier, email: str, name: str, b64: bool
) -> None:
    payload = base64.b64encode(b"ok\n").decode() if b64 else "ok"
    header = f"data:text/plain;{name}={email}{';base64' if b64 else ''},"
    body = _body(header + payload)
    content = extract_content("chat", body)
    (seg,) = [s for s in content.segments if s.kind == "header"]
    assert seg.text == header[5:-1] and seg.path[-1] == DATA_URI_HEADER
    decision = clf.classify(content)
    found = [content.segments[f.segment].text[f.start : f.end] for f in decision.findings]
    assert email in found
    stripped = clf.strip(content, decision)
    with pytest.raises(FileHeaderError) as exc:
        apply_content(body, stripped.content, content)
    assert email not in str(exc.value)  # messages never carry prompt text


@settings(max_examples=120, deadline=None)
@given(email=_EMAIL)
def test_a_clients_media_type_never_lands_in_a_reason(clf: Classifier, email: str) -> None:
    content = extract_content("chat", _body(f"data:{email}/x;base64," + base64.b64encode(b"\x00\x01").decode()))
    decision = clf.classify(content)
    assert all(email not in r and email.split("@")[0] not in r for r in decision.reasons)
    assert all(email.split("@")[0] not in o.what for o in content.opaque)
    # and the header itself is read: the address decides the tier
    assert any(content.segments[f.segment].kind == "header" for f in decision.findings)
