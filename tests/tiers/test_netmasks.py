"""A network mask is the same in every network: it identifies no host, whatever carries it, while
a host's address beside it is still found."""

from __future__ import annotations

import ipaddress

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tiers import Classifier, Content, Segment
from tiers.recognizers.network import _EXAMPLE_ADDRESSES

_CARRIERS = ["netmask {m}", "mask={m}", 'subnet_mask: "{m}"', "{m}", "ip {h} mask {m}", "{h}/{m}", "<mask>{m}</mask>"]


def _hosts() -> st.SearchStrategy[str]:
    """Public unicast addresses that no rule reads as something else (no mask, no example or
    public resolver's address such as 1.0.0.1, no version's shape)."""
    return (
        st.integers(0x01000000, 0xDFFFFFFF)
        .map(lambda n: ipaddress.IPv4Address(n))
        .filter(lambda a: a.is_global and not a.is_multicast and str(a).split(".")[-1] not in ("0", "255"))
        .filter(lambda a: str(a) not in _EXAMPLE_ADDRESSES)
        .filter(lambda a: max(a.packed) > 9)  # "4.0.0.1": four single digits number a release
        .map(str)
    )


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prefix=st.integers(1, 31), carrier=st.sampled_from(_CARRIERS), host=_hosts())
def test_a_mask_is_no_address_and_a_host_beside_it_is(clf: Classifier, prefix: int, carrier: str, host: str) -> None:
    mask = str(ipaddress.IPv4Network(f"0.0.0.0/{prefix}").netmask)
    text = carrier.format(m=mask, h=host)
    found = [text[f.start : f.end] for f in clf.classify(Content((Segment(("m",), text),))).findings
             if f.entity_type == "IP_ADDRESS"]  # fmt: skip
    assert mask not in found
    assert found == ([host] if "{h}" in carrier else [])
