"""Recognizers: one small declarative unit per kind of identifier, all in one presidio registry."""

from .. import _presidio  # noqa: F401  # first: presidio without PyTorch (tiers/_presidio.py)
from ._base import TermRecognizer, TiersPatternRecognizer
from .registry import build_registry

__all__ = ["TermRecognizer", "TiersPatternRecognizer", "build_registry"]
