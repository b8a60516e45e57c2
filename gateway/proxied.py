"""The upstream client's proxied path, on aiohttp: only for a URL an egress proxy applies to.

aiohttp implements proxies and their credentials (``HTTP(S)_PROXY``, ``NO_PROXY``, ``~/.netrc``),
chosen by aiohttp's own rule (``gateway/_aiohttp_proxy.py``). Importing it costs ≈ 0.1 s of a
start (its connector builds TLS contexts at import), so ``gateway/upstream.py`` imports this module
only where the environment names a proxy for a URL's scheme, which is the first thing that rule
asks. Its failures leave here as the lean client's do: ``http1.ConnectFailed`` when nothing can
have been sent, ``TimeoutError``, or ``ProxiedTransportError`` (a ``ConnectionError``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import aiohttp
from yarl import URL

from gateway import http1
from gateway._aiohttp_proxy import env_proxy_for_url
from gateway.settings import TimeoutSettings

__all__ = ["Proxy", "ProxiedBody", "ProxiedSession", "ProxiedTransportError", "proxy_for"]


class ProxiedTransportError(ConnectionError):
    """One of aiohttp's client failures, as a connection error; ``kind`` names its class."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


@dataclass(frozen=True, slots=True)
class Proxy:
    url: URL
    auth: aiohttp.BasicAuth | None


def proxy_for(url: str) -> Proxy | None:
    """The egress proxy for ``url``, or None where none applies (``NO_PROXY``)."""
    try:
        return Proxy(*env_proxy_for_url(URL(url)))
    except LookupError:
        return None


class ProxiedBody:
    """aiohttp's response with the lean client's four methods."""

    __slots__ = ("_response", "status")

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response
        self.status = response.status

    async def iter_chunks(self) -> AsyncIterator[bytes]:
        try:
            async for piece in self._response.content.iter_any():
                yield piece
        except aiohttp.ClientError as exc:
            raise _plain(exc) from None

    def at_eof(self) -> bool:
        return self._response.content.at_eof()

    def release(self) -> None:
        self._response.release()

    def close(self) -> None:
        self._response.close()


class ProxiedSession:
    """One aiohttp session of an upstream, made on first use (it belongs to the loop it was made in)."""

    def __init__(self, timeouts: TimeoutSettings) -> None:
        t = timeouts
        # connect: waiting for a pooled connection plus opening one; sock_read: between bytes.
        self._timeout = aiohttp.ClientTimeout(total=None, connect=t.pool + t.connect, sock_connect=t.connect,
                                              sock_read=t.read)  # fmt: skip
        self._session: aiohttp.ClientSession | None = None

    def _get(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(limit=512, limit_per_host=0, keepalive_timeout=30)
            self._session = aiohttp.ClientSession(
                # No default headers and no trust_env: see `UpstreamClient._send`.
                connector=connector, timeout=self._timeout,
                auto_decompress=True, skip_auto_headers=("User-Agent",),
                # One session serves every tenant: a cookie an upstream sets for one request must
                # not ride along on another tenant's.
                cookie_jar=aiohttp.DummyCookieJar(),
            )  # fmt: skip
        return self._session

    async def post(self, url: str, headers: dict[str, str], body: bytes, proxy: Proxy) -> ProxiedBody:
        """POST through ``proxy``, never following a redirect; returns once the head arrived."""
        try:
            response = await self._get().post(url, headers=headers, data=body, allow_redirects=False,
                                              proxy=proxy.url, proxy_auth=proxy.auth)  # fmt: skip
        except (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError) as exc:
            raise http1.ConnectFailed(type(exc).__name__) from None
        except aiohttp.ClientError as exc:
            raise _plain(exc) from None
        return ProxiedBody(response)

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()


def _plain(exc: aiohttp.ClientError) -> BaseException:
    # aiohttp's read timeouts are TimeoutErrors too: they stay timeouts
    return exc if isinstance(exc, TimeoutError) else ProxiedTransportError(type(exc).__name__)
