"""The write-ahead audit log: records, keys, tamper evidence, retention and exposure reports."""

from audit.assessment import Assessment, Verdict, assess
from audit.disclosures import DisclosureSpec, load_disclosure, parse_disclosure, save_disclosure
from audit.errors import (
    AuditError,
    AuditUnavailable,
    AuditWriteError,
    DisclosureError,
    RetentionError,
)
from audit.fingerprint import fingerprint, normalize_for_fingerprint
from audit.matching import DocumentMatch, match_fingerprint
from audit.queries import ExposureFilter, ExposureRow, count_rows, stream_rows
from audit.retention import PurgeResult
from audit.settings import AuditSettings
from audit.store import AuditStore
from audit.types import KeyInfo, Outcome, RequestRecord
from audit.verify import Problem, VerifyReport

__all__ = [
    "Assessment",
    "AuditError",
    "AuditSettings",
    "AuditStore",
    "AuditUnavailable",
    "AuditWriteError",
    "DisclosureError",
    "DisclosureSpec",
    "DocumentMatch",
    "ExposureFilter",
    "ExposureRow",
    "KeyInfo",
    "Outcome",
    "Problem",
    "PurgeResult",
    "RequestRecord",
    "RetentionError",
    "Verdict",
    "VerifyReport",
    "assess",
    "count_rows",
    "fingerprint",
    "load_disclosure",
    "match_fingerprint",
    "normalize_for_fingerprint",
    "parse_disclosure",
    "save_disclosure",
    "stream_rows",
]
