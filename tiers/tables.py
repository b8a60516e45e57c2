"""Tables the recognizers derive from installed packages' data files, and a snapshot of them.

Why: deriving them is most of building a classifier. Parsing 48,000 given names, 88,800 census
surnames, the ISO tables with their translations, 100,000 German nouns and 235,000 English words
cost ≈ 0.6 s of every start (bench/RESULTS.md, "The dearer first pass timed on a sample; start-up"),
and the result is the same from one start to the next until this code or a package changes.
``marshal`` reads the same tables back in ≈ 0.09 s.

A table is a loader decorated with ``@table(name, source=distribution)``: it runs once per process,
on first use, under its own lock (two scan threads may meet it at once), unless a snapshot given
to ``preload`` holds the table already. ``snapshot`` gives the tables read so far as bytes. ``tiers`` reads and
writes no file: the gateway keeps the snapshot in its cache folder under a key of this package's
code and the sources' versions (``gateway/tables.py``), since a table is a function of both.
"""

from __future__ import annotations

import hashlib
import marshal
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from .errors import TiersError

__all__ = ["TablesError", "loaded", "preload", "snapshot", "sources", "table"]

T = TypeVar("T")
_UNSET: Any = object()


class TablesError(TiersError):
    """A snapshot that is not one of these tables (damaged, or of other code): nothing preloaded."""


@dataclass(eq=False)
class _Table:
    load: Callable[[], Any]
    source: str
    value: Any = _UNSET
    lock: threading.Lock = field(default_factory=threading.Lock)

    def get(self) -> Any:
        value = self.value
        if value is _UNSET:
            with self.lock:
                if self.value is _UNSET:
                    self.value = self.load()
                value = self.value
        return value


_tables: dict[str, _Table] = {}


def table(name: str, *, source: str) -> Callable[[Callable[[], T]], Callable[[], T]]:
    """Make ``load`` (no arguments) the loader of table ``name``, derived from the installed
    distribution ``source``'s files; the decorated function answers the table."""

    def register(load: Callable[[], T]) -> Callable[[], T]:
        if name in _tables:
            raise TablesError(f"two tables are named {name!r}")
        entry = _tables[name] = _Table(load, source)
        getter = cast(Callable[[], T], entry.get)
        return getter

    return register


def sources() -> dict[str, str]:
    """Each table's name and the distribution its data comes from (for a snapshot's key)."""
    _register_all()
    return {name: entry.source for name, entry in sorted(_tables.items())}


def loaded(name: str) -> bool:
    """Whether this process holds table ``name`` already (read, or preloaded)."""
    entry = _tables.get(name)
    return entry is not None and entry.value is not _UNSET


def snapshot(key: str) -> bytes:
    """The tables this process holds, as bytes that ``preload`` takes back under ``key`` (a table
    not read yet is left out: it stays one read on first use)."""
    _register_all()
    held = {name: _flat(entry.value) for name, entry in sorted(_tables.items()) if entry.value is not _UNSET}
    payload = marshal.dumps(held)
    return marshal.dumps((key, hashlib.sha256(payload).digest(), payload))


def preload(blob: bytes, key: str) -> None:
    """Take the tables of ``blob`` (``snapshot(key)``) that this process has not read; raises
    ``TablesError`` and takes nothing unless it is a snapshot of these tables under ``key``."""
    _register_all()
    try:
        kept_key, digest, payload = marshal.loads(blob)
        if kept_key != key:
            raise TablesError("the tables' snapshot was taken of other code or other data")
        # a damaged file must not read as other names: marshal would take a changed byte of a string
        if not isinstance(payload, bytes) or hashlib.sha256(payload).digest() != digest:
            raise TablesError("the tables' snapshot is damaged")
        flat = marshal.loads(payload)
        if not isinstance(flat, dict) or not set(flat) <= set(_tables):
            raise TablesError("the tables' snapshot holds other tables than these")
        values = {name: _unflat(value) for name, value in flat.items()}
    except TablesError:
        raise
    except Exception as exc:  # noqa: BLE001 -- marshal's errors on damaged bytes are of several types
        raise TablesError(f"the tables' snapshot does not read: {type(exc).__name__}") from None
    for name, value in values.items():
        entry = _tables[name]
        with entry.lock:
            if entry.value is _UNSET:
                entry.value = value


# sets are kept as tuples: marshal wrote the 236,000 English words as a set in ≈ 0.6 s, as a tuple
# in ≈ 0.09 s (measured here), and reading a tuple back into a set costs less too
def _flat(value: Any) -> tuple[str, Any]:
    if isinstance(value, frozenset):
        return ("frozenset", tuple(value))
    if isinstance(value, set):
        return ("set", tuple(value))
    if isinstance(value, tuple):
        return ("tuple", tuple(_flat(v) for v in value))
    if isinstance(value, dict):
        return ("dict", value)
    raise TablesError(f"a table of {type(value).__name__} cannot be kept")


def _unflat(flat: Any) -> Any:
    kind, value = flat
    if kind == "frozenset" and isinstance(value, tuple):
        return frozenset(value)
    if kind == "set" and isinstance(value, tuple):
        return set(value)
    if kind == "tuple" and isinstance(value, tuple):
        return tuple(_unflat(v) for v in value)
    if kind == "dict" and isinstance(value, dict):
        return value
    raise ValueError(f"no table is a {kind!r}")


def _register_all() -> None:
    # the recognizers' modules define the tables; importing the registry imports every one of them
    from .recognizers import registry  # noqa: F401  # imported for its modules' tables
