"""Files the gateway keeps in its cache folder (``cache_dir``): derived data that a later start
reads instead of deriving it again (the prefilter's database, the recognizers' tables).

Each file is named by a key of what it was derived from, so a file of other code or data is never
taken; it is written whole under a temporary name and renamed (no reader sees part of one); a
start that uses one touches it, and files of the same kind that no start used for a month are
pruned when a new one is written (each is megabytes). Nothing here raises on an unusable folder:
what is not kept is derived again at the next start.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import tempfile
import time
from pathlib import Path

from gateway.settings import Settings

__all__ = ["cache_dir_for", "default_cache_dir", "keep", "read_kept", "touch"]

_log = logging.getLogger("tiergate.cache")
_UNUSED_S = 30 * 86_400


def default_cache_dir(fallback: Path) -> Path:
    """``$XDG_CACHE_HOME/tiergate``, else ``~/.cache/tiergate``, else ``fallback`` (no home)."""
    base = os.environ.get("XDG_CACHE_HOME")
    if base:
        return Path(base) / "tiergate"
    try:
        return Path.home() / ".cache" / "tiergate"
    except RuntimeError:  # no HOME and no passwd entry (a bare container's user)
        return fallback


def cache_dir_for(settings: Settings | None) -> Path:
    """``settings.cache_dir``, else the default (under ``state_dir`` where there is no home);
    without settings, the defaults' own."""
    if settings is not None and settings.cache_dir is not None:
        return settings.cache_dir
    state: Path = settings.state_dir if settings is not None else Settings.model_fields["state_dir"].default
    return default_cache_dir(state / "cache")


def read_kept(path: Path, max_size: int) -> bytes | None:
    """The file at ``path`` if it is a regular file of at most ``max_size`` bytes (not a pipe,
    not a device), else None."""
    try:
        # without O_NONBLOCK, opening a FIFO waits for a writer: a start would hang on one
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode) or st.st_size > max_size:
                return None
            return f.read(max_size + 1)
    except OSError:
        return None


def touch(path: Path) -> None:
    """Mark ``path`` as used now: ``keep`` prunes the files no start has used lately."""
    with contextlib.suppress(OSError):
        os.utime(path)


def keep(blob: bytes, path: Path, kind: str) -> None:
    """Write ``blob`` to ``path`` whole, then remove the other files matching the glob ``kind``
    (an older version's, another configuration's) that no start has used for a month."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".kept-")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(blob)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
        _prune(path.parent, kind, path, time.time())
    except OSError as exc:  # a read-only cache: derived again at the next start, nothing else
        _log.warning("%s not kept in %s (%s)", path.name, path.parent, exc.strerror or type(exc).__name__)


def _prune(folder: Path, kind: str, keep: Path, now: float) -> None:
    with contextlib.suppress(OSError):  # another process pruned it first, or a read-only cache
        for old in folder.glob(kind):
            if old != keep and now - old.stat().st_mtime > _UNUSED_S:
                old.unlink()
