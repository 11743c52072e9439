"""How `brain serve` serves its app: uvicorn with read deadlines on every connection it accepts. A client
must send a request's headers within `serve.header_timeout` of starting it (or of connecting) and its body
within `serve.body_timeout` of the headers, or the connection is answered 408 and closed. Without them a
client that dribbles bytes (slowloris) holds a connection, a socket and a task for as long as it likes;
uvicorn itself only bounds idle keep-alive.

The deadlines run from the first byte of each request, not per read: a client sending one byte a second
never resets them."""

from __future__ import annotations

import asyncio
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from brain.settings import ServeSettings

__all__ = ["deadlined", "server_config"]

_TIMEOUT = b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"


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


def deadlined(header_timeout: float, body_timeout: float) -> type[H11Protocol]:
    """uvicorn's h11 protocol with the two read deadlines (pass it as `uvicorn.Config(http=...)`)."""

    class Deadlined(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None
        _phase: object = None  # what the armed deadline waits for: h11.IDLE (headers) or h11.SEND_BODY

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._watch()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._watch()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            # Idle between requests is bounded by uvicorn's keep-alive timeout; the header deadline starts
            # again with the next request's first byte (`data_received`).
            self._disarm()
            if self.conn.their_state is not h11.IDLE:
                self._watch()

        def _watch(self) -> None:
            """Arm the deadline of the phase the client is in (once per phase), or none once the request
            is read."""
            state = self.conn.their_state
            if state is self._phase:
                return
            self._disarm()
            if state is h11.IDLE or state is h11.SEND_BODY:
                after = header_timeout if state is h11.IDLE else body_timeout
                self._phase, self._deadline = state, self.loop.call_later(after, self._expired)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
            self._phase, self._deadline = None, None

        def _expired(self) -> None:
            self._deadline = None
            if self.transport.is_closing():
                return
            if self.cycle is None or self.cycle.response_complete or not self.cycle.response_started:
                self.transport.write(_TIMEOUT)  # nothing of an answer to this request was sent yet
            self.transport.close()

    return Deadlined
