"""One tenant's worst-case bodies cannot stall the gateway for the others.

Large bodies are decoded and classified in worker processes; the event loop only moves bytes.
While attackers keep several multi-megabyte bodies in flight — long digit runs with separators,
hundreds of thousands of tiny strings, identifiers everywhere — another tenant's small chat
requests and ``/healthz`` keep answering. The bound is generous (CI machines are slow and the
fake vendor shares this process); before classification left the loop, the same load held every
request for over ten seconds (bench/isolation.py measures it against an older commit).
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from tests.support.harness import GatewayHarness

_MB = 1 << 20


def _worst_cases() -> list[dict[str, Any]]:
    digits = " ".join(f"{i:04d}" for i in range(int(1.3 * _MB) // 5))  # groups that look like cards
    tiny = {f"k{i}": "x" for i in range(300_000)}  # more strings than a request may carry
    mixed = "\n".join(
        f"row {i}: jane.doe{i}@acme-mail.de +49 30 1234{i:04d} DE41260500001562807131" for i in range(3 * _MB // 80)
    )
    return [
        {"model": "chat", "user": digits, "messages": [{"role": "user", "content": "hi"}]},
        {"model": "chat", "metadata": tiny, "messages": [{"role": "user", "content": "hi"}]},
        {"model": "chat", "messages": [{"role": "user", "content": mixed}]},
    ]


def test_worst_case_bodies_do_not_stall_other_tenants(gateway: GatewayHarness) -> None:
    attacker = gateway.create_key("mallory")
    victim = gateway.create_key("acme")
    bodies = _worst_cases()
    stop = threading.Event()
    statuses: list[int] = []

    def attack(i: int) -> None:
        with httpx.Client(base_url=gateway.url, timeout=120, headers={"authorization": f"Bearer {attacker}"}) as c:
            while not stop.is_set():
                statuses.append(c.post("/v1/chat/completions", json=bodies[i % len(bodies)]).status_code)

    small = {"model": "chat", "messages": [{"role": "user", "content": "What is the capital of France?"}]}
    latencies: list[float] = []
    with ThreadPoolExecutor(4) as pool:
        for i in range(4):
            pool.submit(attack, i)
        time.sleep(2.0)  # the attack is under way: bodies uploading, workers busy
        with httpx.Client(base_url=gateway.url, timeout=30, headers={"authorization": f"Bearer {victim}"}) as c:
            deadline = time.monotonic() + 8.0
            while time.monotonic() < deadline:
                t = time.perf_counter()
                assert c.get("/healthz").status_code == 200
                r = c.post("/v1/chat/completions", json=small)
                latencies.append(time.perf_counter() - t)
                assert r.status_code == 200, r.text
        stop.set()
    assert statuses, "the attack never completed a request"
    assert set(statuses) <= {200, 400, 403, 503}, statuses
    latencies.sort()
    # Generous, for a loaded CI machine: most answers stay fast, none waits for the attack.
    assert len(latencies) >= 10, latencies
    assert latencies[len(latencies) * 9 // 10] < 0.5 and latencies[-1] < 5.0, latencies[-5:]
