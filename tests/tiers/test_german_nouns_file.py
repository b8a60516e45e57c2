"""Reading the German feminine-noun list (``tiers/recognizers/_german_nouns.py``): the one-pass
reading gives the set a row-by-row reading of the CSV gives (and so does the reading of every
lemma), and the list is read on first use
only, once, also when threads meet it together (issue 15)."""

from __future__ import annotations

import csv
import importlib.resources
import subprocess
import sys
import textwrap

from hypothesis import given, settings
from hypothesis import strategies as st

from tiers.recognizers._german_nouns import _feminine, _fold, _fold_all, every_lemma


def _row_by_row() -> frozenset[str]:
    """The definition: every unquoted lemma (no comma, no quote) with "f" in a gender column."""
    data = importlib.resources.files("german_nouns").joinpath("nouns.csv")
    with data.open(encoding="utf-8", newline="") as fh:
        rows = csv.reader(fh)
        header = next(rows)
        genders = [i for i, name in enumerate(header) if name.startswith("genus")]
        assert len(genders) == 5
        return frozenset(
            _fold(row[0]) for row in rows if "f" in (row[i] for i in genders) and not {",", '"'} & set(row[0])
        )


def test_one_pass_reading_is_the_row_by_row_set() -> None:
    nouns = _feminine()
    assert nouns == _row_by_row()
    assert {"prufung", "bahn", "steuer", "firma"} <= nouns
    assert "lehmann" not in nouns  # a surname: no gender in the list


def test_every_lemma_is_the_row_by_row_set_of_all_genders() -> None:
    data = importlib.resources.files("german_nouns").joinpath("nouns.csv")
    with data.open(encoding="utf-8", newline="") as fh:
        rows = csv.reader(fh)
        next(rows)
        expected = frozenset(_fold(row[0]) for row in rows if row and not {",", '"'} & set(row[0]))
    lemmas = every_lemma()
    assert lemmas == expected
    assert {"saal", "bett", "salami", "prufung"} <= lemmas and _feminine() < lemmas


_WORD = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",), exclude_characters="\n"), max_size=12)


@settings(max_examples=500, deadline=None)
@given(st.lists(_WORD, min_size=1, max_size=8))
def test_folding_lines_at_once_is_folding_each(words: list[str]) -> None:
    assert _fold_all("\n".join(words)).split("\n") == [_fold(w) for w in words]


def test_read_on_first_use_once_under_threads() -> None:
    """A fresh process: importing the module, and words that a feminine ending decides, leave the
    list unread; eight threads asking at once read it once and all answer right."""
    code = textwrap.dedent("""
        from concurrent.futures import ThreadPoolExecutor
        from tiers.recognizers import _german_nouns as g
        reads = []
        real = g._read
        g._read = lambda: reads.append(1) or real()
        assert not g.loaded()
        assert g.is_feminine_noun("Skalierung") and g.is_feminine_noun("Verfügbarkeit")
        assert not g.loaded()
        words = ["Prüfung", "Wareneingangsprüfung", "Bahn", "Lehmann", "Bolander", "Variablen"] * 8
        with ThreadPoolExecutor(8) as pool:
            got = list(pool.map(g.is_feminine_noun, words))
        assert got == [True, True, True, False, False, True] * 8, got
        assert g.loaded() and len(reads) == 1, reads
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
