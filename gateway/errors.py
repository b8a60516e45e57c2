"""The gateway's error tree, each class carrying its HTTP status and OpenAI error type.

::

    GatewayError (500 server_error)
    ├── BadRequest (400 invalid_request_error)
    │   └── PromptTooLong (400, code context_length_exceeded)
    ├── Unauthorized (401 authentication_error)
    ├── Forbidden (403 permission_error)
    │   ├── TierNotAllowed (403, code tier_not_allowed)
    │   └── ModelNotAllowed (403, code model_not_allowed)
    ├── NotFound (404 invalid_request_error)
    ├── PayloadTooLarge (413 invalid_request_error)
    ├── Unprocessable (422 invalid_request_error)
    ├── RateLimited (429 rate_limit_exceeded)
    ├── UpstreamError (502 upstream_error)
    │   └── UpstreamIntegrityError (502, code upstream_integrity_error)
    ├── Unavailable (503 service_unavailable)
    │   ├── AuditUnavailable (503, code audit_unavailable)
    │   └── Quarantined (503, code upstream_quarantined or quarantine_state_unknown)
    └── UpstreamTimeout (504 timeout)

Each class also carries the outcome kind (``audit.types.OutcomeKind``) an attempt it ends is
recorded with: the upstream's failures as what they are, everything else as a refusal.

Messages are fixed strings chosen by the gateway: never prompt text, upstream bodies or exception
text from a dependency (which may quote the prompt).
"""

from __future__ import annotations

from typing import Any, ClassVar

from audit.types import OutcomeKind

__all__ = [
    "AuditUnavailable",
    "BadRequest",
    "Forbidden",
    "GatewayError",
    "MethodNotAllowed",
    "ModelNotAllowed",
    "NotFound",
    "PayloadTooLarge",
    "PromptTooLong",
    "Quarantined",
    "RateLimited",
    "TierNotAllowed",
    "Unauthorized",
    "Unavailable",
    "Unprocessable",
    "UpstreamError",
    "UpstreamIntegrityError",
    "UpstreamTimeout",
    "error_body",
]


def error_body(message: str, type_: str, code: str | None, param: str | None = None) -> dict[str, Any]:
    """The OpenAI error shape, which the official SDKs turn into their usual exceptions."""
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


class GatewayError(Exception):
    status_code: ClassVar[int] = 500
    error_type: ClassVar[str] = "server_error"
    default_code: ClassVar[str | None] = "internal_error"
    default_message: ClassVar[str] = "internal error"
    outcome: ClassVar[OutcomeKind] = OutcomeKind.REFUSED

    def __init__(
        self,
        message: str | None = None,
        *,
        code: str | None = None,
        param: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.message = message or self.default_message
        self.code = code or self.default_code
        self.param = param
        self.headers = headers or {}
        super().__init__(self.message)

    @property
    def error_class(self) -> str:
        """A short, stable label for metrics and the audit row's ``error_class``."""
        return self.code or self.error_type

    def body(self) -> dict[str, Any]:
        return error_body(self.message, self.error_type, self.code, self.param)


class BadRequest(GatewayError):
    status_code = 400
    error_type = "invalid_request_error"
    default_code = "invalid_request"
    default_message = "invalid request"


class PromptTooLong(BadRequest):
    default_code = "context_length_exceeded"
    default_message = "the prompt is longer than any eligible upstream accepts"


class Unauthorized(GatewayError):
    status_code = 401
    error_type = "authentication_error"
    default_code = "invalid_api_key"
    default_message = "missing, unknown or revoked API key"


class Forbidden(GatewayError):
    status_code = 403
    error_type = "permission_error"
    default_code = "forbidden"
    default_message = "not allowed"


class TierNotAllowed(Forbidden):
    default_code = "tier_not_allowed"
    default_message = "the prompt's tier may not be sent to any upstream available for this model"


class ModelNotAllowed(Forbidden):
    default_code = "model_not_allowed"
    default_message = "this API key may not use this model"


class MethodNotAllowed(GatewayError):
    status_code = 405
    error_type = "invalid_request_error"
    default_code = "method_not_allowed"
    default_message = "method not allowed"


class NotFound(GatewayError):
    status_code = 404
    error_type = "invalid_request_error"
    default_code = "model_not_found"
    default_message = "unknown model"


class PayloadTooLarge(GatewayError):
    status_code = 413
    error_type = "invalid_request_error"
    default_code = "request_too_large"
    default_message = "request body too large"


class Unprocessable(GatewayError):
    status_code = 422
    error_type = "invalid_request_error"
    default_code = "unprocessable"
    default_message = "the request could not be processed"


class RateLimited(GatewayError):
    status_code = 429
    error_type = "rate_limit_exceeded"
    default_code = "rate_limited"
    default_message = "rate limit exceeded for this API key"


class UpstreamError(GatewayError):
    status_code = 502
    error_type = "upstream_error"
    default_code = "upstream_error"
    default_message = "the upstream failed"
    outcome = OutcomeKind.UPSTREAM_ERROR


class UpstreamIntegrityError(UpstreamError):
    default_code = "upstream_integrity_error"
    default_message = "the upstream's answer failed the integrity check and was withheld"
    outcome = OutcomeKind.INTEGRITY_ERROR


class Unavailable(GatewayError):
    status_code = 503
    error_type = "service_unavailable"
    default_code = "unavailable"
    default_message = "service unavailable"


class AuditUnavailable(Unavailable):
    default_code = "audit_unavailable"
    default_message = "the audit log is unavailable; nothing was forwarded"


class Quarantined(Unavailable):
    default_code = "upstream_quarantined"
    default_message = "every upstream that may receive this request is quarantined; nothing was forwarded"


class UpstreamTimeout(GatewayError):
    status_code = 504
    error_type = "timeout"
    default_code = "upstream_timeout"
    default_message = "the upstream timed out"
    outcome = OutcomeKind.TIMEOUT
