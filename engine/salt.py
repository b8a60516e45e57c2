"""Per-tenant prefix-cache salts.

vLLM shares KV blocks between requests whose token prefix *and* ``cache_salt`` are equal. The
gateway sets the salt on every on-prem request (never the client: a client that could pick its
salt could pick another tenant's), derived from a server secret so that a salt seen in a log or a
packet capture reveals neither the tenant nor the salts of others.

The HMAC input is framed as ``b"tiergate-cache-salt\\x00" + len(tenant) (8 bytes, big endian) +
tenant``: a fixed domain tag keeps these MACs apart from any other use of the same key, and the
length prefix makes every (tenant) encoding unambiguous even if the framing later grows fields.
"""

from __future__ import annotations

import hashlib
import hmac

__all__ = ["SALT_DOMAIN", "derive_cache_salt"]

SALT_DOMAIN = b"tiergate-cache-salt\x00"

# 16 bytes min: a short key would let anyone who sees salts brute-force the key, then every tenant.
_MIN_KEY_BYTES = 16


def _frame(*fields: bytes) -> bytes:
    return b"".join(len(f).to_bytes(8, "big") + f for f in fields)


def derive_cache_salt(key: bytes, tenant: str) -> str:
    """The ``cache_salt`` for ``tenant``: hex HMAC-SHA256(key, domain || len(tenant) || tenant).

    Raises ``ValueError`` on a key shorter than 16 bytes or an empty tenant; both are
    configuration errors that must stop the request, never fall back to an unsalted one.
    """
    if not isinstance(key, bytes | bytearray) or len(key) < _MIN_KEY_BYTES:
        raise ValueError(f"cache-salt key must be at least {_MIN_KEY_BYTES} bytes")
    if not tenant:
        raise ValueError("cache-salt tenant must be a non-empty string")
    message = SALT_DOMAIN + _frame(tenant.encode("utf-8"))
    return hmac.new(bytes(key), message, hashlib.sha256).hexdigest()
