"""Child side of ``bench/startup.py --phases``: ``tiergate serve`` with a timer around each start-up step.

Run as ``python bench/_startup_phases.py OUT.jsonl`` in the server's working directory. It imports
what ``tiergate serve`` imports (timed), wraps the functions each start-up phase is made of
(looked up by name: a phase an older tree lacks is left out), then runs ``tiergate serve``
itself. Each finished phase appends one JSON line: name, wall-clock start and end (``time.time``,
so the parent can place its own first 200 from ``/readyz`` on the same axis) and the process CPU
seconds spent inside it. Wrapping costs a few microseconds per call; every wrapped function runs
once or twice in a start.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import json
import sys
import time
from collections.abc import Callable
from typing import Any

T0 = time.time()
OUT = sys.argv[1]
del sys.path[0]  # this script's directory: bench/engine.py would shadow the engine package


def _record(name: str, start: float, end: float, cpu: float) -> None:
    with open(OUT, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"phase": name, "start": start, "end": end, "cpu": cpu}) + "\n")


def _timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def run_async(*args: Any, **kwargs: Any) -> Any:
            w, c = time.time(), time.process_time()
            try:
                return await fn(*args, **kwargs)
            finally:
                _record(name, w, time.time(), time.process_time() - c)

        return run_async

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        w, c = time.time(), time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            _record(name, w, time.time(), time.process_time() - c)

    return run


def _wrap(module: str, attr: str, name: str) -> None:
    """Wrap ``module.attr`` (``attr`` may be ``Class.method``); skip what this tree lacks."""
    try:
        owner: Any = importlib.import_module(module)
    except ImportError:
        return
    *path, last = attr.split(".")
    for part in path:
        owner = getattr(owner, part, None)
        if owner is None:
            return
    raw = inspect.getattr_static(owner, last, None)
    if raw is None:
        return
    if isinstance(raw, classmethod):
        setattr(owner, last, classmethod(_timed(name, raw.__func__)))
    elif isinstance(raw, staticmethod):
        setattr(owner, last, staticmethod(_timed(name, raw.__func__)))
    else:
        setattr(owner, last, _timed(name, raw))


def _import(module: str, name: str) -> None:
    w, c = time.time(), time.process_time()
    importlib.import_module(module)
    _record(name, w, time.time(), time.process_time() - c)


_record("interpreter start (to this script)", 0.0, T0, time.process_time())
_import("gateway.cli", "import gateway.cli (what `tiergate serve` loads)")
_import("uvicorn", "import uvicorn")
_import("gateway.app", "import gateway.app (the app factory's module)")

# (module, attribute, phase): the order of a default start
for spec in [
    ("gateway.commands.serve", "load_or_exit", "config load (serve command)"),
    ("uvicorn.config", "Config.load", "uvicorn config load (imports and calls the app factory)"),
    ("gateway.app", "load_settings", "config load (app factory)"),
    ("gateway.app", "create_app", "app creation (routes, router, counters)"),
    ("uvicorn.server", "Server.startup", "uvicorn start-up (lifespan, bind)"),
    ("uvicorn.lifespan.on", "LifespanOn.startup", "lifespan start-up (all)"),
    ("audit.store", "AuditStore.open", "audit store open"),
    ("gateway.app", "upgrade", "migrations (auto_migrate)"),
    ("gateway.app", "_schema_is_current", "schema check"),
    ("gateway.hardening", "HardeningMonitor.start", "hardening monitor start"),
    ("gateway.quarantine", "QuarantineMonitor.start", "quarantine / safe-length monitor start"),
    ("tiers.classifier", "Classifier.__init__", "classifier build"),
    ("gateway.classify", "ClassifyStep.__init__", "classify step"),
    ("gateway.auth", "Authenticator.__init__", "key store (authenticator)"),
    ("gateway.tracing", "build_tracer", "tracer"),
    ("gateway.probes.schedule", "scheduled_probe_tasks", "probe schedules"),
]:
    _wrap(*spec)

from gateway.cli import main  # noqa: E402 -- imported above, timed; bound after the wrapping

sys.argv = ["tiergate", "serve"]
main()
