"""The ``tiers`` error tree. Every error carries the HTTP status the gateway should answer with.

::

    TiersError
    ├── ContentError      (ValueError) a request body whose shape cannot be read      -> 400
    ├── PolicyError       (ValueError) a policy file with an unknown key or bad value  -> 500
    ├── RecognizerError   (ValueError) a recognizer definition that cannot be built   -> 500
    └── StripError        stripping could not be done safely                          -> 500
        ├── VendorStateError  an identifier inside signed vendor state (thinking)        -> 400
        └── FileHeaderError   an identifier in an inline file's data-URI parameters      -> 400

Messages name keys, paths and recognizers; they never contain prompt text.
"""

from __future__ import annotations

__all__ = [
    "ContentError",
    "FileHeaderError",
    "PolicyError",
    "RecognizerError",
    "StripError",
    "TiersError",
    "VendorStateError",
]


class TiersError(Exception):
    """Base class of every error raised by ``tiers``."""

    status_code: int = 500


class ContentError(TiersError, ValueError):
    """The request body has a shape from which the prompt strings cannot be read."""

    status_code = 400


class PolicyError(TiersError, ValueError):
    """A policy file is missing, malformed, or has an unknown key or a bad value."""

    status_code = 500


class RecognizerError(TiersError, ValueError):
    """A recognizer (built-in or from a user's YAML file) cannot be built."""

    status_code = 500


class StripError(TiersError):
    """Identifiers could not be replaced safely; nothing may be forwarded."""

    status_code = 500


class VendorStateError(StripError):
    """An identifier that must be stripped sits inside vendor state (a thinking block, its
    signature, encrypted reasoning), which the vendor refuses edited. The client's request, not
    the gateway, has to change (leave that turn's thinking out): a 400, never retried as a 5xx."""

    status_code = 400


class FileHeaderError(StripError):
    """An identifier that must be stripped sits in an inline file's data-URI header (a
    ``;name=`` or other parameter): the header is read, but rewriting it would change what the
    client named the file, so the client has to send the file without it. A 400."""

    status_code = 400
