"""Vietnamese names (``PERSON``): a family name, then one to three syllables ("Nguyen Thi Mai",
"Tran Thi Thu Trang", "Pham Minh Chinh", "NGUYEN Van An", "NGUYEN VAN AN"), as text writes them after the
normaliser folded their tones ("Nguyễn Thị Mai").

:mod:`.people` reads a name as a given name and a surname, and Vietnamese puts the family name
first and the given name last: "Nguyen Thi Mai" was cut to "Nguyen Thi" (the given name "Mai"
is a month in German, so it ended the name) and "Pham Minh Chinh" to "Minh Chinh". What was cut
off is the part that identifies, and it went to the vendor. The shape says it instead: about
twenty family names carry most of the country (:data:`_FAMILY`), and every word of a name is one
syllable of the language (an initial, one to three vowels, a final of its short list). Family
names that are words of English or French too ("Le", "Do", "Ho", "Ha", "Mai", "Lam" …:
:data:`_FAMILY_WITH_MARKER`) count only before a middle name that marks a Vietnamese name
("Thi", "Van", "Huu", "Duc", "Ngoc"): "Le Thi Hoa" is a name, "Le Mans" and "Ho Chi Minh City"
are none.
"""

from __future__ import annotations

import re

from presidio_analyzer import Pattern

from ._english_words import is_english_word
from ._given_names import given_names
from ._places import place_names
from .people import _END, _NameRecognizer

__all__ = ["VietnameseNameRecognizer", "VietnameseWesternOrderRecognizer", "vietnamese_syllable"]

_FAMILY = (
    "Nguyen Tran Pham Hoang Huynh Phan Vu Vo Dang Bui Ngo Duong Truong Dinh Trinh Luong Quach Doan Phung Vuong Trieu"
).split()
_FAMILY_WITH_MARKER = "Le Do Ho Ha Ta To Mai Cao Lam Ly Thai Chu Kim Lai Luu Dao Tong Giang".split()
_MARKERS = "Thi Van Huu Duc Ngoc".split()


def _alternation(words: list[str]) -> str:
    # in capitals only where no acronym is spelt so: "NGUYEN Van An", not "NGO Team", "VU Main Campus"
    forms = {*words, *(w.upper() for w in words if len(w) > 3)}
    return "(?:" + "|".join(sorted(forms, key=lambda w: (-len(w), w))) + ")"


_SYLLABLE_WORD = r"[A-Z][a-z]{0,6}"
_PATTERN_WITH_FAMILY = r"\b(?P<value>" + _alternation(_FAMILY) + r"(?:[ ]" + _SYLLABLE_WORD + r"){1,3})" + _END
_PATTERN_WITH_MARKER = (
    r"\b(?P<value>"
    + _alternation(_FAMILY_WITH_MARKER)
    + r"[ ]"
    + _alternation(_MARKERS)
    + r"(?:[ ]"
    + _SYLLABLE_WORD
    + r"){1,2})"
    + _END
)

# a name in capitals throughout, as passports, ID cards and HR exports write it ("NGUYEN VAN AN",
# "TRAN THI MAI"): only with a marking middle name, so that headings in capitals ("PHAN TICH DU
# LIEU", "TRAN SET UP") are none, and only after a family name that is no word elsewhere: in
# capitals "LAM VAN BAN" (to draft a document), "TO VAN GO", "LE DUC DE BOURGOGNE" are phrases
_PATTERN_IN_CAPITALS = (
    r"\b(?P<value>(?:"
    + "|".join(sorted((w.upper() for w in _FAMILY), key=lambda w: (-len(w), w)))
    + r")[ ](?:"
    + "|".join(w.upper() for w in _MARKERS)
    + r")(?:[ ][A-Z]{1,7}){1,2})"
    + _END
)

# the western order, as Vietnamese abroad and in English text write it ("Mai Nguyen", "Thu Trang
# Pham"): one to three syllables before a family name of the first list
# Only the family names that name few places, streets and brands: "Dinh", "Dang", "Duong",
# "Vuong", "Trinh" end "Tan Dinh", "Bach Dang", "Hung Vuong" (a market, a wharf, a street named
# family first after a king)
_WESTERN_FAMILY = "Nguyen Tran Pham Hoang Huynh Vu Vo Bui Truong".split()
_PATTERN_WESTERN = (
    r"\b(?P<value>(?:"
    + _SYLLABLE_WORD
    + r"[ ]){1,3}(?:"
    + "|".join(sorted(_WESTERN_FAMILY, key=lambda w: (-len(w), w)))
    + r"))"
    + _END
)
# titles before a name that the family order's check leaves out ("Cô", folded "Co", is also the
# "Cổ" of "Công Ty Cổ Phần"): Cô, Thầy
_WESTERN_TITLES = frozenset("co thay".split())
# a place's noun right after: "Hoang Tran street", "Trung Nguyen coffee" name a place or a brand
_PLACE_AFTER = re.compile(
    r"[ ](?i:street|st|road|rd|avenue|market|wharf|bridge|lake|park|pagoda|temple|hospital|school|university|"
    r"district|ward|province|city|town|village|coffee|restaurant|hotel)\b"
)
# English's function words that are syllables of Vietnamese too: "The Nguyen family", "To Tran",
# "In Pham's view" hold no given name
_FUNCTION_WORDS = frozenset(
    "a an the to in on at by of or as if so no do go he me my we us hi oh ok then than that can".split()
)

# one syllable, its tones folded: an initial (or none), one to three vowels, a final (or none)
_SYLLABLE = re.compile(r"(?:ngh|ng|nh|ch|gh|gi|kh|ph|qu|th|tr|[bcdghklmnprstvx])?[aeiouy]{1,3}(?:ch|ng|nh|[cmnpt])?")


_TOKENS = re.compile(r"\S+")
# the word right after a candidate, one blank between
_WORD_AFTER = re.compile(r"[ ]([A-Za-z]+)")
# the word right before a candidate, one blank between (tones folded by the normaliser)
_WORD_BEFORE = re.compile(r"(?:^|[^A-Za-z])([A-Za-z]+)[ ]\Z")
# titles of address and greetings that stand before a name: Ông, Bà, Anh, Chị, Chú, Em, Bác
# (folded; not "Cô", folded "Co" as "Cổ" of every joint-stock firm, "Công Ty Cổ Phần"), and
# English greetings that are syllables too
_TITLES = frozenset("ong ba anh chi chu em bac hi hey yo".split())


def vietnamese_syllable(word: str) -> bool:
    """Whether ``word`` (any case, tones folded) is one syllable of Vietnamese."""
    return _SYLLABLE.fullmatch(word.lower()) is not None


class VietnameseNameRecognizer(_NameRecognizer):
    """A family name and one to three syllables; a family name that is a word elsewhere only
    before a marking middle name."""

    ENTITY = "PERSON"
    PATTERNS = [
        Pattern("vietnamese_family", _PATTERN_WITH_FAMILY, 0.6),
        Pattern("vietnamese_marked", _PATTERN_WITH_MARKER, 0.6),
        Pattern("vietnamese_capitals", _PATTERN_IN_CAPITALS, 0.6),
    ]

    def reject_at(self, text: str, start: int, end: int) -> bool:
        """Besides code, placeholders and places: a family name inside a title-case phrase of the
        language ("Sản Phẩm Mới", "Công Ty Cổ Phần Sữa", "Bộ Tài Nguyên Và Môi Trường": headings,
        a firm's legal name, a ministry) is a word of it, not a name. A name comes after lower
        case, punctuation, a title ("Ông", "Bà", "Ms.") or a greeting."""
        return self._phrase_before(text, start) or super().reject_at(text, start, end)

    def _phrase_before(self, text: str, start: int) -> bool:
        """A capitalised syllable right before ``start`` that could lead a name: the title-case
        phrase goes on before it."""
        before = _WORD_BEFORE.search(text, max(0, start - 24), start)
        if before is None:
            return False
        word = before.group(1)
        return word[:1].isupper() and vietnamese_syllable(word) and self._may_lead(word)

    def _may_lead(self, word: str) -> bool:
        return word.lower() not in _TITLES  # "Ông Nguyễn Văn An": a title, then the name

    def refine_span(self, text: str) -> tuple[int, int] | None:
        """The family name and the syllables after it, up to the first word that is none; None
        when no syllable follows it (after a marking middle name: when no given name does)."""
        words = list(_TOKENS.finditer(text))
        kept = 1
        for m in words[1:]:
            if not vietnamese_syllable(m.group()):
                break
            kept += 1
        # after a family name that is a word elsewhere, or in capitals throughout: the marker and
        # a given name after it
        in_capitals = all(m.group().isupper() for m in words[1:]) and any(len(m.group()) > 1 for m in words[1:])
        needed = 3 if words[0].group().capitalize() in _FAMILY_WITH_MARKER or in_capitals else 2
        return (0, words[kept - 1].end()) if kept >= needed else None


class VietnameseWesternOrderRecognizer(VietnameseNameRecognizer):
    """Given syllables before a family name of the first list ("Mai Nguyen"): :mod:`.people`
    misses those whose given name is a word elsewhere ("Mai" is a month in German)."""

    PATTERNS = [Pattern("vietnamese_western", _PATTERN_WESTERN, 0.6)]

    def __init__(self) -> None:
        super().__init__()
        self._given = given_names(1)

    def refine_span(self, text: str) -> tuple[int, int] | None:
        """The syllables right before the family name, from the first that is a given name or no
        English word (a greeting, "The", "See" are none); None when there are none."""
        words = list(_TOKENS.finditer(text))
        first = len(words) - 1
        while first > 0 and vietnamese_syllable(words[first - 1].group()):
            first -= 1
        while first < len(words) - 1 and not self._may_lead(words[first].group()):
            first += 1
        return (words[first].start(), len(text)) if first < len(words) - 1 else None

    def _may_lead(self, word: str) -> bool:
        w = word.lower()
        if w in _TITLES or w in _WESTERN_TITLES or w in _FUNCTION_WORDS:
            return False
        return w in self._given or not is_english_word(w)

    def reject_at(self, text: str, start: int, end: int) -> bool:
        """Besides code, placeholders and places: the phrase going on in title case after the
        family name ("Sản Phẩm Mới", "Công Ty Cổ Phần Sữa") is the language's words, not a name,
        and so is a province's whole name ("Thái Nguyên")."""
        after = _WORD_AFTER.match(text, end)
        if after is not None and vietnamese_syllable(after.group(1)) and after.group(1)[:1].isupper():
            return True
        if _PLACE_AFTER.match(text, end):
            return True
        if _in_vietnamese(text, start, end):
            return True  # Vietnamese writes names family first: these are its words ("Môi Trường")
        # the word before may be one the name was cut from ("A", "Dear"): only one that could
        # have led the name says the phrase goes on before it
        if self._phrase_before(text, start):
            return True
        # a province named as a person would be ("Thái Nguyên"): the place's whole name
        return text[start:end] in place_names() or _NameRecognizer.reject_at(self, text, start, end)


# the words around a candidate read to tell the language of its sentence
_NEIGHBOURS = re.compile(r"[A-Za-z]+")
_REACH = 40


def _in_vietnamese(text: str, start: int, end: int) -> bool:
    """Whether the sentence around ``text[start:end]`` is Vietnamese: one of the three words
    before it or the three after it in lower case is a syllable of the language and no English
    word ("Bảo vệ Môi Trường là trách nhiệm", "Tàu đang ở giữa Thái Bình Dương"; not "Please
    call Mai Nguyen tomorrow", nor "Mai Nguyen and Linh Tran", whose capitals are names)."""
    before = _NEIGHBOURS.findall(text, max(0, start - _REACH), start)[-3:]
    after = _NEIGHBOURS.findall(text, end, end + _REACH)[:3]
    return any(w.islower() and vietnamese_syllable(w) and not is_english_word(w) for w in before + after)


def vietnamese_recognizers() -> list[VietnameseNameRecognizer]:
    return [VietnameseNameRecognizer(), VietnameseWesternOrderRecognizer()]
