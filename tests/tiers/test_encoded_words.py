"""Base64 of a few words is text written another way, not a token.

Found on a tokenizer's vocabulary (mistral_common's ``tekken`` JSON): every entry's
``"token_bytes": "IENydXNoaW5n"`` (" Crushing") was a SECRET under its ``token`` key, 6,500 to
9,300 of them per MB. Random key material decodes to letters almost never, so under a token's or
key's name such a value is no credential; under a password's name any value still is one.
"""

from __future__ import annotations

import base64
import random
import re

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tiers import Classifier
from tiers.recognizers.secrets._values import encodes_piece, encodes_words, entropy, mixed_classes

from .conftest import content

# letters of several scripts (Latin with accents, Cyrillic, Greek, Arabic, Devanagari), as a
# tokenizer's pieces are
_LETTERS = st.characters(
    categories=["Ll", "Lu", "Lo"],
    include_characters="éàüßñ",
    codec="utf-8",
).filter(lambda c: c.isalpha())
_WORDS = st.lists(st.text(_LETTERS, min_size=2, max_size=9), min_size=1, max_size=3).map(" ".join)
_TOKEN_KEYS = ["token_bytes", "access_token", "api_key", "client_token"]


def _b64(text: str) -> str:
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def _secrets(clf: Classifier, text: str) -> set[str]:
    decision = clf.classify(content(text))
    return {text[f.start : f.end] for f in decision.findings if f.entity_type == "SECRET"}


@given(words=_WORDS, lead=st.sampled_from(["", " "]))
def test_base64_of_words_encodes_words(words: str, lead: str) -> None:
    value = _b64(lead + words)
    assume(len(value) >= 8)
    assert encodes_words(value)


@given(raw=st.binary(min_size=12, max_size=48))
def test_random_bytes_do_not(raw: bytes) -> None:
    """Key material: the bytes a random token is made of decode to letters only by chance, and
    the few that do are words, not keys (checked: hypothesis finds no random counter-example)."""
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError:
        decoded = None
    assume(decoded is None or any(c.isdigit() or c in ":=+!?@#$%^&*" or ord(c) < 32 for c in decoded))
    assert not encodes_words(base64.b64encode(raw).decode("ascii"))


@given(seed=st.integers(0, 2**32), size=st.integers(16, 48))
def test_random_bytes_are_no_vocabulary_piece(seed: int, size: int) -> None:
    """Under a vocabulary's key the wider reading (any script, punctuation, a cut character)
    still leaves key material a secret: random bytes (not whatever bytes, which hypothesis draws
    structured) of sixteen or more decode to such text by chance only (none in 200,000 draws)."""
    raw = random.Random(seed).randbytes(size)
    assert not encodes_piece(base64.b64encode(raw).decode("ascii"))


# a vocabulary's pieces: text of any script without digits, cut anywhere between bytes
_PIECE_TEXT = st.text(
    st.characters(categories=["L", "M", "P", "S", "Zs", "Cf"], include_characters="\t\n", codec="utf-8"),
    min_size=3,
    max_size=12,
)


@given(text=_PIECE_TEXT, cut=st.tuples(st.integers(0, 3), st.integers(0, 3)))
def test_a_piece_cut_between_bytes_is_a_vocabulary_piece(text: str, cut: tuple[int, int]) -> None:
    """A byte-level tokenizer cuts characters: a piece may open with the last bytes of one and
    close with the first bytes of another (``b" \\xd7\\x9c\\xd7"``), and is still text."""
    assume(not re.search(r"\w(?::(?!:)|@)", text))  # a login's shape stays suspicious
    raw = text.encode("utf-8")
    piece = raw[cut[0] : len(raw) - cut[1]]
    # at most one character cut at each end: the cut bytes lie within the first and last ones
    assume(cut[0] < len(text[0].encode()) and cut[1] < len(text[-1].encode()))
    assume(len(piece) >= 4)
    assert encodes_piece(base64.b64encode(piece).decode("ascii")), (text, cut)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=_WORDS, key=st.sampled_from(_TOKEN_KEYS), seed=st.integers(0, 2**32))
def test_under_a_tokens_name_words_are_no_secret_and_random_bytes_are(
    clf: Classifier, words: str, key: str, seed: int
) -> None:
    encoded = _b64(" " + words)
    assume(len(encoded) >= 8)
    assert encoded not in _secrets(clf, f'{{"rank": 7, "{key}": "{encoded}"}}\n')
    # a token's key material: random bytes (not whatever bytes, which shrink to zeros)
    rnd = random.Random(seed)
    material = base64.b64encode(rnd.randbytes(rnd.randint(24, 32))).decode("ascii")
    assume(not encodes_words(material))
    assert material in _secrets(clf, f'{{"rank": 7, "{key}": "{material}"}}\n')


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=_WORDS)
def test_under_a_passwords_name_encoded_words_stay_a_secret(clf: Classifier, words: str) -> None:
    encoded = _b64(words)
    assume(len(encoded) >= 8)
    # two characters throughout ("VVVBVVVB" of "UUAUUA") read as a mask, by design
    assume(len(set(encoded.lower())) > 2)
    assert encoded in _secrets(clf, f'DB_PASSWORD="{encoded}"\n')


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    key=st.sampled_from(_TOKEN_KEYS),
    seed=st.integers(0, 2**32),
    code=st.sampled_from(
        [
            "// TODO",
            "//nothing here",
            "//",
            "//cdn.example.com/lib.js",
            "//api.test:8443/v1",
            "//huggingface.co.helper=store",
        ]
    ),
)
def test_random_key_material_opening_with_two_slashes_is_a_secret(
    clf: Classifier, key: str, seed: int, code: str
) -> None:
    """Base64 opens with "//" once in 4,096 values (six one-bits twice): such key material is
    still a secret, while a comment or a protocol-relative URL in its place is not."""
    rnd = random.Random(seed)
    material = "//" + base64.b64encode(rnd.randbytes(rnd.randint(24, 32))).decode("ascii")[2:]
    assume(not encodes_words(material))
    assert material in _secrets(clf, f'{{"rank": 7, "{key}": "{material}"}}\n')
    assert not _secrets(clf, f'{{"rank": 7, "{key}": "{code}"}}\n')


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(letters=st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", min_size=28, max_size=42))
def test_key_material_of_letters_only_after_two_slashes_is_no_comment(clf: Classifier, letters: str) -> None:
    """One such value in 500 is letters only ("//zDpLVvIomdnVlNj…"): mixed case is no word."""
    assume(
        any(c.isupper() for c in letters[1:])
        and any(c.islower() for c in letters)
        and not encodes_words("//" + letters)
    )
    assume(mixed_classes(letters) >= 2 and entropy(letters) >= 3.5)
    material = "//" + letters
    assert material in _secrets(clf, f'{{"rank": 7, "token_bytes": "{material}"}}\n')
