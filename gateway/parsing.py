"""Reading a request body: JSON, then the few fields the gateway itself needs (model, stream),
then the request protocol's own checks (``gateway/protocols``).

Pure and picklable in its results, so that it can run in a classification worker process along
with everything else a large body costs (decoding 8 MB of JSON holds the interpreter for tens of
milliseconds).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec

from gateway.errors import BadRequest, Unprocessable
from gateway.protocols import PROTOCOLS

__all__ = ["ParsedBody", "parse_body"]

_decode = msgspec.json.Decoder()
# Longest model name accepted; an unknown one is never stored as sent (see audit_model_name).
MAX_MODEL_CHARS = 200


@dataclass(frozen=True, slots=True)
class ParsedBody:
    body: dict[str, Any] = field(repr=False)  # the prompt: never in a repr (logs, tracebacks)
    model: str
    stream: bool


def parse_body(endpoint: str, raw: bytes) -> ParsedBody:
    """The decoded body, or a 400/422 ``GatewayError`` naming the field (never its value)."""
    try:
        body = _decode.decode(raw)
    except msgspec.DecodeError:
        raise BadRequest("the request body is not valid JSON") from None
    except RecursionError:  # msgspec's own nesting bound
        raise BadRequest("the request body is nested too deeply") from None
    if not isinstance(body, dict):
        raise Unprocessable("the request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model or len(model) > MAX_MODEL_CHARS:
        raise Unprocessable("'model' must be a non-empty string", param="model")
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise Unprocessable("'stream' must be a boolean", param="stream")
    protocol = PROTOCOLS[endpoint]
    if stream and not protocol.streams:
        raise Unprocessable(f"{endpoint} cannot be streamed", param="stream")
    protocol.validate(body, stream)
    return ParsedBody(body, model, stream)
