"""The audit package's error tree; each class carries the HTTP status the gateway should answer.

    AuditError (500)
    ├── AuditUnavailable (503)      the database cannot be reached
    ├── AuditWriteError (503)       a record was not committed: forward nothing
    ├── DisclosureError (422)       a disclosure file is invalid; names the line
    └── RetentionError (400)        a retention setting or purge request is refused

Messages never carry prompt text: records hold none, and driver errors are reduced to their class
name before they reach a message.
"""

from __future__ import annotations

__all__ = [
    "AuditError",
    "AuditUnavailable",
    "AuditWriteError",
    "DisclosureError",
    "RetentionError",
]


class AuditError(Exception):
    status_code: int = 500


class AuditUnavailable(AuditError):
    status_code = 503


class AuditWriteError(AuditError):
    status_code = 503


class DisclosureError(AuditError):
    status_code = 422

    def __init__(self, message: str, line: int | None = None) -> None:
        self.line = line
        super().__init__(f"line {line}: {message}" if line is not None else message)


class RetentionError(AuditError):
    status_code = 400
