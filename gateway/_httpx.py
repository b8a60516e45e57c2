"""httpx, imported without its command line.

``import httpx`` also imports ``httpx._main``, the ``httpx`` console command, and with it rich,
pygments and click's extras: about 35 ms of CPU at every start (several times that on a loaded
machine) and a few MiB, for a command the gateway never runs. httpx imports it inside ``try: …
except ImportError`` and puts a stub ``main`` in its place when it fails, so while httpx is first
imported here ``httpx._main`` looks absent; afterwards the entry is removed again, and an explicit
``import httpx._main`` (the console script's own process, say) loads the real module. A process
that imported httpx before this module keeps it as it was.

Imported by :mod:`gateway.cli` before anything that imports httpx (the engine's commands are the
first); a server built without the CLI (tests, ``gateway.app`` alone) simply loads httpx whole.
"""

from __future__ import annotations

import sys

__all__: list[str] = []

_CLI = "httpx._main"

if "httpx" not in sys.modules and _CLI not in sys.modules:
    sys.modules[_CLI] = None  # type: ignore[assignment]  # "from ._main import main" raises ImportError
    try:
        import httpx  # noqa: F401  # imported here only to be cached in sys.modules without its CLI
    finally:
        if sys.modules.get(_CLI, ...) is None:
            del sys.modules[_CLI]
