"""What one wire protocol is to the pipeline: the one place its details live.

The pipeline is one flow for every protocol; where a step depends on the protocol, it asks the
request's :class:`Protocol`: how the body is validated, which content schema reads it (the total
content model, ``tiers.content``), which headers travel on to the upstream, what the gateway sets
in the outbound body, how prompt tokens are counted and reported, how an answer is checked and
restored, how a stream is relayed, and how an error looks to this protocol's clients.

An upstream declares the wires it speaks (``UpstreamSettings.protocols``); routing only picks
upstreams that speak the request's ``wire``.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, ClassVar

from gateway.errors import GatewayError, PromptTooLong

if TYPE_CHECKING:
    from gateway.routing import Candidate
    from gateway.streaming import StreamResult
    from gateway.tokens import PromptCount
    from gateway.upstream import UpstreamResponse
    from tiers.types import Tier

__all__ = ["Protocol", "Usage"]

# Usage in one shape for the audit row and the integrity check, whatever the protocol reports.
Usage = dict[str, Any]  # {"prompt_tokens": int, "completion_tokens": int} (OpenAI's names)


class Protocol:
    name: ClassVar[str]  # the endpoint label (metrics, audit) and the content schema's name
    wire: ClassVar[str]  # what an upstream lists in ``protocols`` to serve it
    path: ClassVar[str]  # appended to the upstream's base_url
    streams: ClassVar[bool] = True

    # ---- the request ------------------------------------------------------------------------

    def validate(self, body: dict[str, Any], stream: bool) -> None:
        """Raise a 422 naming the field (never its value) for a body this protocol refuses."""

    def forward_headers(self, headers: Any) -> dict[str, str]:
        """Client headers that travel on to the upstream unchanged (validated, never free text)."""
        return {}

    def prepare(self, out: dict[str, Any], *, stream: bool, candidate: Candidate, tier: Tier) -> None:
        """Set what the gateway owns in the outbound body (in place)."""

    def admits(self, body: dict[str, Any], candidate: Candidate, tier: Tier) -> bool:
        """Whether this candidate may take this request under the protocol's own rules."""
        return True

    def refused(self) -> GatewayError | None:
        """The error when :meth:`admits` left no candidate (None: the usual tier refusal)."""
        return None

    def token_ids(self, body: dict[str, Any]) -> int:
        """Prompt token ids (not strings) the body carries, counted exactly."""
        return 0

    # The protocol's own counting route under the upstream's base_url (None: its tokenize_url).
    count_path: ClassVar[str | None] = None

    def tokenize_request(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """The body that counts this prompt at the upstream (its ``tokenize_url``, or
        ``count_path``); None: the estimate stands."""
        return None

    def too_long(self) -> GatewayError:
        """The refusal of a prompt no eligible upstream may take."""
        return PromptTooLong()

    # ---- the answer -------------------------------------------------------------------------

    def usage(self, data: dict[str, Any]) -> Usage | None:
        """A whole answer's usage in OpenAI's names (prompt tokens as the upstream counted them)."""
        raw = data.get("usage")
        return raw if isinstance(raw, dict) else None

    def check_answer(self, count: PromptCount, data: dict[str, Any]) -> str | None:
        """An integrity failure reason for a whole answer, or None."""
        return None

    def restore(self, data: dict[str, Any], mapping: dict[str, str], client_model: str) -> None:
        """Put identifiers back into a whole answer, and the client's model name (in place)."""

    def relay(
        self,
        response: UpstreamResponse,
        *,
        mapping: dict[str, str],
        count: PromptCount,
        promised_usage: bool,
        body: dict[str, Any],
        client_model: str,
        on_done: Callable[[StreamResult], Awaitable[None] | None],
        on_state: Callable[[list[str]], None] | None = None,
    ) -> AsyncGenerator[bytes, None]:
        """The client's stream; ``on_state`` hears the vendor state of a stream that ended well."""
        raise NotImplementedError

    def vendor_state(self, data: dict[str, Any]) -> list[str]:
        """The vendor state values of a whole answer (signatures, encrypted reasoning)."""
        return []

    # ---- errors -----------------------------------------------------------------------------

    def error_body(self, exc: GatewayError) -> dict[str, Any]:
        """The error as this protocol's clients (their SDKs) expect it."""
        return exc.body()
