"""The ``tiergate`` command's entry point: the collector off while the command's modules load.

A start allocates hundreds of thousands of objects that live as long as the process (modules,
settings models, the classifier's tables); the collector's passes over them while they are made
find nothing to free and cost 0.1 – 0.3 s of a start (bench/RESULTS.md, issue 15). The command
turns it on again when it starts (``gateway.cli.main``); ``serve`` once the app has started and
frozen what start-up built (``gateway/app.py``). Imported by nothing else, so a process that only
imports ``gateway.cli`` (the tests) keeps its collector.

What it gives up: the cycles start-up leaves behind are frozen with the rest, ≈ 0.5 MB that one
collection before the freeze would free; that collection costs ≈ 0.15 s of the start.
"""

from __future__ import annotations

import gc

__all__ = ["run"]


def run() -> None:
    gc.disable()
    from gateway.cli import main

    main()
