"""One OpenAI-compatible upstream over httpx, with its failures translated where they enter.

The distinction that matters is whether the upstream may have seen the request: a connection
that never opened (or a pool that never handed one out) proves it did not, and only then — or on a
5xx answered before any byte was relayed — may the pipeline try the next upstream.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import httpx

from gateway.errors import UpstreamError, UpstreamTimeout
from gateway.settings import UpstreamSettings

__all__ = ["RetryableUpstreamError", "UpstreamClient", "UpstreamRejected"]


class RetryableUpstreamError(UpstreamError):
    """Nothing was relayed and the next eligible upstream may be tried."""

    def __init__(self, reason: str, upstream_status: int | None = None) -> None:
        super().__init__(code="upstream_unavailable" if upstream_status is None else "upstream_error")
        self.reason = reason
        self.upstream_status = upstream_status


class UpstreamRejected(UpstreamError):
    """The upstream answered 4xx; the client gets that status with a fixed message."""

    error_type = "invalid_request_error"
    default_code = "upstream_rejected"

    def __init__(self, upstream_status: int, upstream_code: str | None) -> None:
        label = f" ({upstream_code})" if upstream_code else ""
        super().__init__(f"the upstream rejected the request with HTTP {upstream_status}{label}")
        self.upstream_status = upstream_status
        self.status_code = upstream_status  # type: ignore[misc]


@dataclass(frozen=True, slots=True)
class Opened:
    """A response whose head arrived with a 2xx status; the body is not read yet."""

    response: httpx.Response


class UpstreamClient:
    def __init__(
        self,
        settings: UpstreamSettings,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        api_key: str | None = None,
    ) -> None:
        self.settings = settings
        t = settings.timeouts
        key = api_key
        if key is None and settings.api_key_env:
            key = os.environ.get(settings.api_key_env)
        headers = {"content-type": "application/json"}
        if key:
            headers["authorization"] = f"Bearer {key}"
        self.client = httpx.AsyncClient(
            base_url=settings.base_url.rstrip("/"),
            headers=headers,
            timeout=httpx.Timeout(connect=t.connect, read=t.read, write=t.write, pool=t.pool),
            transport=transport,
            limits=httpx.Limits(max_connections=512, max_keepalive_connections=128),
        )

    async def open(self, path: str, body: bytes) -> Opened:
        """Send ``body``; return once a 2xx head arrived. Raises the translated errors above."""
        request = self.client.build_request("POST", path, content=body)
        try:
            response = await self.client.send(request, stream=True)
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as exc:
            raise RetryableUpstreamError(type(exc).__name__) from None
        except httpx.TimeoutException:
            raise UpstreamTimeout() from None
        except httpx.HTTPError as exc:
            raise UpstreamError(code="upstream_transport_error", message=_transport(exc)) from None
        if response.status_code >= 500:
            await response.aclose()
            raise RetryableUpstreamError(f"http_{response.status_code}", response.status_code)
        if response.status_code >= 400:
            code = await _error_code(response)
            raise UpstreamRejected(response.status_code, code)
        return Opened(response)

    async def get_json(self, path: str) -> object:
        response = await self.client.get(path)
        response.raise_for_status()
        return response.json()

    async def aclose(self) -> None:
        await self.client.aclose()


def _transport(exc: Exception) -> str:
    return f"upstream transport failure ({type(exc).__name__})"


async def _error_code(response: httpx.Response) -> str | None:
    """Only the upstream's short error code travels on: its message may quote the prompt."""
    try:
        await response.aread()
        data = response.json()
        code = data.get("error", {}).get("code") or data.get("error", {}).get("type")
    except Exception:
        code = None
    finally:
        await response.aclose()
    if isinstance(code, str) and code.replace("_", "").isalnum() and len(code) <= 64:
        return code
    return None
