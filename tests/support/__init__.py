"""Reusable test support: the ledger-keeping fake upstream and real-server helpers."""

from tests.support.fake_upstream import HARDENED_MANIFEST, FakeUpstream, Ledger, Received, Scripted, byte_tokens
from tests.support.servers import GatewayProcess, ServerThread, free_port, serve, wait_http

__all__ = [
    "HARDENED_MANIFEST",
    "FakeUpstream",
    "GatewayProcess",
    "Ledger",
    "Received",
    "Scripted",
    "ServerThread",
    "byte_tokens",
    "free_port",
    "serve",
    "wait_http",
]
