"""`LeanHTTP`: HTTP/1.1 POSTs to one endpoint over asyncio protocols and httptools' response parser.

The chat request of every turn (`brain.llm.chat_http`) cost ~0.25 ms of CPU over aiohttp at hundreds of
streams at once, ~0.07 ms here: no session, cookie or tracing machinery, one parser callback per piece
read. It keeps what a chat endpoint needs: keep-alive connections (idle ones reused newest first, a stale
one retried once on a new connection when it answered nothing), TLS with the caller's context, a timeout
on connecting and between reads, the response's status and headers, and its body as it arrives.

It is used only where it applies (`LeanHTTP.applies`): http or https, no user info in the URL, header
values without line breaks; with a proxy, the SDK's client sends instead. Failures are `OSError`s (a
timeout a `TimeoutError`), as a socket's would be.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import urllib.parse
from collections import deque
from collections.abc import Mapping
from typing import cast

import httptools

__all__ = ["LeanHTTP", "LeanResponse"]

_IDLE = 1_000  # idle connections kept at most


class _Connection(asyncio.Protocol):
    """One connection: its responses parsed as they arrive, one request at a time."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.pieces: deque[bytes] = deque()
        self.lost = False
        self.error: OSError | None = None
        self.waiter: asyncio.Future[None] | None = None
        self.reset()

    def reset(self) -> None:
        """Ready for the next response (the connection's own state stays)."""
        self.parser = httptools.HttpResponseParser(self)
        self.headers: list[tuple[str, str]] = []
        self.status = 0
        self.head = self.complete = self.answered = self.keep_alive = self.delimited = False

    # asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's are not asyncio.Transport's

    def data_received(self, data: bytes) -> None:
        self.answered = True
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._fail(ConnectionError(f"malformed HTTP response: {exc}"))
            if self.transport is not None:
                self.transport.close()
        self._wake()

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        if self.head and not self.delimited and exc is None:
            self.complete = True  # a body without a length or chunks ends with its connection
        if not self.complete:
            reason = f": {exc}" if exc is not None else ""
            self._fail(
                ConnectionResetError(f"the server closed the connection before the answer ended{reason}")
            )
        self._wake()

    # httptools callbacks
    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name.decode("latin-1"), value.decode("latin-1")))

    def on_headers_complete(self) -> None:
        self.status, self.head = self.parser.get_status_code(), True
        self.delimited = any(k.lower() in ("content-length", "transfer-encoding") for k, _ in self.headers)

    def on_body(self, body: bytes) -> None:
        self.pieces.append(body)

    def on_message_complete(self) -> None:
        self.complete, self.keep_alive = True, self.parser.should_keep_alive()  # reset once it returns

    def _fail(self, error: OSError) -> None:
        if self.error is None:
            self.error = error

    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def wait(self, seconds: float | None) -> None:
        """Until more arrives (or the connection ends); `TimeoutError` after `seconds` without any."""
        if self.error is not None:
            raise self.error
        self.waiter = asyncio.get_running_loop().create_future()
        try:
            async with asyncio.timeout(seconds):
                await self.waiter
        finally:
            self.waiter = None
        if self.error is not None and not self.pieces:
            raise self.error


class LeanResponse:
    """A response as aiohttp's `ClientResponse` gives what `ChatHTTP` reads: `status`, `headers`, `read()`,
    its body piece by piece (`content.readany()`; `content` is itself), `release()` (the connection back to
    the pool once the body was read to its end) and `close()`."""

    def __init__(self, pool: LeanHTTP, connection: _Connection) -> None:
        self._pool, self._connection = pool, connection
        self.status = connection.status
        self.headers: Mapping[str, str] = dict(connection.headers)
        self._done = False

    @property
    def content(self) -> LeanResponse:
        return self

    def at_eof(self) -> bool:
        connection = self._connection
        return connection.complete and not connection.pieces

    async def readany(self) -> bytes:
        """What of the body has come and was not read yet, waiting for some; `b""` at its end."""
        connection = self._connection
        pieces = connection.pieces
        while not pieces:
            if connection.complete:
                return b""
            await connection.wait(self._pool.read_timeout)
        if len(pieces) == 1:
            return pieces.popleft()
        joined = b"".join(pieces)
        pieces.clear()
        return joined

    async def read(self) -> bytes:
        pieces = []
        while piece := await self.readany():
            pieces.append(piece)
        return b"".join(pieces)

    def release(self) -> None:
        if not self._done:
            self._done = True
            self._pool._give_back(self._connection)

    def close(self) -> None:
        if not self._done:
            self._done = True
            self._pool._discard(self._connection)


class LeanHTTP:
    """Requests to one URL with one method (POST by default) and fixed headers, over a pool of keep-alive
    connections (one event loop)."""

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str],
        *,
        connect_timeout: float | None,
        read_timeout: float | None,
        tls: ssl.SSLContext | None = None,
        method: str = "POST",
    ) -> None:
        parts = urllib.parse.urlsplit(url)
        self.host, self.tls = parts.hostname or "", tls if parts.scheme == "https" else None
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.connect_timeout, self.read_timeout = connect_timeout, read_timeout
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        lines = [f"{method} {target} HTTP/1.1", f"Host: {parts.netloc}"]
        lines += [f"{k}: {v}" for k, v in headers.items() if k.lower() not in _OWN]
        lines += ["Accept-Encoding: identity", "Connection: keep-alive", "Content-Length: "]
        self._head = "\r\n".join(lines).encode("latin-1")
        self._idle: list[_Connection] = []
        self._busy: set[_Connection] = set()

    @classmethod
    def for_url(
        cls,
        url: str,
        headers: Mapping[str, str],
        *,
        connect_timeout: float | None,
        read_timeout: float | None,
        tls: ssl.SSLContext | None = None,
    ) -> LeanHTTP | None:
        """A pool for `url`, or None where it does not apply (`applies`)."""
        if not cls.applies(url, headers):
            return None
        return cls(url, headers, connect_timeout=connect_timeout, read_timeout=read_timeout, tls=tls)

    @staticmethod
    def applies(url: str, headers: Mapping[str, str]) -> bool:
        """Whether requests to `url` with `headers` can go over this transport: http or https, an ASCII
        host, no user info in the URL, header names and values of Latin-1 without line breaks. Pure."""
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.username or parts.password:
            return False
        if not parts.netloc.isascii():  # an international name: the SDK sends it (IDNA-encoded)
            return False
        try:
            for k, v in headers.items():
                if any(c in k + v for c in "\r\n\0"):
                    return False
                (k + v).encode("latin-1")
        except UnicodeEncodeError:
            return False
        return True

    async def send(self, body: bytes = b"") -> LeanResponse:
        """The response to `body` (JSON; none for a GET) once its status and headers are in; its body
        follows as read."""
        request = b"%s%d\r\nContent-Type: application/json\r\n\r\n%s" % (self._head, len(body), body)
        while self._idle:
            connection = self._idle.pop()
            if connection.lost or connection.transport is None or connection.transport.is_closing():
                continue
            try:
                return await self._exchange(connection, request)
            except ConnectionError:
                if connection.answered:  # it answered something: not a stale connection
                    raise
            # a kept-alive connection the server had closed unanswered: once more, on a new one
        return await self._exchange(await self._connect(), request)

    async def _connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        async with asyncio.timeout(self.connect_timeout):
            _, connection = await loop.create_connection(
                _Connection,
                self.host,
                self.port,
                ssl=self.tls,
                server_hostname=self.host if self.tls is not None else None,
            )
        return connection

    async def _exchange(self, connection: _Connection, request: bytes) -> LeanResponse:
        self._busy.add(connection)
        connection.reset()
        try:
            assert connection.transport is not None
            connection.transport.write(request)
            while not connection.head:
                await connection.wait(self.read_timeout)
        except BaseException:
            self._discard(connection)
            raise
        return LeanResponse(self, connection)

    def _give_back(self, connection: _Connection) -> None:
        self._busy.discard(connection)
        keep = connection.complete and connection.keep_alive and not connection.lost
        if keep and len(self._idle) < _IDLE:
            connection.pieces.clear()
            self._idle.append(connection)
        else:
            self._close(connection)

    def _discard(self, connection: _Connection) -> None:
        self._busy.discard(connection)
        self._close(connection)

    @staticmethod
    def _close(connection: _Connection) -> None:
        if connection.transport is not None:
            connection.transport.close()

    async def aclose(self) -> None:
        """Close every connection, idle or in use."""
        for connection in [*self._idle, *self._busy]:
            self._close(connection)
        self._idle.clear()
        self._busy.clear()
        with contextlib.suppress(Exception):
            await asyncio.sleep(0)  # transports close on the loop's next turn


_OWN = frozenset(
    {"host", "content-length", "content-type", "connection", "accept-encoding", "transfer-encoding"}
)
"""Headers the request writes itself."""
