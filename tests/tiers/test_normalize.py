"""Normalisation and evasion: hidden identifiers are still found, and stripped on the original."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tiers import Classifier, normalize_text, normalize_with_map

from .conftest import content

EMAIL = "maria.gonzalez@example.com"

EVASIONS = [
    ("zero-width space", "maria.gon\u200bzalez@exam\u200bple.com"),
    ("zero-width joiner", "maria\u200d.gonzalez@example\u200c.com"),
    ("soft hyphen", "maria.gon\u00adzalez@exam\u00adple.com"),
    ("word joiner and BOM", "maria\u2060.gonzalez@\ufeffexample.com"),
    ("fullwidth", "ｍａｒｉａ.ｇｏｎｚａｌｅｚ＠ｅｘａｍｐｌｅ.ｃｏｍ"),
    ("bidi controls", "\u202emaria.gonzalez@example.com\u202c"),
    ("bidi isolates", "\u2066maria.gonzalez\u2069@example.com"),
    ("Cyrillic look-alikes", "mаrіа.gоnzаlеz@ехаmрlе.соm"),
    ("Greek look-alikes", "maria.gonzalez@example.cοm"),
    ("combining marks", "ma\u0301ria.gonza\u0308lez@example.com"),
    ("variation selectors", "maria\ufe0f.gonzalez@example.com"),
]


@pytest.mark.parametrize(("trick", "hidden"), EVASIONS, ids=[e[0] for e in EVASIONS])
def test_hidden_email_is_found_and_stripped(clf: Classifier, trick: str, hidden: str) -> None:
    """An e-mail hidden with the trick is found, and stripping removes all of it, tricks included."""
    text = f"please write to {hidden} today"
    c = content(text)
    d = clf.classify(c)
    assert "EMAIL_ADDRESS" in d.entity_counts()
    s = clf.strip(c, d)
    assert s.content.segments[0].text == "please write to <EMAIL_1> today"
    assert s.mapping["<EMAIL_1>"] == hidden


@pytest.mark.parametrize(
    "hidden",
    [
        "４５５６ ０１７２ ８３９０ ６４１４",
        "٤٥٥٦ ٠١٧٢ ٨٣٩٠ ٦٤١٤",
        "4556\u200b0172\u200b8390\u200b6414",
        "4556 0172 8390 641\u00ad4",
    ],
)
def test_hidden_card_digits_are_found(clf: Classifier, hidden: str) -> None:
    """Fullwidth, Arabic-Indic and invisibly split card numbers are still Tier 3."""
    d = clf.classify(content(f"card {hidden} exp 12/29"))
    assert "CREDIT_CARD" in d.entity_counts()
    assert int(d.tier) == 3


def test_hidden_secret_and_name(clf: Classifier) -> None:
    """A zero-width-split AWS key and a look-alike customer name are found."""
    d = clf.classify(content("key AKIA\u200bIOSFODNN7EXAMPLE for Glоbex"))  # Cyrillic о
    assert d.entity_counts() == {"SECRET": 1, "CUSTOMER_NAME": 1}


def test_normalize_text_examples() -> None:
    """The canonical form drops invisibles, folds width, look-alikes, digits and accents."""
    assert normalize_text("ｃａｆé\u200b ٣ Вox\u00ad") == "cafe 3 Box"
    assert normalize_text("plain ascii stays") == "plain ascii stays"
    assert normalize_text("ﬁle") == "file"


def test_latin_letters_no_step_folds_are_transliterated() -> None:
    """Letters that neither decompose nor look like ASCII would keep a name from every pattern."""
    assert normalize_text("Məmmədov, Əliyev") == "Mammadov, Aliyev"
    assert normalize_text("Guðrún Þórsdóttir") == "Gudrun Thorsdottir"
    norm, offsets = normalize_with_map("to Þór.")
    assert norm == "to Thor." and offsets.span(3, 7) == (3, 6)  # "Thor" maps back to "Þór"


def test_document_normalises_the_same_whole_or_in_parts() -> None:
    """Normalisation is per code point: a document gives the same value as its parts joined."""
    doc = "Ｆｉｒｓｔ\u200b part. Sécond part ٣ with Cyrillic а."
    cut = 17
    assert normalize_text(doc) == normalize_text(doc[:cut]) + normalize_text(doc[cut:])


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=60))
def test_offset_map_round_trip(text: str) -> None:
    """normalize_with_map agrees with normalize_text, and every mapped span lies in the original."""
    norm, offsets = normalize_with_map(text)
    assert norm == normalize_text(text)
    for i in range(len(norm)):
        s, e = offsets.span(i, i + 1)
        assert 0 <= s < e <= len(text)
        assert normalize_text(text[s:e]) != "" and norm[i] in normalize_text(text[s:e])


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=40).filter(lambda t: "%" not in t))
def test_normalisation_is_idempotent(text: str) -> None:
    """normalize_text(normalize_text(x)) == normalize_text(x) (percent-decoding, one level by
    design, aside: "%2%41" decodes to "%2A")."""
    once = normalize_text(text)
    assert normalize_text(once) == once


_PERCENT_PIECES = [
    "%40",
    "%2E",
    "%2540",
    "%D0%B0",
    "%E2%80%8B",
    "%F0%9F%98%80",
    "%zz",
    "%4",
    "%",
    "%C3",
    "%80",
    "a",
    "é",
    "\u200b",
    "Ы",
    " ",
    "ｍ",
    "%25",
]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(_PERCENT_PIECES), max_size=12).map("".join))
def test_offset_map_round_trip_with_escapes(text: str) -> None:
    """With percent escapes too, every normalised character maps back to an original span that
    normalises to text containing it, and spans never cut an escape."""
    norm, offsets = normalize_with_map(text)
    assert norm == normalize_text(text)
    for i in range(len(norm)):
        s, e = offsets.span(i, i + 1)
        assert 0 <= s < e <= len(text)
        assert norm[i] in normalize_text(text[s:e])
    if norm:
        assert offsets.span(0, len(norm))[1] <= len(text)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(_PERCENT_PIECES), max_size=12).map("".join))
def test_literal_reading_keeps_escapes_and_folds_the_rest(text: str) -> None:
    """``percent=False`` keeps every escape as written, otherwise normalises as the decoded
    reading does, and maps back the same way: what the secret recognizers read literally."""
    norm, offsets = normalize_with_map(text, percent=False)
    assert norm.count("%") == text.count("%")
    assert norm == normalize_text(text.replace("%", "\x00")).replace("\x00", "%")
    for i in range(len(norm)):
        s, e = offsets.span(i, i + 1)
        assert 0 <= s < e <= len(text)
        assert norm[i] in normalize_text(text[s:e].replace("%", "\x00")).replace("\x00", "%")


@pytest.mark.parametrize(
    ("text", "normal", "whole"),
    [
        ("jane%40example.com", "jane@example.com", (4, 7)),  # the "@" maps to all of "%40"
        ("x%2540y", "x@y", (1, 6)),  # encoded twice
        ("%D0%B0b", "ab", (0, 6)),  # UTF-8 Cyrillic a, then folded
        ("100%25 sure", "100% sure", (3, 6)),
    ],
)
def test_percent_decoding_maps_to_the_whole_escape(text: str, normal: str, whole: tuple[int, int]) -> None:
    """A decoded character's span in the original is its whole escape."""
    norm, offsets = normalize_with_map(text)
    assert norm == normal
    i = next(k for k in range(len(norm)) if offsets.span(k, k + 1) == whole)
    assert offsets.span(0, len(norm)) == (0, len(text))
    assert text[slice(*offsets.span(i, i + 1))] == text[whole[0] : whole[1]]


def test_escapes_that_are_not_text_stay_as_written() -> None:
    """Controls, lone UTF-8 bytes and broken escapes are not decoded."""
    for text in ["%00 %0A %7F", "%C3 alone", "%80%80", "%zz%4", "50%"]:
        assert normalize_text(text) == text


@pytest.mark.parametrize(
    ("hidden", "plain"),
    [
        ("gօogle", "google"),  # Armenian oh (not in the old hand-picked table)
        ("ɑpple", "apple"),  # Latin alpha
        ("ᏚᎪᎷ", "SAM"),  # Cherokee capitals
        ("ϲat", "cat"),  # Greek lunate sigma
        ("Іnitech іnc", "Initech inc"),  # Cyrillic I keeps its case (UTS #39 says "l")
        ("Ӏ", "I"),
        ("мир", "mиp"),  # supplement: UTS #39 maps м to ʍ
        ("ЗАО", "ЗAO"),  # letters never become digits (З would be 3)
        ("a\u2014b", "a-b"),  # em dash (UTS #39: ー)
        ("“quoted”", "“quoted”"),  # punctuation does not grow: curly quotes stay
    ],
)
def test_look_alikes_fold_from_unicode_confusables(hidden: str, plain: str) -> None:
    """Look-alikes fold by the table generated from UTS #39, with case kept and no digits made."""
    assert normalize_text(hidden) == plain


def test_fold_table_is_generated_from_the_uts39_file() -> None:
    """The table covers UTS #39's Latin look-alikes well beyond the old 80-entry hand table."""
    from tiers._confusables import confusable_folds

    folds = confusable_folds()
    assert len(folds) > 1000
    assert all(not k.isascii() and v.isascii() and v for k, v in folds.items())
    assert not any(v.isdigit() for k, v in folds.items() if k.isalpha())
