"""The wire protocols the gateway serves, one module each (see ``base.py`` for what each says)."""

from __future__ import annotations

from gateway.protocols.anthropic import COUNT_TOKENS, MESSAGES
from gateway.protocols.base import Protocol
from gateway.protocols.openai import CHAT, COMPLETIONS, EMBEDDINGS
from gateway.protocols.responses import RESPONSES

__all__ = ["PROTOCOLS", "WIRES", "Protocol", "protocol_for"]

PROTOCOLS: dict[str, Protocol] = {p.name: p for p in (CHAT, COMPLETIONS, EMBEDDINGS, RESPONSES, MESSAGES, COUNT_TOKENS)}
# What an upstream may list in ``protocols``.
WIRES = ("openai", "responses", "anthropic")


def protocol_for(endpoint: str) -> Protocol:
    return PROTOCOLS[endpoint]
