"""A clean corpus (prose, code, SQL, math, tables, logs, config) yields no findings at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from tiers import Classifier, Tier

from .conftest import content

CORPUS = sorted((Path(__file__).parent / "corpus" / "clean").glob("*.txt"))


def test_corpus_is_present() -> None:
    """The clean corpus covers several kinds of text."""
    assert len(CORPUS) >= 8


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_no_findings(clf: Classifier, path: Path) -> None:
    """Text without identifiers is Tier 1 with no findings."""
    text = path.read_text("utf-8")
    d = clf.classify(content(text))
    assert [(f.entity_type, text[f.start : f.end]) for f in d.findings] == []
    assert d.tier == Tier.GENERAL
