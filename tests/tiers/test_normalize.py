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
    ["４１１１ １１１１ １１１１ １１１１", "٤١١١ ١١١١ ١١١١ ١١١١", "4111\u200b1111\u200b1111\u200b1111", "4111 1111 1111 111\u00ad1"],
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
@given(st.text(max_size=40))
def test_normalisation_is_idempotent(text: str) -> None:
    """normalize_text(normalize_text(x)) == normalize_text(x)."""
    once = normalize_text(text)
    assert normalize_text(once) == once
