"""The classifier's first pass compiled ahead (``tiers/prefilter.py``): compiled once, kept on disk.

At start the gateway looks in its cache folder for a database compiled from its classifier's
patterns (the file is named by ``Classifier.prefilter_key``, the same in every process, and by
the instruction sets it was built for: ``kept_at``) and attaches it, which takes
milliseconds. Without one it compiles one on a background thread (5 – 12 s of one core; the
interpreter lock is free meanwhile, so requests go on, scanned with RE2's sets until then), writes
it and attaches it. Workers forked before that are replaced (``ClassifyStep.renew_workers``), so
that large bodies are read with it too.

A file is written whole under a temporary name and renamed, so no reader sees part of one; one
that does not load (built for another CPU, damaged) is compiled again and replaced. One process
compiles a key once, however many apps it builds (the tests build hundreds).
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path

from gateway.cache_files import keep, read_kept, touch
from tiers import Classifier
from tiers.prefilter import PrefilterError, available, compile_members, platform

__all__ = ["attach_prefilter", "kept_at"]

_log = logging.getLogger("tiergate.prefilter")
_compiling: dict[str, Future[bytes]] = {}  # key -> the one compile of this process
_lock = threading.Lock()


# A database of today's patterns is 6 MB; a file far larger is none of ours (or a device).
_MAX_FILE = 256 << 20


def kept_at(cache_dir: Path, key: str) -> Path:
    """Where the database of the patterns of ``key`` (``Classifier.prefilter_key``) is kept, for
    this machine's instruction set: machines of two kinds sharing a folder (a network home) would
    otherwise each find the other's file, fail to load it, and compile and replace it at every start."""
    return cache_dir / f"prefilter-{key[:32]}-{platform()}.bin"


def attach_prefilter(
    classifier: Classifier, cache_dir: Path, on_attached: Callable[[], None], *, compile_missing: bool = True
) -> Future[bool]:
    """Attach the prefilter of ``classifier``'s patterns now (from ``cache_dir``) or once compiled
    (not with ``compile_missing=False``: a short-lived command does not wait seconds for it).

    The future answers whether it was attached; ``on_attached`` runs then (on the compiling
    thread when it was compiled here). Never raises: without a prefilter the classifier scans
    with RE2's sets, which find the same."""
    done: Future[bool] = Future()
    if not available() or classifier.prefiltered:
        done.set_result(classifier.prefiltered)
        return done
    try:
        key = classifier.prefilter_key
    except Exception as exc:  # noqa: BLE001 -- the RE2 sets go on
        _log.warning("prefilter not attached (%s); scanning with RE2 sets", type(exc).__name__)
        done.set_result(False)
        return done
    path = kept_at(cache_dir, key)
    blob = read_kept(path, _MAX_FILE)
    if blob is not None:
        if _attach(classifier, key, blob):
            touch(path)
            done.set_result(True)
            on_attached()
            return done
    if not compile_missing:
        done.set_result(False)
        return done
    with _lock:
        job = _compiling.get(key)
        if job is None or (job.done() and job.exception() is not None):
            job = _compiling[key] = Future()
            members = classifier.prefilter_members
            threading.Thread(target=_compile, args=(job, members), name="tiergate-prefilter", daemon=True).start()

    def attach(job: Future[bytes]) -> None:
        ok = False
        try:
            if job.exception() is None:
                keep(job.result(), path, "prefilter-*.bin")  # the file was missing or did not load
                # (another app of this process may have attached it to this classifier already)
                ok = classifier.prefiltered or _attach(classifier, key, job.result())
                if ok:
                    on_attached()
        finally:
            done.set_result(ok)

    job.add_done_callback(attach)
    return done


def _attach(classifier: Classifier, key: str, blob: bytes) -> bool:
    try:
        classifier.attach_prefilter(key, blob)
    except PrefilterError as exc:
        _log.warning("prefilter not attached (%s); scanning with RE2 sets", exc)
        return False
    except Exception as exc:  # noqa: BLE001 -- whatever a damaged file does, the RE2 sets go on
        _log.warning("prefilter not attached (%s); scanning with RE2 sets", type(exc).__name__)
        return False
    return True


def _compile(job: Future[bytes], members: tuple[str, ...]) -> None:
    try:
        blob = compile_members(members)
    except BaseException as exc:  # noqa: BLE001 -- whatever failed, the RE2 sets go on
        _log.warning("prefilter not compiled (%s); scanning with RE2 sets", type(exc).__name__)
        job.set_exception(exc)
        return
    _trim()
    job.set_result(blob)


def _trim() -> None:
    """Give the compiler's freed memory back to the system: glibc keeps a thread's heap mapped
    after it is freed, and a gateway that compiled stayed 56 MiB larger for its whole life (270
    against 214 MiB idle, bench/RESULTS.md). Elsewhere (no glibc) nothing is done."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)
