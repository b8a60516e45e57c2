"""The write-ahead audit log: records, keys, tamper evidence, retention and exposure reports."""

from audit.errors import (
    AuditError,
    AuditUnavailable,
    AuditWriteError,
    DisclosureError,
    RetentionError,
)
from audit.fingerprint import fingerprint, normalize_for_fingerprint
from audit.settings import AuditSettings
from audit.store import AuditStore
from audit.types import KeyInfo, Outcome, RequestRecord
from audit.verify import Problem, VerifyReport

__all__ = [
    "AuditError",
    "AuditSettings",
    "AuditStore",
    "AuditUnavailable",
    "AuditWriteError",
    "DisclosureError",
    "KeyInfo",
    "Outcome",
    "Problem",
    "RequestRecord",
    "RetentionError",
    "VerifyReport",
    "fingerprint",
    "normalize_for_fingerprint",
]
