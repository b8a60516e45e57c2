"""The request-path upstream client against a real HTTP server on 127.0.0.1: SSE events read by
the shared reader whatever the chunking, lines longer than any read buffer, and failures
translated at the edge."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest

from formats.sse import Event
from gateway.errors import UpstreamError, UpstreamTimeout
from gateway.settings import UpstreamSettings
from gateway.upstream import RetryableUpstreamError, UpstreamClient, UpstreamRejected
from tests.support import serve


def _chunked(chunks: list[bytes], status: int = 200, delay_s: float = 0.0) -> Any:
    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        while (await receive()).get("more_body"):
            pass
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"text/event-stream")]})  # fmt: skip
        for chunk in chunks:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await asyncio.sleep(delay_s or 0.01)  # separate writes: separate reads on our side
        await send({"type": "http.response.body", "body": b""})

    return app


def _client(url: str, **timeouts: float) -> UpstreamClient:
    return UpstreamClient(UpstreamSettings(name="u", base_url=url + "/v1", kind="shared",
                                           timeouts=timeouts or {}))  # fmt: skip


async def _events(url: str) -> list[Event]:
    client = _client(url)
    try:
        opened = await client.open("/chat/completions", b"{}")
        events = [event async for event in opened.response.aiter_events()]
        await opened.response.aclose()
        return events
    finally:
        await client.aclose()


def test_sse_events_split_on_cr_lf_and_crlf_across_chunk_boundaries() -> None:
    """CRLF cut between two reads is one line end, not two; bare CR and LF end lines too; the
    data lines of one event are joined (the shared reader, formats.sse)."""
    chunks = [b"data: a\r", b"\ndata: b\r\n\r", b"\ndata: c\rdata: d\n", b"\n: note\r\ndata: [DO", b"NE]"]
    with serve(_chunked(chunks), lifespan="off") as server:
        events = asyncio.run(_events(server.url))
    assert events == [Event("a\nb"), Event("c\nd"), Event("[DONE]")]


def test_a_line_longer_than_any_read_buffer_arrives_whole() -> None:
    """A 600 KB SSE event (one line) is yielded whole, not refused as 'too long'."""
    payload = b"data: " + b"x" * 600_000
    with serve(_chunked([payload[:250_000], payload[250_000:], b"\n\n"]), lifespan="off") as server:
        events = asyncio.run(_events(server.url))
    assert events == [Event(payload[6:].decode())]


def test_a_line_that_never_ends_is_cut_off_as_an_upstream_error() -> None:
    """An upstream streaming one endless line: UpstreamError past MAX_LINE_BYTES, memory bounded."""
    from gateway.upstream import MAX_LINE_BYTES

    block = b"x" * (1024 * 1024)
    chunks = [b"data: "] + [block] * (MAX_LINE_BYTES // len(block) + 2)
    with serve(_chunked(chunks, delay_s=0.001), lifespan="off") as server:
        with pytest.raises(UpstreamError, match="too long"):
            asyncio.run(_events(server.url))


def test_errors_are_translated_where_they_enter() -> None:
    """Refused connection: retryable. 5xx: retryable with its status. 4xx: the upstream's short
    code only. A stalled body: UpstreamTimeout, never an aiohttp exception."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed_port = s.getsockname()[1]

    async def attempt(url: str, **timeouts: float) -> BaseException:
        client = _client(url, **timeouts)
        try:
            opened = await client.open("/chat/completions", b"{}")
            await opened.response.aread()
        except BaseException as exc:  # noqa: BLE001 - the test inspects what came out
            return exc
        finally:
            await client.aclose()
        raise AssertionError("no error")

    refused = asyncio.run(attempt(f"http://127.0.0.1:{closed_port}"))
    assert isinstance(refused, RetryableUpstreamError) and refused.upstream_status is None
    with serve(_chunked([b'{"error": {"code": "overloaded"}}'], status=503), lifespan="off") as server:
        busy = asyncio.run(attempt(server.url))
    assert isinstance(busy, RetryableUpstreamError) and busy.upstream_status == 503
    body = b'{"error": {"code": "context_length_exceeded", "message": "your prompt: SECRET"}}'
    with serve(_chunked([body], status=400), lifespan="off") as server:
        rejected = asyncio.run(attempt(server.url))
    assert isinstance(rejected, UpstreamRejected) and rejected.status_code == 400
    assert "context_length_exceeded" in str(rejected) and "SECRET" not in str(rejected)
    with serve(_chunked([b'{"id": ', b"1}"], delay_s=1.0), lifespan="off") as server:
        stalled = asyncio.run(attempt(server.url, read=0.3))
    assert isinstance(stalled, UpstreamTimeout)


@pytest.mark.parametrize("cut", [b'{"id": 1', b"data: {}\n"])
def test_a_connection_reset_mid_body_is_an_upstream_error(cut: bytes) -> None:
    """The server closes the socket mid-body: the reader gets UpstreamError, never a partial body."""

    async def run(port: int) -> BaseException | bytes:
        client = _client(f"http://127.0.0.1:{port}")
        try:
            opened = await client.open("/chat/completions", b"{}")
            return await opened.response.aread()
        except UpstreamError as exc:
            return exc
        finally:
            await client.aclose()

    async def main() -> BaseException | bytes:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + cut)
            await writer.drain()
            writer.transport.abort()

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with server:
            return await run(port)

    result = asyncio.run(main())
    assert isinstance(result, UpstreamError) and not isinstance(result, UpstreamTimeout)


async def _post_once(url: str) -> bytes:
    """One chat call through a fresh client (which reads the proxy variables anew)."""
    client = _client(url)
    try:
        opened = await client.open("/chat/completions", b'{"messages": []}')
        return await opened.response.aread()
    finally:
        await client.aclose()


def test_egress_goes_through_the_proxy_named_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """HTTP_PROXY applies (as it did with httpx): an upstream name that does not resolve is still
    reached, because the request goes to the proxy, which forwards it."""
    from tests.support import FakeUpstream, Scripted
    from tests.support.fault_proxy import FaultProxy

    fake = FakeUpstream(name="vendor", script=lambda r: Scripted(content="via proxy"))
    with serve(fake.app, lifespan="off") as server, FaultProxy("127.0.0.1", server.port) as proxy:
        monkeypatch.setenv("HTTP_PROXY", f"http://{proxy.address}")
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        body = asyncio.run(_post_once("http://upstream.invalid"))
    assert b"via proxy" in body and proxy.stats.accepted >= 1 and len(fake.ledger) == 1


def test_no_proxy_exempts_a_host_from_the_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """NO_PROXY names the upstream's host: the request goes straight there, and the proxy named in
    HTTP_PROXY (one that would forward it, so only its counter tells) never sees a connection."""
    from tests.support import FakeUpstream, Scripted
    from tests.support.fault_proxy import FaultProxy

    fake = FakeUpstream(name="vendor", script=lambda r: Scripted(content="direct"))
    with serve(fake.app, lifespan="off") as server, FaultProxy("127.0.0.1", server.port) as proxy:
        monkeypatch.setenv("HTTP_PROXY", f"http://{proxy.address}")
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        monkeypatch.delenv("no_proxy", raising=False)
        body = asyncio.run(_post_once(server.url))
    assert b"direct" in body and proxy.stats.accepted == 0 and len(fake.ledger) == 1


@pytest.mark.parametrize("scheme", ["http", "https"])
def test_the_upstream_key_never_reaches_the_proxy_as_proxy_credentials(
        monkeypatch: pytest.MonkeyPatch, scheme: str) -> None:  # fmt: skip
    """Through an egress proxy the upstream's API key travels only as the upstream's own
    Authorization (inside the tunnel for https): never as Proxy-Authorization, which aiohttp
    derives from a session's default headers when a proxy is passed explicitly."""
    heads: list[bytes] = []

    async def recorder(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        heads.append(await reader.readuntil(b"\r\n\r\n"))
        writer.write(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
        await writer.drain()
        writer.close()

    async def main() -> None:
        server = await asyncio.start_server(recorder, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with server:
            monkeypatch.setenv(f"{scheme.upper()}_PROXY", f"http://127.0.0.1:{port}")
            monkeypatch.delenv("NO_PROXY", raising=False)
            monkeypatch.delenv("no_proxy", raising=False)
            client = UpstreamClient(UpstreamSettings(name="u", base_url=f"{scheme}://upstream.invalid/v1",
                                                     kind="shared"), api_key="SECRET-UPSTREAM-KEY")  # fmt: skip
            try:
                with pytest.raises(UpstreamError):
                    await client.open("/chat/completions", b'{"messages": []}')
            finally:
                await client.aclose()

    asyncio.run(main())
    assert len(heads) == 1
    head = heads[0].decode("latin-1").lower()
    assert "proxy-authorization" not in head
    if scheme == "https":  # the CONNECT carries nothing of the upstream's
        assert head.startswith("connect upstream.invalid:443 ") and "secret-upstream-key" not in head
    else:  # a plain-HTTP upstream's request passes through the proxy whole, as HTTP proxies work
        assert "authorization: bearer secret-upstream-key" in head


def test_a_redirect_is_never_followed() -> None:
    """An upstream answering 307 to another server: UpstreamError, and the prompt never reaches
    the server the redirect points to (a 307 would have re-sent the body there)."""
    from tests.support import FakeUpstream

    elsewhere = FakeUpstream(name="elsewhere")
    with serve(elsewhere.app, lifespan="off") as target:

        async def redirect(scope: dict[str, Any], receive: Any, send: Any) -> None:
            while (await receive()).get("more_body"):
                pass
            location = (target.url + "/v1/chat/completions").encode()
            await send({"type": "http.response.start", "status": 307, "headers": [(b"location", location)]})
            await send({"type": "http.response.body", "body": b""})

        with serve(redirect, lifespan="off") as server:

            async def run() -> BaseException | None:
                client = _client(server.url)
                try:
                    await client.open("/chat/completions", b'{"messages": [{"role": "user", "content": "x"}]}')
                except UpstreamError as exc:
                    return exc
                finally:
                    await client.aclose()
                return None

            err = asyncio.run(run())
    assert isinstance(err, UpstreamError) and err.code == "upstream_redirect"
    assert len(elsewhere.ledger) == 0


def test_cookies_an_upstream_sets_are_not_sent_back() -> None:
    """The client serves every tenant: a Set-Cookie on one answer never becomes a Cookie header
    on the next request."""
    seen: list[dict[bytes, bytes]] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        while (await receive()).get("more_body"):
            pass
        seen.append(dict(scope["headers"]))
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json"),
                                (b"set-cookie", b"session=tenant-a; Path=/")]})  # fmt: skip
        await send({"type": "http.response.body", "body": b"{}"})

    async def run(url: str) -> None:
        client = _client(url)
        try:
            for _ in range(2):
                opened = await client.open("/chat/completions", b"{}")
                await opened.response.aread()
                await opened.response.aclose()
        finally:
            await client.aclose()

    with serve(app, lifespan="off") as server:
        # A host name, not an IP address: cookie jars ignore cookies of IP hosts anyway.
        asyncio.run(run(server.url.replace("127.0.0.1", "localhost")))
    assert len(seen) == 2 and all(b"cookie" not in headers for headers in seen)


def test_the_control_plane_client_is_made_on_first_use() -> None:
    """Forwarding never makes the httpx control-plane client (its CA bundle costs start-up time);
    the first ``get_json`` makes it and reads through it; ``aclose`` closes it, and a client never
    asked for stays unmade."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        while (await receive()).get("more_body"):
            pass
        body = b'{"path": "%s"}' % scope["path"].encode()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body})

    async def run(url: str) -> None:
        client = _client(url)
        opened = await client.open("/chat/completions", b"{}")
        await opened.response.aread()
        await opened.response.aclose()
        assert client._control is None
        assert await client.get_json("/models") == {"path": "/v1/models"}
        made = client._control
        assert made is not None and client.client is made  # one, reused
        await client.aclose()
        assert made.is_closed
        unused = _client(url)
        await unused.aclose()
        assert unused._control is None

    with serve(app, lifespan="off") as server:
        asyncio.run(run(server.url))


def test_only_on_prem_upstreams_get_a_control_plane_client_at_start(tmp_path: Any, sqlite_db: str) -> None:
    """The app's start checks on-prem upstreams' manifests (their client is made and used); a
    vendor upstream's client is not made by the start."""
    from gateway.app import create_app
    from gateway.settings import Settings
    from tests.gateway.conftest import base_config
    from tests.support.fake_upstream import FakeUpstream
    from tests.support.harness import SECRETS, FakeUpstreams

    with FakeUpstreams(FakeUpstream(name="vendor", kind="shared"), FakeUpstream(name="local", kind="onprem")) as fakes:
        settings = Settings(secrets=SECRETS, state_dir=str(tmp_path / "var"), **base_config(fakes),
                            audit={"url": sqlite_db, "checkpoint_dir": str(tmp_path / "cp")})  # fmt: skip
        app = create_app(settings)

        async def run() -> tuple[bool, bool, bool]:
            async with app.lifespan():
                state = app.state.gateway
                clients = state.clients
                return (clients["vendor"]._control is None, clients["local"]._control is not None,
                        state.hardening.is_hardened(settings.upstreams[1]))  # fmt: skip

        vendor_unmade, local_made, hardened = asyncio.run(run())
    assert vendor_unmade and local_made and hardened


def test_a_count_answer_past_the_answer_cap_is_no_count() -> None:
    """The /tokenize answer is a whole answer too: past the upstream's max_answer_bytes it is not
    read on (memory bounded) and the prompt counts as not counted, however it would have ended;
    one under the cap is read as before."""

    async def count(url: str) -> BaseException | int:
        client = UpstreamClient(UpstreamSettings(name="u", base_url=url + "/v1", kind="shared",
                                                 tokenize_url=url + "/tokenize", max_answer_bytes=1024 * 1024))  # fmt: skip
        try:
            return await client.count_tokens({"prompt": "hi"})
        except UpstreamError as exc:
            return exc
        finally:
            await client.aclose()

    huge = b'{"count": 5, "pad": "' + b"a" * (2 * 1024 * 1024) + b'"}'
    with serve(_chunked([huge[i : i + 65536] for i in range(0, len(huge), 65536)], delay_s=0.001),
               lifespan="off") as server:  # fmt: skip
        refused = asyncio.run(count(server.url))
    assert isinstance(refused, UpstreamError) and refused.code == "prompt_not_counted"
    with serve(_chunked([b'{"count": 5, "pad": "', b"a" * 500_000, b'"}']), lifespan="off") as server:
        assert asyncio.run(count(server.url)) == 5
