"""``tokenizer.json`` files built locally with the ``tokenizers`` library (nothing downloaded).

``byte_tokenizer`` gives exactly one token per UTF-8 byte (exact-length tests); ``trained_bpe``
trains a small byte-level BPE on a corpus, a stand-in for a real model's tokenizer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

__all__ = ["byte_tokenizer", "counter", "trained_bpe"]


def _byte_level() -> Tokenizer:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    return tok


def byte_tokenizer(path: Path) -> Path:
    tok = _byte_level()
    trainer = trainers.BpeTrainer(vocab_size=256, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)  # fmt: skip
    tok.train_from_iterator([], trainer=trainer)
    tok.save(str(path))
    return path


def trained_bpe(path: Path, corpus: Iterable[str], vocab_size: int = 2000) -> Path:
    tok = _byte_level()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)  # fmt: skip
    tok.train_from_iterator(corpus, trainer=trainer)
    tok.save(str(path))
    return path


def counter(path: Path) -> Callable[[str], int]:
    """A ``count_tokens`` for :class:`FakeUpstream` using the same file the gateway is given."""
    tok = Tokenizer.from_file(str(path))
    return lambda text: len(tok.encode(text, add_special_tokens=False).ids) if text else 0
