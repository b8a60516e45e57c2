"""The published constants of MD5, SHA-1 and SHA-2 as 32-bit words: numbers every hash
implementation writes out, in every minified JavaScript bundle too (``this._al=4089235720``, the
low half of SHA-512's first initial value, beside ``this._dl=…``, whose name spells a driver's
licence's context word). Ten-digit numbers of that kind are no licence, account or phone number.

Computed here from their definitions rather than listed: SHA-2's are the fractional parts of the
square and cube roots of the first primes (FIPS 180-4, 4.2 and 5.3), exact in integer arithmetic;
MD5's are ``floor(2**32 * abs(sin(i)))`` for i = 1 … 64 (RFC 1321, 3.4); SHA-1's (FIPS 180-4,
4.2.1 and 5.3.1) from their byte pattern and roots. 64-bit words count by their two halves, as JavaScript writes them, and
every word also as a signed 32-bit integer (``-1521486534``), as ``| 0`` makes it.
"""

from __future__ import annotations

import math
from functools import cache
from math import isqrt

__all__ = ["hash_constant"]


def _sha1() -> list[int]:
    """SHA-1's initial values (bytes 01 23 … EF, FE DC … 10, F0 E1 D2 C3 as little-endian words)
    and its round constants (the square roots of 2, 3, 5 and 10 times 2**30). Computed, not
    written out: hypothesis draws the integer literals of the code under test, and tests that
    draw numbers would meet them."""
    pattern = bytes([0x01 + 0x22 * i for i in range(8)] + [0xFE - 0x22 * i for i in range(8)])
    pattern += bytes(0xF0 - 0x0F * i for i in range(4))
    initial = [int.from_bytes(pattern[i : i + 4], "little") for i in range(0, 20, 4)]
    return initial + [isqrt(n << 60) for n in (2, 3, 5, 10)]


def _primes(n: int) -> list[int]:
    out: list[int] = []
    k = 2
    while len(out) < n:
        if all(k % p for p in out if p * p <= k):
            out.append(k)
        k += 1
    return out


def _icbrt(n: int) -> int:
    """The integer cube root of ``n`` (the largest x with x**3 <= n)."""
    x = 1 << ((n.bit_length() + 2) // 3)
    while True:
        y = (2 * x + n // (x * x)) // 3
        if y >= x:
            break
        x = y
    while x**3 > n:
        x -= 1
    while (x + 1) ** 3 <= n:
        x += 1
    return x


def _fraction_sqrt(p: int, bits: int) -> int:
    return isqrt(p << (2 * bits)) & ((1 << bits) - 1)


def _fraction_cbrt(p: int, bits: int) -> int:
    return _icbrt(p << (3 * bits)) & ((1 << bits) - 1)


@cache
def _words() -> frozenset[int]:
    primes = _primes(80)
    words: set[int] = set(_sha1())
    words.update(_fraction_sqrt(p, 32) for p in primes[:8])  # SHA-256's initial values
    words.update(_fraction_cbrt(p, 32) for p in primes[:64])  # SHA-256's round constants
    wide = [_fraction_sqrt(p, 64) for p in primes[:16]]  # SHA-512's and SHA-384's initial values
    wide += [_fraction_cbrt(p, 64) for p in primes]  # SHA-512's round constants
    for w in wide:  # SHA-224's initial values are the low halves of SHA-384's
        words.update((w >> 32, w & 0xFFFFFFFF))
    words.update(math.floor(abs(math.sin(i)) * 2**32) for i in range(1, 65))  # MD5's table
    return frozenset(words | {w - (1 << 32) for w in words if w >= 1 << 31})


def hash_constant(digits: str) -> bool:
    """Whether ``digits`` (decimal, a sign allowed) write one of the hash constants above."""
    text = digits.strip()
    if not text.lstrip("+-").isdigit() or len(text) > 12:
        return False
    return int(text) in _words()
