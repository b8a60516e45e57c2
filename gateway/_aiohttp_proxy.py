"""The egress proxy for a URL, as aiohttp's ``trust_env`` would choose it: checked at import.

``trust_env=True`` makes aiohttp re-read the environment and ``~/.netrc`` in a worker thread on
every request; the upstream client reads them once per URL instead, with the function aiohttp
itself uses (``aiohttp.helpers.get_env_proxy_for_url``: HTTP(S)_PROXY, NO_PROXY, credentials in
the proxy URL or ``~/.netrc``). ``aiohttp.helpers`` is not public API, so this module refuses to
import unless the installed aiohttp is of the minor version tested here (the pin in
pyproject.toml keeps it so) and has the function with the signature assumed: a proxy chosen by
a different rule would send prompts past the operator's egress proxy, so it fails loudly rather
than guess.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from importlib.metadata import version

import aiohttp
from yarl import URL

__all__ = ["TESTED_MINOR", "env_proxy_for_url", "incompatibility"]

TESTED_MINOR = "3.14"  # aiohttp 3.14.5

ProxyLookup = Callable[[URL], "tuple[URL, aiohttp.BasicAuth | None]"]


def incompatibility(installed: str, helpers: object) -> str | None:
    """Why aiohttp ``installed`` with this ``helpers`` module cannot be used, or None."""
    if installed.split(".")[:2] != TESTED_MINOR.split("."):
        return f"aiohttp {installed} is not the tested {TESTED_MINOR}.x"
    lookup = getattr(helpers, "get_env_proxy_for_url", None)
    if not callable(lookup):
        return "aiohttp.helpers.get_env_proxy_for_url is missing"
    if list(inspect.signature(lookup).parameters) != ["url"]:
        return f"aiohttp.helpers.get_env_proxy_for_url{inspect.signature(lookup)} is not (url)"
    return None


def _load() -> ProxyLookup:
    from aiohttp import helpers

    why = incompatibility(version("aiohttp"), helpers)
    if why is not None:
        raise ImportError(f"{why}: the upstream client's proxy lookup needs it (see {__name__})")
    lookup: ProxyLookup = helpers.get_env_proxy_for_url
    return lookup


env_proxy_for_url: ProxyLookup = _load()
"""(proxy URL, proxy credentials) for ``url``; LookupError when no proxy applies to it."""
