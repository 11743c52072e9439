"""How `brain serve` serves its app: uvicorn with read deadlines on every connection it accepts. A client
must send a request's headers within `serve.header_timeout` of starting it (or of connecting) and its body
within `serve.body_timeout` of the headers, or the connection is answered 408 and closed. Without them a
client that dribbles bytes (slowloris) holds a connection, a socket and a task for as long as it likes;
uvicorn itself only bounds idle keep-alive. Requests are parsed by httptools (C) and served on uvloop where
installed: a fraction of the CPU of h11 and asyncio's loop per request. What a response writes within one
pass of the loop goes out in one send (`Corked`).

The deadlines run from the first byte of each request, not per read: a client sending one byte a second
never resets them."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Coroutine
from typing import Any, TypeVar

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from brain.settings import ServeSettings
from roles.http.corked import Corked

__all__ = ["YOUNG_THRESHOLD", "deadlined", "import_sdk", "run_served", "server_config", "settle_heap"]

T = TypeVar("T")
_LINGER = 1.0  # seconds a timed-out connection is read (and dropped) after its 408, before it is closed
_TIMEOUT = b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
YOUNG_THRESHOLD = 200_000
"""Allocations between two collections of the youngest generation in a serving process (Python's: 700).
Under load the young objects are mostly the requests in flight (their coroutines, closures, buffers: ~120,000
for 500 streamed turns), all alive, so each collection goes over them and finds next to nothing: at 50,000
one ran every ~1,000 turns, ~65 ms each (96 us of collector time a turn in `benchmarks/serve.py`); at
200,000 one every ~8,000 turns, ~150 ms each (37 us a turn)."""


def settle_heap() -> None:
    """Once a `brain serve` process serves: what start-up built (modules, the app, clients, tokenizers) is
    moved out of the garbage collector's scans (`gc.freeze`), and the youngest generation is collected
    every `YOUNG_THRESHOLD` allocations. A turn allocates thousands of short-lived objects, so with
    Python's defaults a collection ran several times a turn and a full one, over every object the process
    holds, every few hundred turns. Cyclic garbage is still collected, in larger batches. For a serving
    process only: a library leaves its host's collector as it is."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, *gc.get_threshold()[1:])


def import_sdk() -> None:
    """Import the `openai` SDK, before serving. A chat never needs it (`brain.llm.endpoint`), but the first
    error an endpoint answers is one of its exceptions: importing it then (~0.4 s, on the event loop)
    would stall every stream of the process."""
    import openai  # noqa: F401


def run_served(main: Coroutine[Any, Any, T]) -> T:
    """Run `main` (a server) on uvloop where it is installed (a faster event loop), else asyncio's."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(main)


def server_config(app: Any, serve: ServeSettings) -> uvicorn.Config:
    """uvicorn's configuration for `app` under `serve`'s deadlines (the lifespan runs; graceful shutdown
    waits up to 10 s for requests in flight)."""
    return uvicorn.Config(
        app,
        http=deadlined(serve.header_timeout, serve.body_timeout),
        timeout_keep_alive=serve.keepalive_timeout,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=10,
    )


def deadlined(header_timeout: float, body_timeout: float) -> type[HttpToolsProtocol]:
    """uvicorn's httptools protocol (a C parser) with the two read deadlines (pass it as
    `uvicorn.Config(http=...)`)."""

    class Deadlined(HttpToolsProtocol):
        _deadline: asyncio.TimerHandle | None = None
        _timed_out = False

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(Corked(transport, self.loop))  # an answer's pieces in one send
            self._arm(header_timeout)  # the first request's headers: from connecting

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def on_message_begin(self) -> None:
            super().on_message_begin()
            if self._deadline is None:  # a later request's headers: from its first byte
                self._arm(header_timeout)

        def on_headers_complete(self) -> None:
            super().on_headers_complete()
            self._arm(body_timeout)

        def on_message_complete(self) -> None:
            super().on_message_complete()
            # The request is read: idle until the next one is bounded by uvicorn's keep-alive timeout.
            self._disarm()

        def _arm(self, after: float) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(after, self._expired)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def data_received(self, data: bytes) -> None:
            if not self._timed_out:  # after a 408, what the client still sends is read and dropped
                super().data_received(data)

        def _expired(self) -> None:
            self._deadline = None
            if self.transport.is_closing():
                return
            if self.cycle is None or self.cycle.response_complete or not self.cycle.response_started:
                self.transport.write(_TIMEOUT)  # nothing of an answer to this request was sent yet
            if not self.transport.can_write_eof():
                self.transport.close()
                return
            # Half-close, and read on for a moment: closing at once with the client's bytes unread would
            # reset the connection, and the client could lose the 408 it was sent.
            self._timed_out = True
            self.transport.write_eof()
            self.loop.call_later(_LINGER, self.transport.close)

    return Deadlined
