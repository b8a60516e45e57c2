"""The per-tenant cache salt: keyed, deterministic, unambiguous."""

from __future__ import annotations

import hashlib
import hmac

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.salt import SALT_DOMAIN, derive_cache_salt

KEY = b"k" * 32


def test_salt_is_hmac_sha256_of_the_length_prefixed_tenant() -> None:
    """The salt equals HMAC-SHA256(key, domain || 8-byte length || tenant), hex encoded."""
    expected = hmac.new(KEY, SALT_DOMAIN + (4).to_bytes(8, "big") + b"acme", hashlib.sha256).hexdigest()
    assert derive_cache_salt(KEY, "acme") == expected
    assert len(expected) == 64


def test_salt_depends_on_key_and_tenant() -> None:
    """Another key or another tenant gives another salt; the same pair gives the same salt."""
    assert derive_cache_salt(KEY, "acme") == derive_cache_salt(KEY, "acme")
    assert derive_cache_salt(KEY, "acme") != derive_cache_salt(KEY, "acme2")
    assert derive_cache_salt(KEY, "acme") != derive_cache_salt(b"j" * 32, "acme")


@given(st.text(min_size=1, max_size=40), st.text(min_size=1, max_size=40))
def test_distinct_tenants_never_share_a_salt(a: str, b: str) -> None:
    """Distinct tenant names (including prefixes and NUL-containing names) get distinct salts."""
    if a != b:
        assert derive_cache_salt(KEY, a) != derive_cache_salt(KEY, b)


@pytest.mark.parametrize(("key", "tenant"), [(b"short", "acme"), (KEY, ""), ("k" * 32, "acme")])
def test_bad_key_or_tenant_is_refused(key: object, tenant: str) -> None:
    """A short or non-bytes key and an empty tenant raise instead of salting weakly."""
    with pytest.raises(ValueError):
        derive_cache_salt(key, tenant)  # type: ignore[arg-type]  # deliberately the wrong type: the test is that it is refused
