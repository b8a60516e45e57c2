"""Whether a word in capitals may be a surname that no list here has ("KLEMT", "PRUVOST"): the
census is American, and French and German documents write their own surnames in capitals. The
capitals recognizers let a strong given name vouch for such a word in a form's field; code's
words ("README", "CUDA") are no surname after any given name (:mod:`.people` too)."""

from __future__ import annotations

from ._english_words import is_english_word, is_proper_noun
from ._german_nouns import is_feminine_noun

__all__ = ["code_word", "name_shaped"]

_VOWELS = frozenset("AEIOUY")
# the ends of English derived words and abstract nouns: a word of no dictionary here shaped so is
# code's or a trade's term ("INLINING", "DEDUPED", "OPTIMIZER"), not a surname
_DERIVED = (
    "ING", "ED", "TION", "TIONS", "MENT", "NESS", "ABLE", "IBLE", "ITY", "IZE", "ISE", "IZER", "ISER", "IZERS", "ISM", "OGY", "ICS"
)  # fmt: skip


# code's words in capitals that no dictionary here spells: a file's or a marker's name, formats
_CODE_WORDS = frozenset(
    """readme fixme todo json yaml toml ajax oauth uuid guid nginx redis kafka regex posix sudo cuda onnx
    bert llama webp jpeg mpeg utf unicode ascii sqlite mysql postgres mongo""".split()
)


def code_word(word: str) -> bool:
    """One of code's words in capitals ("README", "JSON", "CUDA"): after a given name, no surname."""
    return word.lower() in _CODE_WORDS


def name_shaped(word: str) -> bool:
    """A word in capitals that may be a surname no list here has: four letters or more with a
    vowel, no word of the English dictionary (plurals too) or its proper nouns, no German
    feminine noun, not shaped as an English derived word ("INLINING", "DEDUPED"), no two English
    words joined and none of code's words ("README", "JSON")."""
    return (
        not code_word(word)
        and len(word) >= 4
        and not _VOWELS.isdisjoint(word)
        and not word.endswith(_DERIVED)
        and not is_english_word(word)
        and not is_proper_noun(word)
        and not is_feminine_noun(word)
        and not _english_compound(word)
    )


def _english_compound(word: str) -> bool:
    """Two English words of four letters or more written as one, as code names its tools and
    files ("LOCALHOST", "DOCKERFILE", "FILESTORE"); surnames so made are in the census already
    ("WOODWARD", "GOLDBERG")."""
    return any(is_english_word(word[:i]) and is_english_word(word[i:]) for i in range(4, len(word) - 3))
