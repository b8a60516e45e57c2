"""What the tests of names without lists ask of the classifier with its shipped defaults (no name
list): the people found in a text, and whether one of them covers a name whole."""

from __future__ import annotations

from tiers import Classifier, Content, Segment, TiersConfig

__all__ = ["person_covers", "persons", "recognizers_of"]

_CLASSIFIER = Classifier(TiersConfig())


def _findings(text: str) -> list[tuple[str, int, int]]:
    found = _CLASSIFIER.classify(Content((Segment(("messages", 0, "content"), text),))).findings
    return [(f.entity_type, f.start, f.end) for f in found]


def persons(text: str) -> list[str]:
    """The values of the text's PERSON findings."""
    return [text[start:end] for kind, start, end in _findings(text) if kind == "PERSON"]


def person_covers(text: str, name: str) -> bool:
    """Whether one PERSON finding covers ``name`` (its first occurrence) whole."""
    at = text.index(name)
    return any(kind == "PERSON" and start <= at and end >= at + len(name) for kind, start, end in _findings(text))


def recognizers_of(text: str) -> set[str]:
    """The names of the recognizers that found something in the text."""
    return {f.recognizer for f in _CLASSIFIER.classify(Content((Segment(("messages", 0, "content"), text),))).findings}
