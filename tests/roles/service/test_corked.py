"""A served connection's writes in one pass of the loop go out as one send, the same bytes in order."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest
import uvicorn

from roles.http.corked import Corked
from roles.http.server import deadlined


class Recording(asyncio.Transport):
    """A transport that records each write (each would be one send)."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.closed = self.aborted = self.eof = False

    def write(self, data: Any) -> None:
        self.writes.append(bytes(data))

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.aborted = True

    def write_eof(self) -> None:
        self.eof = True

    def is_closing(self) -> bool:
        return self.closed or self.aborted

    def can_write_eof(self) -> bool:
        return True

    def get_write_buffer_size(self) -> int:
        return 0


async def _pass() -> None:
    """Let the loop finish its current pass (and the next)."""
    for _ in range(2):
        await asyncio.sleep(0)


async def test_writes_in_one_pass_go_out_as_one_in_order() -> None:
    inner = Recording()
    corked = Corked(inner, asyncio.get_running_loop())
    corked.write(b"HTTP/1.1 200 OK\r\n\r\n")
    corked.write(bytearray(b"5\r\nhello\r\n"))
    corked.write(b"")
    corked.writelines([memoryview(b"0\r\n"), b"\r\n"])
    assert inner.writes == [] and corked.get_write_buffer_size() == 34
    await _pass()
    assert inner.writes == [b"HTTP/1.1 200 OK\r\n\r\n5\r\nhello\r\n0\r\n\r\n"]
    corked.write(b"later")  # a later pass: a send of its own
    await _pass()
    assert inner.writes[1:] == [b"later"]


async def test_closing_sends_what_is_held_first_and_aborting_drops_it() -> None:
    loop = asyncio.get_running_loop()
    closed, half, aborted = Recording(), Recording(), Recording()
    corked = Corked(closed, loop)
    corked.write(b"answer")
    corked.close()
    assert closed.writes == [b"answer"] and closed.closed
    corked = Corked(half, loop)
    corked.write(b"408")
    corked.write_eof()
    assert half.writes == [b"408"] and half.eof
    corked = Corked(aborted, loop)
    corked.write(b"lost")
    corked.abort()
    await _pass()
    assert aborted.writes == [] and aborted.aborted
    assert closed.writes == [b"answer"] and half.writes == [b"408"]  # nothing more, however many passes


async def test_what_is_held_for_a_connection_the_peer_closed_is_dropped() -> None:
    inner = Recording()
    corked = Corked(inner, asyncio.get_running_loop())
    corked.write(b"answer")
    inner.closed = True  # the client left before the pass ended
    await _pass()
    assert inner.writes == []


@contextlib.asynccontextmanager
async def _served(app: Any, sends: list[bytes]) -> AsyncIterator[int]:
    """`app` under the served protocol (deadlines and corked writes), each real send recorded."""
    base = deadlined(5.0, 5.0)

    class Counted(base):  # type: ignore[misc, valid-type]
        def connection_made(self, transport: asyncio.Transport) -> None:
            original = transport.write

            def write(data: Any) -> None:
                sends.append(bytes(data))
                original(data)

            transport.write = write  # type: ignore[method-assign]
            super().connection_made(transport)

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(app, http=Counted, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:  # noqa: ASYNC110 (uvicorn says it started by a flag only)
        await asyncio.sleep(0.01)
    try:
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        await task


async def _get(port: int) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    answer = await asyncio.wait_for(reader.read(), 5)
    writer.close()
    return answer


@pytest.mark.parametrize("pause", [False, True])
async def test_a_served_answer_written_in_one_pass_is_one_send(pause: bool) -> None:
    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"data: a\n\n", "more_body": True})
        if pause:  # the model's next piece comes later: a send of its own
            await asyncio.sleep(0.05)
        await send({"type": "http.response.body", "body": b"data: b\n\n", "more_body": False})

    sends: list[bytes] = []
    async with _served(app, sends) as port:
        answer = await _get(port)
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n")
    assert answer.endswith(b"\r\n\r\n9\r\ndata: a\n\n\r\n9\r\ndata: b\n\n\r\n0\r\n\r\n")
    assert b"".join(sends) == answer
    assert len(sends) == (2 if pause else 1)
