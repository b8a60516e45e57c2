"""``X-Tiergate-Tier`` sent more than once: the highest value wins, whatever the order, and one bad
value among them is a 400 with nothing forwarded. A client (or a proxy that joins repeated fields
with commas) must never lower the tier by sending a low value first."""

from __future__ import annotations

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway.asgi import Headers
from gateway.errors import BadRequest
from gateway.pipeline import _requested_tier
from tests.support.harness import FakeUpstreams, GatewayHarness
from tiers.types import Tier

HARMLESS = {"model": "chat", "messages": [{"role": "user", "content": "What is the boiling point of water?"}]}
VALID = ("1", "2", "3")


def _post(gw: GatewayHarness, key: str, tiers: list[str]) -> httpx.Response:
    headers = [("authorization", f"Bearer {key}"), *(("X-Tiergate-Tier", t) for t in tiers)]
    return httpx.post(gw.url + "/v1/chat/completions", json=HARMLESS, headers=headers, timeout=30)


@pytest.mark.parametrize("tiers", [["1", "3"], ["3", "1"], ["2", "1", "3"], ["1, 3"], ["1,3", "2"]])
def test_repeated_tier_header_highest_wins(gateway: GatewayHarness, fakes: FakeUpstreams, tiers: list[str]) -> None:
    """A harmless prompt asked up to 3 by any one of the values goes on-prem only."""
    r = _post(gateway, gateway.create_key(), tiers)
    assert r.status_code == 200, r.text
    assert r.headers["x-tiergate-tier"] == "3"
    assert len(fakes["vendor"].ledger) == 0 and len(fakes["local"].ledger) == 1


@pytest.mark.parametrize("tiers", [["3", "0"], ["1", "high"], ["3", ""], ["2, x"], ["1,,3"]])
def test_any_bad_tier_value_is_400_nothing_forwarded(gateway: GatewayHarness, fakes: FakeUpstreams,
                                                     tiers: list[str]) -> None:  # fmt: skip
    r = _post(gateway, gateway.create_key(), tiers)
    assert r.status_code == 400, r.text
    assert r.json()["error"]["param"] == "x-tiergate-tier"
    assert len(fakes["vendor"].ledger) == 0 and len(fakes["local"].ledger) == 0


_values = st.lists(st.sampled_from([*VALID, " 2 ", "0", "4", "", "x", "1,3", "3, 2", "2,"]), min_size=1, max_size=5)


@given(values=_values, other=st.sampled_from([b"accept", b"x-tiergate-tiers", b"x-request-id"]))
def test_requested_tier_is_the_highest_or_refused(values: list[str], other: bytes) -> None:
    """For any sequence of header fields (interleaved with other headers, any case), the floor is
    the highest element, or the request is refused when any element is not 1, 2 or 3."""
    raw: list[tuple[bytes, bytes]] = []
    for i, v in enumerate(values):
        raw.append((b"X-Tiergate-Tier" if i % 2 else b"x-tiergate-tier", v.encode()))
        raw.append((other, b"3"))
    elements = [e.strip() for v in values for e in v.split(",")]
    if all(e in VALID for e in elements):
        assert _requested_tier(Headers(raw)) == Tier(max(int(e) for e in elements))
    else:
        with pytest.raises(BadRequest):
            _requested_tier(Headers(raw))


def test_no_tier_header_is_tier_1() -> None:
    assert _requested_tier(Headers([(b"accept", b"*/*")])) == Tier.GENERAL
