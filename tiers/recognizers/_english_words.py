"""English words, to tell the noun of a title from a surname after a given name ("Sage Handbook",
"Wolfram Web Resource", "Ray Actors" name no one; "Maria Gonzalez" does).

Source: the ``web2`` list, the entries of Webster's Second New International Dictionary (1934,
public domain; Unix's ``/usr/share/dict/web2``), as shipped in the ``english-words`` package on
PyPI (2.0.2, MIT licence, by Matt Wiens) and read through that package's own function at start-up;
nothing of it is copied into this repository, nothing is downloaded. Only its lower-case entries
count: the list writes proper nouns capitalised ("Aaron"), so a word there is an ordinary one.
The package's other list (``gcide``, GPL) is not read. Many surnames are words too ("Baker",
"Hill", "Smith"): callers ask the census gazetteer first (:mod:`._surnames`).
"""

from __future__ import annotations

from ..tables import table

__all__ = ["is_entry", "is_english_word", "is_proper_noun", "proper_nouns"]


@table("english-words", source="english-words")
def _words() -> set[str]:
    """The list as the package gives it, in its own case: a lower-case key finds only the
    lower-case entries, so no filtered copy is made (never written to)."""
    from english_words import get_english_words_set

    words: set[str] = get_english_words_set(["web2"])
    return words


def is_entry(word: str) -> bool:
    """Whether ``word`` (any case) is a lower-case entry itself, no plural's singular ("davies"
    is none: no plural of "davy" here)."""
    return word.lower() in _words()


def is_english_word(word: str) -> bool:
    """Whether ``word`` (any case) is an ordinary English word, or the plural of one (the
    dictionary lists singulars: "lattices", "agents", "libraries")."""
    w = word.lower()
    words = _words()
    if w in words:
        return True
    if w.endswith("ies") and w[:-3] + "y" in words:
        return True
    if w.endswith("es") and w[:-2] in words:
        return True
    return w.endswith("s") and w[:-1] in words


def proper_nouns() -> frozenset[str]:
    """The entries the list writes capitalised ("Nazi", "Oman", "Turkmen", "Aaron"), lower-case:
    names of peoples, places and faiths, and given names. Not kept: read where a table is built."""
    return frozenset(w.lower() for w in _words() if w[:1].isupper())


def is_proper_noun(word: str) -> bool:
    """Whether the list has ``word`` capitalised ("Germany", "Brotherhood" is none)."""
    return word[:1].upper() + word[1:].lower() in _words()
