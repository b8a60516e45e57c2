"""The dashboard's errors, each with its HTTP status; rendered as HTML pages, never JSON.

::

    DashboardError (500)
    ├── SignInRequired (303 to the sign-in page)
    ├── BadInput (400)
    ├── CsrfRejected (403)
    ├── NotFound (404)          also for another tenant's rows: their existence is not revealed
    └── TooManyAttempts (429)
"""

from __future__ import annotations

from typing import ClassVar

__all__ = ["BadInput", "CsrfRejected", "DashboardError", "NotFound", "SignInRequired",
           "TooManyAttempts"]  # fmt: skip


class DashboardError(Exception):
    status_code: ClassVar[int] = 500
    title: ClassVar[str] = "Something went wrong"

    def __init__(self, message: str = "") -> None:
        super().__init__(message)
        self.message = message


class SignInRequired(DashboardError):
    status_code = 303
    title = "Sign in required"


class BadInput(DashboardError):
    status_code = 400
    title = "Bad input"


class CsrfRejected(DashboardError):
    status_code = 403
    title = "Form expired or forged"


class NotFound(DashboardError):
    status_code = 404
    title = "Not found"


class TooManyAttempts(DashboardError):
    status_code = 429
    title = "Too many failed sign-ins"

    def __init__(self, message: str, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s
