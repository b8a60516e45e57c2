"""The fault proxy itself: each fault really happens on the wire, and heal() really undoes it."""

from __future__ import annotations

import httpx
import pytest

from tests.support import FakeUpstream, serve
from tests.support.fault_proxy import FaultProxy


def _get(proxy: FaultProxy, timeout: float = 2.0) -> httpx.Response:
    return httpx.get(f"http://{proxy.address}/v1/models", timeout=timeout)


def test_pass_through_then_each_fault_then_heal() -> None:
    """Pass-through works; latency beyond the read timeout, blackhole, reset-after-N and refuse each
    break a request in their own way; heal restores service every time."""
    fake = FakeUpstream()
    with serve(fake.app, lifespan="off") as server, FaultProxy("127.0.0.1", server.port) as proxy:
        assert _get(proxy).json() == {"object": "list", "data": []}

        proxy.latency(0.5)
        with pytest.raises(httpx.ReadTimeout):
            _get(proxy, timeout=0.1)
        proxy.heal()
        assert _get(proxy).status_code == 200

        proxy.blackhole()
        with pytest.raises(httpx.ReadTimeout):
            _get(proxy, timeout=0.3)
        assert proxy.stats.swallowed_bytes > 0
        proxy.heal()
        assert _get(proxy).status_code == 200

        proxy.reset_after(20)
        with pytest.raises((httpx.RemoteProtocolError, httpx.ReadError)):
            _get(proxy)
        assert proxy.stats.resets >= 1
        proxy.heal()
        assert _get(proxy).status_code == 200

        proxy.refuse()
        with pytest.raises(httpx.ConnectError):
            _get(proxy)
        proxy.heal()
        assert _get(proxy).status_code == 200


def test_blackhole_pauses_open_connections_and_reset_all_kills_them() -> None:
    """A blackhole also stalls a kept-alive connection (a paused server), and reset_all drops it."""
    fake = FakeUpstream()
    with serve(fake.app, lifespan="off") as server, FaultProxy("127.0.0.1", server.port) as proxy:
        with httpx.Client(base_url=f"http://{proxy.address}", timeout=0.3) as client:
            assert client.get("/v1/models").status_code == 200
            assert proxy.open_connections == 1
            proxy.blackhole()
            with pytest.raises(httpx.ReadTimeout):
                client.get("/v1/models")
            proxy.heal()
            proxy.reset_all()
            assert proxy.open_connections == 0
            assert client.get("/v1/models").status_code == 200  # a fresh connection


def test_pause_holds_bytes_until_heal() -> None:
    """pause() stalls a request without losing it: after heal() the same request completes."""
    import threading

    fake = FakeUpstream()
    with serve(fake.app, lifespan="off") as server, FaultProxy("127.0.0.1", server.port) as proxy:
        proxy.pause()
        box: list[httpx.Response] = []
        t = threading.Thread(target=lambda: box.append(_get(proxy, timeout=10)))
        t.start()
        t.join(timeout=0.5)
        assert t.is_alive() and not box  # held while paused
        proxy.heal()
        t.join(timeout=10)
        assert box and box[0].status_code == 200
