"""`LeanHTTP`, the transport of `ChatHTTP` without a proxy: keep-alive reuse, a stale connection tried once
more, timeouts, a body cut short, chunked bodies, and where it does not apply; on asyncio's loop and on
uvloop (what `brain serve` runs)."""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import Awaitable, Callable
from pathlib import Path

import openai
import pytest
import uvloop

from brain.llm.chat_http import ChatHTTP
from brain.llm.lean_http import LeanHTTP
from tests.support.certs import make_certs

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
CHUNK = {"choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": "stop"}]}
SSE = f"data: {json.dumps(CHUNK)}\n\ndata: [DONE]\n\n".encode()


async def request_of(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")
    )
    return head + await reader.readexactly(length)


class Endpoint:
    """A loopback HTTP/1.1 server whose every connection runs `handler`; counts connections."""

    def __init__(self, handler: Handler, tls: ssl.SSLContext | None = None) -> None:
        self.handler, self.tls, self.connections = handler, tls, 0

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            await self.handler(reader, writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def __aenter__(self) -> str:
        self.server = await asyncio.start_server(self.serve, "127.0.0.1", 0, ssl=self.tls)
        scheme = "https" if self.tls is not None else "http"
        return f"{scheme}://localhost:{self.server.sockets[0].getsockname()[1]}/v1"

    async def __aexit__(self, *_: object) -> None:
        self.server.close()
        await self.server.wait_closed()


def keep_alive(endpoint_requests: list[bytes], *, close_after: bool = False) -> Handler:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            endpoint_requests.append(await request_of(reader))
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: %d\r\n\r\n%s"
                % (len(SSE), SSE)
            )
            await writer.drain()
            if close_after:  # a server that drops idle keep-alive connections
                return

    return handler


def on_both_loops(test: Callable[[], Awaitable[None]]) -> Callable[[str], None]:
    """Run the coroutine function on asyncio's own loop and on uvloop's."""

    @pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
    def run(loop: str) -> None:
        factory = uvloop.new_event_loop if loop == "uvloop" else asyncio.new_event_loop
        with asyncio.Runner(loop_factory=factory) as runner:
            runner.run(test())

    run.__name__ = test.__name__
    return run


def _chat(client: openai.AsyncOpenAI) -> ChatHTTP:
    chat = ChatHTTP.for_client(client)
    assert chat is not None
    return chat


async def _streams(chat: ChatHTTP, n: int) -> None:
    for _ in range(n):
        (chunk,) = [c async for batch in chat.stream({"model": "m", "stream": True}) for c in batch]
        assert chunk == CHUNK


@on_both_loops
async def test_connections_are_kept_alive_and_reused() -> None:
    requests: list[bytes] = []
    endpoint = Endpoint(keep_alive(requests))
    async with endpoint as url:
        chat = _chat(openai.AsyncOpenAI(base_url=url, api_key="sk-test"))
        await _streams(chat, 5)
        await asyncio.gather(*(_streams(chat, 2) for _ in range(3)))  # three at once: three connections
        await chat.aclose()
    assert chat._lean is None and len(requests) == 11 and endpoint.connections == 3
    first = requests[0].decode()
    assert first.startswith("POST /v1/chat/completions HTTP/1.1\r\n")
    assert (
        "Host: localhost:" in first
        and "Authorization: Bearer sk-test\r\n" in first
        and "Content-Type: application/json\r\n" in first
    )
    assert json.loads(first.split("\r\n\r\n", 1)[1]) == {"model": "m", "stream": True}


@on_both_loops
async def test_a_connection_the_server_dropped_while_idle_is_tried_once_more_on_a_new_one() -> None:
    requests: list[bytes] = []
    endpoint = Endpoint(keep_alive(requests, close_after=True))
    async with endpoint as url:
        chat = _chat(openai.AsyncOpenAI(base_url=url, api_key="sk", max_retries=0))
        await _streams(chat, 1)
        await asyncio.sleep(0.05)  # the server's close arrives while the connection is idle
        await _streams(chat, 3)
        await chat.aclose()
    assert len(requests) == 4 and endpoint.connections == 4


@on_both_loops
async def test_a_kept_connection_closed_unanswered_as_the_request_goes_out_is_tried_on_a_new_one() -> None:
    requests: list[bytes] = []

    async def once(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await keep_alive(requests, close_after=True)(reader, writer)
        await request_of(reader)  # the next request on this connection: read, never answered

    endpoint = Endpoint(once)
    async with endpoint as url:
        chat = _chat(openai.AsyncOpenAI(base_url=url, api_key="sk", max_retries=0))
        await _streams(chat, 3)
        await chat.aclose()
    assert len(requests) == 3 and endpoint.connections == 3  # each reused connection failed, then a new one


@on_both_loops
async def test_a_body_cut_short_is_a_connection_error_and_the_connection_is_dropped() -> None:
    async def cut(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await request_of(reader)
        writer.write(
            b'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: 500\r\n\r\ndata: {"a"'
        )
        await writer.drain()

    async with Endpoint(cut) as url:
        chat = _chat(openai.AsyncOpenAI(base_url=url, api_key="sk", max_retries=0))
        with pytest.raises(openai.APIConnectionError, match="closed the connection before the answer ended"):
            await _streams(chat, 1)
        assert chat._lean is not None and not chat._lean._idle and not chat._lean._busy
        await chat.aclose()


@on_both_loops
async def test_a_silent_server_times_out_between_reads() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await request_of(reader)
        await asyncio.sleep(5)

    async with Endpoint(silent) as url:
        chat = _chat(openai.AsyncOpenAI(base_url=url, api_key="sk", max_retries=0, timeout=0.2))
        with pytest.raises(openai.APITimeoutError):
            await _streams(chat, 1)
        await chat.aclose()


@on_both_loops
async def test_a_chunked_body_is_read_line_by_line_across_chunks() -> None:
    async def chunked(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await request_of(reader)
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
        )
        for i in range(0, len(SSE), 7):  # lines split anywhere, one chunk at a time
            piece = SSE[i : i + 7]
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            await writer.drain()
            await asyncio.sleep(0)
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        await request_of(reader)  # kept alive: a second request on the same connection

    endpoint = Endpoint(chunked)
    async with endpoint as url:
        chat = _chat(openai.AsyncOpenAI(base_url=url, api_key="sk", max_retries=0))
        await _streams(chat, 1)
        assert chat._lean is not None and len(chat._lean._idle) == 1
        await chat.aclose()


@on_both_loops
async def test_a_body_without_a_length_ends_with_its_connection() -> None:
    for version in (b"1.0", b"1.1"):
        await _until_close(version)


async def _until_close(version: bytes) -> None:
    async def until_close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await request_of(reader)
        writer.write(
            b"HTTP/%s 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n" % version
        )
        for line in SSE.split(b"\n"):
            writer.write(line + b"\n")
            await writer.drain()

    endpoint = Endpoint(until_close)
    async with endpoint as url:
        chat = _chat(openai.AsyncOpenAI(base_url=url, api_key="sk", max_retries=0))
        await _streams(chat, 2)
        assert chat._lean is not None and not chat._lean._idle  # not kept: the server closed it
        await chat.aclose()
    assert endpoint.connections == 2


@on_both_loops
async def test_leaving_a_stream_early_closes_its_connection() -> None:
    requests: list[bytes] = []
    async with Endpoint(keep_alive(requests)) as url:
        chat = _chat(openai.AsyncOpenAI(base_url=url, api_key="sk"))
        stream = chat.stream({"model": "m", "stream": True})
        assert await anext(stream) == [CHUNK]
        await stream.aclose()  # the rest unread: the connection cannot serve another request
        assert chat._lean is not None and not chat._lean._idle and not chat._lean._busy
        await chat.aclose()


def test_it_applies_only_where_it_can() -> None:
    options = {"connect_timeout": 1.0, "read_timeout": 1.0}
    assert LeanHTTP.for_url("http://127.0.0.1:9/v1/chat/completions", {"A": "b"}, **options) is not None
    assert LeanHTTP.for_url("http://user:pw@host/v1", {}, **options) is None  # credentials in the URL
    assert LeanHTTP.for_url("ftp://host/v1", {}, **options) is None
    assert LeanHTTP.for_url("http://host/v1", {"X-Bad": "a\r\nInjected: yes"}, **options) is None
    assert LeanHTTP.for_url("http://host/v1", {"X-Name": "名字"}, **options) is None


async def test_https_checks_the_servers_certificate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_certs(tmp_path)
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(tmp_path / "server.crt", tmp_path / "server.key")
    requests: list[bytes] = []
    endpoint = Endpoint(keep_alive(requests), tls=tls)
    async with endpoint as url:
        for trusted in (False, True):  # certifi's bundle does not know the test's authority; then it does
            if trusted:
                monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "ca.crt"))
            chat = _chat(openai.AsyncOpenAI(base_url=url, api_key="sk", max_retries=0))
            if trusted:
                await _streams(chat, 3)
            else:
                with pytest.raises(openai.APIConnectionError, match="CERTIFICATE_VERIFY_FAILED"):
                    await _streams(chat, 1)
            assert chat._lean is not None  # over the lean transport, with TLS
            await chat.aclose()
    assert len(requests) == 3 and endpoint.connections == 1  # the refused handshake never got that far
