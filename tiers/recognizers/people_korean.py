"""Korean names in Latin letters (``PERSON``): a Korean surname and a two-syllable given name
written with a hyphen, in either order ("Kim Min-jun", "Min-jun Kim", "PARK Ji-hoon", "Lee
Seo-Yeon").

:mod:`.people` needs a gazetteer given name, and Korean given names are pairs of syllables that
no list holds in full (the gazetteer has "min", "jun" and "hoon" alone): "Min-jun Kim" passed
unfound and "Kim Min-jun" was cut to "Kim Min", leaving "-jun" in what the vendor receives. The
shape says it instead: a surname of the short list Korea has (:data:`_SURNAMES`, the common
romanisations of about sixty family names, which cover nearly all of its people) next to two
syllables of Korean romanisation (Revised Romanisation and the spellings passports keep:
"hoon", "joon", "young", "kyung") joined by a hyphen. English compounds are no such pair ("Mark-up",
"Built-in", "Follow-up": a syllable has one vowel sound and ends in a nasal, a liquid or a stop),
and the few that are ("Hip-hop", "Ping-pong") stand next to a Korean surname in no ordinary text.
Left out of the surnames: those that open English sentences ("No", "Do", "Go", "So") and the
one-letter ones.
"""

from __future__ import annotations

import re

from presidio_analyzer import Pattern

from .people import _END, _NameRecognizer

__all__ = ["KoreanNameRecognizer", "korean_syllable"]

_SURNAMES = (
    "Kim Gim Lee Yi Rhee Ri Park Pak Bak Choi Choe Jung Jeong Chung Kang Gang Cho Jo Yoon Yun Jang Chang Lim Im "
    "Rim Han Oh Seo Suh Shin Sin Kwon Gwon Hwang Ahn An Song Jeon Jun Chun Hong Yoo Yu Ryu Ko Moon Mun Yang "
    "Son Sohn Bae Baek Paik Heo Huh Nam Noh Roh Ha Kwak Gwak Sung Seong Cha Joo Ju Woo Koo Gu Min Na Jin Ji "
    "Um Eom Chae Won Bang Kong Gong Hyun Hyeon Byun Byeon Yeom Yeo Chu Seok Sun Seol Ma Gil Yeon Pyo Myung Ki "
    "Ban Ra Wang Geum Ok Yook Tak Kook Guk Eun Maeng Bong Shim Sim Choo Kil Cheon Youn Chin Koh Hahn Yim Rho Baik "
    "Hur Uhm Namgung Seonwoo Jegal Hwangbo Dokgo"
).split()
_SURNAME = "(?:" + "|".join(sorted({*_SURNAMES, *(s.upper() for s in _SURNAMES)}, key=lambda s: (-len(s), s))) + ")"
# two syllables: the first capitalised, the second either way ("Min-jun", "Min-Jun"), or both in
# capitals as passports write them
_GIVEN = r"(?:[A-Z][a-z]{0,6}-[A-Za-z][a-z]{0,6}|[A-Z]{1,7}-[A-Z]{1,7})"  # or in capitals: "KIM MIN-JUN"
# a pair inside a longer hyphenated word is none ("Im Pop-up-Store", "An Up-to-Date Guide"): RE2
# has no look-arounds, so the characters each side are classes without "-"
_NO_HYPHEN_AFTER = r"(?:$|[^-A-Za-zß0-9_])"
_NO_HYPHEN_BEFORE = r"(?:^|[^-A-Za-zß0-9_])"

# one syllable: an initial consonant (or none), one vowel sound, a final nasal, liquid or stop (or
# none); the vowels of Revised Romanisation and the spellings of names in passports ("oo", "ee",
# "ou" of "young", "you" of "Kyoung", "eui", "sh" of "Shin", "wh" of "Kyung-wha", "h" of "Soo-ah")
_SYLLABLE = re.compile(
    r"(?:kk|tt|pp|ss|jj|ch|sh|wh|[gkndtrlmbpsjhwy])?"
    r"(?:yae|yeo|you|wae|eui|ae|ya|eo|ye|wa|oe|yo|wo|we|wi|yu|eu|ui|oo|ee|ou|a|e|o|u|i)"
    r"(?:ng|[kntlmpgbh])?"
)


def korean_syllable(word: str) -> bool:
    """Whether ``word`` (any case) is one syllable of Korean in Latin letters."""
    return _SYLLABLE.fullmatch(word.lower()) is not None


class KoreanNameRecognizer(_NameRecognizer):
    """A Korean surname and a hyphenated two-syllable given name, in either order."""

    ENTITY = "PERSON"
    LITERALS = {"korean_surname_first": ("-",), "korean_given_first": ("-",)}
    PATTERNS = [
        Pattern("korean_surname_first", r"\b(?P<value>" + _SURNAME + r"[ ]" + _GIVEN + r")" + _NO_HYPHEN_AFTER, 0.6),
        Pattern(
            "korean_given_first", _NO_HYPHEN_BEFORE + r"(?P<value>" + _GIVEN + r"[ ]" + _SURNAME + r")" + _END, 0.6
        ),
    ]

    def refine_span(self, text: str) -> tuple[int, int] | None:
        """The whole candidate when its given name is two Korean syllables that are no English
        reduplication, else None."""
        given = next(w for w in text.split() if "-" in w)
        first, second = given.lower().split("-")
        if not (korean_syllable(first) and korean_syllable(second)) or _reduplicated(first, second):
            return None
        if _english_compound(first, second) or (first in _CALENDAR and second in _CALENDAR):
            return None  # "Pop-up Park", "Log-in Ban", "Sit-In Won"; "Jan-Jun Min", "Sat-Sun Jun"
        return 0, len(text)


# English's compounds of a verb and a particle: a Korean given name ends in none of these ("Pop-up",
# "Top-up", "Set-up", "Add-on"), and in "in" only after a syllable that is no English verb taking it
# ("Jae-in", "Hae-in" are names; "Log-in", "Sit-in", "Plug-in" none)
_PARTICLES = frozenset("up to off out by at on".split())
_VERBS_IN = frozenset("log sit sign plug check walk drive break cave lead stand fill phase tie lock opt pull run "
                      "tune weigh teach sleep drop shut move dial zoom pop set built lay wall fade cut".split())  # fmt: skip
_CALENDAR = frozenset("mon tue wed thu fri sat sun jan feb mar apr may jun jul aug sep oct nov dec".split())


def _english_compound(first: str, second: str) -> bool:
    return second in _PARTICLES or (second == "in" and first in _VERBS_IN)


_PARTS = re.compile(r"([^aeiouy]*)([aeiouy]+)([^aeiouy]*)")


def _reduplicated(first: str, second: str) -> bool:
    """English's reduplicated words: one syllable twice ("yo-yo", "so-so") or an "i" turned to
    "a" or "o" before the same ending ("hip-hop", "ping-pong", "zig-zag"). Korean names pair
    different syllables, and none alternates so ("Ji-ho" ends in no consonant)."""
    if first == second:
        return True
    a, b = _PARTS.fullmatch(first), _PARTS.fullmatch(second)
    if a is None or b is None:
        return False
    return a.group(2) == "i" and b.group(2) in ("a", "o") and a.group(3) == b.group(3) != ""


def korean_recognizers() -> list[KoreanNameRecognizer]:
    return [KoreanNameRecognizer()]
