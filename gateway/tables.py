"""The recognizers' tables (``tiers/tables.py``) kept between starts in the cache folder.

A start looks for a snapshot under the key of this ``tiers`` package's files, the table sources'
installed versions and the interpreter (``tables_key``): found, it is read in ≈ 0.09 s instead of
deriving the tables (≈ 0.6 s); not found, or not readable, the tables are derived as before and,
once the classifier is built, kept for the next start (``keep_tables``). A change of code or of a
package's version changes the key, so a snapshot is never taken for other tables than these.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import logging
import marshal
import sys
from pathlib import Path
from typing import Any

import tiers
from gateway.cache_files import keep, read_kept, touch
from tiers import Classifier, TiersConfig, tables

__all__ = ["build_classifier", "keep_tables", "kept_tables_at", "preload_tables", "tables_key"]

_log = logging.getLogger("tiergate.tables")
_MAX_FILE = 64 << 20  # today's snapshot is 5.4 MB


@functools.cache
def tables_key() -> str:
    """What the tables are derived from: every file of the ``tiers`` package (the loaders, the
    normaliser they spell names with), each source's installed version, the interpreter and
    marshal's format."""
    digest = hashlib.sha256(f"{sys.version}\0{marshal.version}\0".encode())
    root = Path(tiers.__file__).parent
    for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    for name, source in tables.sources().items():
        digest.update(f"{name}\0{source}\0{importlib.metadata.version(source)}\0".encode())
    return digest.hexdigest()


def kept_tables_at(cache_dir: Path) -> Path:
    return cache_dir / f"tables-{tables_key()[:32]}.marshal"


def preload_tables(cache_dir: Path) -> bool:
    """Take the tables from the snapshot kept in ``cache_dir`` where there is one for this code
    and these sources; whether it was taken. Never raises: without one they are derived."""
    if all(tables.loaded(name) for name in tables.sources()):
        return True  # another app of this process read them (the tests build hundreds)
    try:
        path = kept_tables_at(cache_dir)
        blob = read_kept(path, _MAX_FILE)
        if blob is None:
            return False
        tables.preload(blob, tables_key())
    except tables.TablesError as exc:
        _log.warning("recognizer tables not taken from the cache (%s); deriving them", exc)
        return False
    except Exception as exc:  # noqa: BLE001 -- whatever a damaged file or a broken install does, derive them
        _log.warning("recognizer tables not taken from the cache (%s); deriving them", type(exc).__name__)
        return False
    touch(path)
    return True


def build_classifier(config: TiersConfig, cache_dir: Path, **options: Any) -> Classifier:
    """``Classifier(config, **options)`` on the tables kept in ``cache_dir``, which it keeps there
    when it had to derive them (a server's start, a scan)."""
    preloaded = preload_tables(cache_dir)
    classifier = Classifier(config, **options)
    if not preloaded:
        keep_tables(cache_dir)
    return classifier


def keep_tables(cache_dir: Path) -> None:
    """Keep a snapshot of the tables in ``cache_dir`` for the next start (reading any that this
    process has not read yet). Never raises: without one the next start derives them."""
    try:
        blob = tables.snapshot(tables_key())
    except Exception as exc:  # noqa: BLE001 -- the next start derives them, nothing else
        _log.warning("recognizer tables not kept (%s)", type(exc).__name__)
        return
    keep(blob, kept_tables_at(cache_dir), "tables-*.marshal")
