"""The fingerprint's normal form is computed on bytes in C passes (``audit/fingerprint.py``); it must
equal, character for character, the straightforward definition it replaced, kept here as the oracle:
a fingerprint that changed would stop ``exposure match --document`` finding documents already sent.
"""

from __future__ import annotations

import re
import sys
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from audit.fingerprint import (
    _DROP,
    _SPACE,
    Fingerprints,
    fingerprint,
    fingerprint_bytes,
    normalize_for_fingerprint,
    normalized_chunks,
    normalized_utf8,
)

# -- the oracle: the previous implementation, verbatim in behaviour ---------------------------------

_FORMAT_CATEGORIES = {"Cf", "Cc"}
_OLD_ASCII_CONTROLS = {c: None for c in [*range(0x20), 0x7F] if chr(c) not in "\t\n\r"}
_OLD_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


def _old_drop_format(match: re.Match[str]) -> str:
    return "".join(ch for ch in match.group() if unicodedata.category(ch) not in _FORMAT_CATEGORIES)


def oracle(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    text = text.translate(_OLD_ASCII_CONTROLS)
    if not text.isascii():
        text = _OLD_NON_ASCII.sub(_old_drop_format, text)
    return " ".join(text.split())


# Characters where the two could part: every kind of whitespace and control, format characters in
# and out of the BMP, compatibility forms NFKC rewrites (some into spaces), combining marks, and
# plain letters of one, two, three and four UTF-8 bytes.
_TRICKY = [chr(c) for c in (
    0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x1C, 0x1F, 0x20, 0x7F, 0x85, 0xA0, 0xAD, 0x300, 0x301, 0x34F, 0x61C,
    0x1680, 0x180E, 0x2000, 0x200A, 0x200B, 0x200D, 0x2028, 0x2029, 0x202E, 0x205F, 0x2060, 0x3000,
    0xFB01, 0xFEFF, 0xFF21, 0x110BD, 0x1D173, 0xE0001, 0xE0041, 0x41, 0x7A, 0xE9, 0x439, 0x4E2D, 0x1F600,
)]  # fmt: skip
texts = st.one_of(
    st.text(alphabet=st.sampled_from(_TRICKY), max_size=60),
    st.text(max_size=200),  # any code point (surrogates excluded by hypothesis)
    st.lists(st.text(alphabet=st.sampled_from(_TRICKY), max_size=12), max_size=40).map("".join),
)


@settings(max_examples=800, deadline=None)
@given(text=texts)
def test_normal_form_equals_the_oracle(text: str) -> None:
    assert normalize_for_fingerprint(text) == oracle(text)
    assert normalized_utf8(text) == oracle(text).encode("utf-8")


@settings(max_examples=60, deadline=None)
@given(text=texts, repeat=st.integers(20, 400))
def test_normal_form_equals_the_oracle_on_long_text(text: str, repeat: int) -> None:
    # Long enough for the array passes (small inputs take the split/join path).
    long = (text + " word ") * repeat
    assert normalized_utf8(long) == oracle(long).encode("utf-8")


def test_every_code_point_as_the_oracle_says() -> None:
    # Blocks of every code point, each between letters and spaces, through both paths.
    for start in range(0, sys.maxunicode + 1, 2048):
        block = "".join(f"a{chr(c)}b " for c in range(start, min(start + 2048, sys.maxunicode + 1))
                        if not 0xD800 <= c <= 0xDFFF)  # fmt: skip
        assert normalize_for_fingerprint(block) == oracle(block), hex(start)


def test_the_tables_cover_every_category_and_space() -> None:
    # The module builds its tables from a part of the code space: nothing outside it may matter.
    drop, space = set(_DROP), set(_SPACE)
    for cp in range(0x80, sys.maxunicode + 1):
        ch = chr(cp)
        if unicodedata.category(ch) in ("Cf", "Cc"):
            assert ch in drop, hex(cp)
        elif ch.isspace():
            assert ch in space, hex(cp)


@given(text=texts)
def test_fingerprint_of_bytes_and_text_agree(text: str) -> None:
    key = b"k" * 32
    assert fingerprint_bytes(key, normalized_utf8(text)) == fingerprint(key, oracle(text))


# ASCII with every kind of whitespace and control, in runs that pieces cut anywhere
_ASCII_SPACY = st.text(alphabet=st.sampled_from(list("ab \t\n\r\x00\x0b\x0c\x1f\x7f.")), max_size=300)


@settings(max_examples=400, deadline=None)
@given(text=st.one_of(_ASCII_SPACY, texts), size=st.integers(1, 40))
def test_the_pieces_join_to_the_normal_form(text: str, size: int) -> None:
    """Read in pieces of any size, the normal form is the same bytes, and no piece is empty:
    a run of spaces across a cut is one space, a leading or trailing run none."""
    pieces = list(normalized_chunks(text, size))
    assert b"".join(pieces) == normalized_utf8(text) == oracle(text).encode("utf-8")
    assert all(pieces)


@settings(max_examples=300, deadline=None)
@given(
    texts=st.lists(st.one_of(_ASCII_SPACY, texts, _ASCII_SPACY.map(lambda t: t * 300)), max_size=6),
    pieces_from=st.sampled_from([1 << 18, 50, 1]),
    piece=st.integers(1, 64),
)
def test_fingerprints_of_texts_fed_one_by_one(texts: list[str], pieces_from: int, piece: int) -> None:
    """Each non-empty text's fingerprint once, in order, and the whole's over the non-empty
    normal forms joined by one space; a whole that is one text is that text's. The same
    whichever texts are hashed in pieces, and in pieces of any size."""
    key = b"k" * 32
    prints = Fingerprints(key, pieces_from=pieces_from, piece=piece)
    for text in texts:
        prints.add(text)
    forms = [oracle(t).encode("utf-8") for t in texts]
    forms = [f for f in forms if f]
    assert prints.each == tuple(dict.fromkeys(fingerprint_bytes(key, f) for f in forms))
    assert prints.whole == (fingerprint_bytes(key, b" ".join(forms)) if forms else None)


@settings(max_examples=300, deadline=None)
@given(key=st.binary(min_size=1, max_size=200), data=st.binary(max_size=3000), texts=st.lists(texts, max_size=4))
def test_the_fingerprint_is_hmac_sha256_under_any_key(key: bytes, data: bytes, texts: list[str]) -> None:
    """Copies of one keyed HMAC per key give what the standard library's one-shot call gives, for
    keys shorter and longer than SHA-256's block, and one key's fingerprints never another's."""
    import hmac

    assert fingerprint_bytes(key, data) == hmac.digest(key, data, "sha256").hex()
    assert fingerprint_bytes(key + b"x", data) != fingerprint_bytes(key, data)
    prints = Fingerprints(key)
    for text in texts:
        prints.add(text)
    forms = [f for f in (oracle(t).encode("utf-8") for t in texts) if f]
    assert prints.each == tuple(dict.fromkeys(hmac.digest(key, f, "sha256").hex() for f in forms))


def test_an_empty_key_is_refused() -> None:
    import pytest

    with pytest.raises(ValueError, match="must not be empty"):
        fingerprint_bytes(b"", b"text")
    with pytest.raises(ValueError, match="must not be empty"):
        Fingerprints(b"")
