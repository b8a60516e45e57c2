"""Recognizers: one small declarative unit per kind of identifier, all in one presidio registry."""

from ._base import TermRecognizer, TiersPatternRecognizer
from .registry import build_registry

__all__ = ["TermRecognizer", "TiersPatternRecognizer", "build_registry"]
