"""Provider tokens: one pattern per documented format in ``_table.FORMATS``.

Each format becomes an RE2 pattern whose ``value`` group is the token, framed by characters the
token cannot hold (RE2 has no look-arounds, so the frame is consumed and the group narrows it).
A token that matches a shape but is a mask or a run (``ghp_xxxx…``, ``sk_live_0000…``) or is
one lower-case word (``test_…`` identifiers in code) or, after a prefix code writes names after,
names joined as code joins them, without the digits the format's alphabet would give a token
(``tss_handleRequestForUser``, ``s.getElementsByTagName``) is not reported; a token of one
character class that is long and random (thirty characters, four bits each) is no word, and is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import re2
from presidio_analyzer import Pattern

from .._base import TiersPatternRecognizer
from ._shape import CLASSES, Shape, parse_shape
from ._table import FORMATS
from ._values import entropy, joined_words, mixed_classes, sequential

__all__ = ["ProviderFormat", "ProviderTokenRecognizer", "provider_formats"]

_WORD_CHARS = CLASSES["w"]


@dataclass(frozen=True, slots=True)
class ProviderFormat:
    provider: str
    fmt: str
    shape: Shape

    @property
    def regex(self) -> str:
        first = self.shape.parts[0]
        if first[0] == "cls":
            assert isinstance(first[1], tuple)
            lead_chars = CLASSES[first[1][0]] + "_"
        else:
            assert isinstance(first[1], str)
            # an alternation's paren is no character of the token: ``(ghp|gho)_`` starts with a
            # letter, and a letter or digit before it makes the match the tail of a longer word
            lead_chars = _WORD_CHARS if first[1].lstrip("(")[:1].isalnum() else ""
        # an escape written out ends the word before it: "\\n" in JSON-escaped text, "%0A" in a
        # form body, "\\u0022" (a quote) before the token; tried before the one character, so
        # the escape's last letter or digit is never taken as the token's first
        lead = f"(?:^|{_ESCAPE_BEFORE}|[^{_escape(lead_chars)}])" if lead_chars else ""
        tail = ""
        if self.shape.bounded_end and self.shape.last_chars:
            tail = f"(?:[^{_escape(self.shape.last_chars)}]|$)"
        return f"{lead}(?P<value>{self.shape.body}){tail}"


_ESCAPE_BEFORE = r"\\[nrtbf]|\\u[0-9A-Fa-f]{4}|%[0-9A-Fa-f]{2}"


def _escape(chars: str) -> str:
    return "".join("\\" + c if c in "\\]^-[" else c for c in dict.fromkeys(chars))


@cache
def provider_formats() -> tuple[ProviderFormat, ...]:
    return tuple(ProviderFormat(p, f, parse_shape(f)) for p, f in FORMATS)


@cache
def _letter_formats() -> re2._Regexp[str]:
    """The formats with a random part of letters only (``hf_`` and 34 letters): their tokens
    hold no digit, so having none says nothing there."""
    bodies = [
        f.shape.body
        for f in provider_formats()
        if any("0" not in CLASSES[spec[0]] for kind, spec in f.shape.parts if kind == "cls" and isinstance(spec, tuple))
    ]
    return re2.compile("(?:" + "|".join(bodies) + ")")


# a number after a word at the end of a name part (``prf_hmac_sha256_…``, ``…_context_v2``,
# ``prf_tls12_…``): C names number their words so; a random token's digits seldom all sit there
# (of 50,000 random draws per format the rule's drops stayed within 2e-5 of each other)
_NUMBERED = re.compile(r"(?<=[A-Za-z])[0-9]{1,3}(?=[_.-]|$)")

# prefixes code writes names after (C11's ``tss_create``, a pseudo-random function's ``prf_…``,
# any object ``s``, ``lip_sync_…``); after any other prefix (``rzp_test_``, ``FLWSECK_TEST``,
# ``LTAI``) letters that split into capitalised runs are a token drawn without a digit: twelve
# base62 characters hold none one time in eight, and random letters split into such runs often
# enough that the rule dropped 1 % of random Flutterwave test keys and 0.6 % of Razorpay keys
_NAME_PREFIXES = ("tss_", "prf_", "s.", "lip_")
# after these only snake-case names in lower case (``lip_sync_weight``): Lichess's tokens are
# base62 and 16 or more long, and their letters split into capitalised runs about once in 5,000
# draws (``lip_NsxyGhdnzoQTEDb3``); in lower case with no digit once in a million
_SNAKE_PREFIXES = ("lip_",)


def _code_name(token: str) -> bool:
    """Names joined as code joins them after a prefix code writes names after, with no digit but
    a number after a word at a part's end, in a format whose alphabet has digits (``tss_handleRequestForUser``,
    ``s.getElementsByTagName``): twenty base64url characters hold none three times in a hundred,
    and then seldom split into words."""
    if not token.startswith(_NAME_PREFIXES):
        return False
    if token.startswith(_SNAKE_PREFIXES) and not token.islower():
        return False
    unnumbered = _NUMBERED.sub("", token)
    return (
        not any(c.isdigit() for c in unnumbered)
        and joined_words(unnumbered)
        and _letter_formats().fullmatch(token) is None
    )


def _masked(token: str) -> bool:
    tail = token[-16:]
    return (
        _zero_bytes(token)
        or "xxxx" in token  # a mask is written in one case; "…RXXXx" of a random tail is none
        or "XXXX" in token
        or "****" in token
        or "0000000000" in token
        or len(set(tail)) < 4
        or (mixed_classes(token) < 2 and not _long_random(token))
        or _code_name(token)
    )


def _zero_bytes(token: str) -> bool:
    """Whether over half of a token is "A", which is six zero bits in base64: a line of a binary
    file embedded as base64 (a font in Pillow's sources, "AAAA…AAQAkAFAAEAAAAAQACwAAABcA"),
    mostly zero bytes, where the shapes that start with "A"s (Twitter's 21) or "EAAA"
    (Facebook's) match by chance. A token's random characters are "A" one time in 62. After the
    format's own leading "A"s a third is enough: such a line's zeros thin out now and then
    (``EAAAAM4AGgAAAABd1AAAiQAAMgAAAAAOAI41AFi54g``, half "A" in all, 16 of its last 37), and a
    real token's tail is far from it (Twitter's, after its 21 "A"s, about one in eleven)."""
    if len(token) < 16:
        return False
    if token.count("A") * 2 > len(token):
        return True
    tail = _LEADING_A.sub("", token)
    # only after a format's own leading "A"s: without them the half above is the measure (a
    # letter token drawn from few letters, "LTAIAaaAaaAabAacAaaAaaAa", is a third "A" by chance)
    return tail != token and len(tail) >= 16 and tail.count("A") * 3 >= len(tail)


_LEADING_A = re.compile(r"^E?A+")


def _long_random(token: str) -> bool:
    """Of one character class, yet no word: thirty characters of four bits each, not an alphabet
    written out (``hf_abcdefghijklm…``)."""
    return len(token) >= 30 and entropy(token) >= 4.0 and not sequential(re.split(r"[_.-]", token)[-1])


class ProviderTokenRecognizer(TiersPatternRecognizer):
    """Self-identifying tokens of the providers in ``_table.FORMATS``."""

    ENTITY = "SECRET"

    def __init__(self) -> None:
        patterns = [Pattern(f"{f.provider}#{i}", f.regex, 0.9) for i, f in enumerate(provider_formats())]
        super().__init__(patterns=patterns)
        # the scanner's literal gate (``TiersPatternRecognizer.LITERALS``): a format's prefix or
        # marker of three characters or more; shorter ones ("SK", ":") stand in any text
        self.LITERALS = {
            f"{f.provider}#{i}": lits
            for i, f in enumerate(provider_formats())
            if (lits := f.shape.literals) and min(map(len, lits)) >= 3
        }

    def invalidate_result(self, pattern_text: str) -> bool:
        return _masked(pattern_text)

    def reject_at(self, text: str, start: int, end: int) -> bool:
        """The name a definition gives (``def test_encodeUnicode4BytesUTF8Highest(self):``, a
        Mollie ``test_`` shape): a token is a value, and no language defines one after ``def``."""
        return _DEFINED.search(text, max(0, start - 24), start) is not None


# the keywords that define a function or class by the name after them (Python, JavaScript, Go,
# Rust, Kotlin), on the same line
_DEFINED = re.compile(r"(?:^|[^A-Za-z0-9_$.])(?:def|class|function|func|fn|fun)[ \t]+\Z")
