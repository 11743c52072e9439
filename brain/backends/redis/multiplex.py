"""`Multiplexer`: the script calls and GETs of every task share one connection, pipelined as they come.

A turn makes a few script calls (load the chat, search, write) and reads; with hundreds of turns at once each
call took a pooled connection, wrote alone, timed its read and gave the connection back, and that bookkeeping
cost more CPU than the call itself. Here the script calls (EVALSHA, EVAL and their read-only forms) and GETs
made in one pass of the event loop go out in one write on one connection, and one reader task hands each reply
to its caller in order (auto-pipelining, as in Lettuce or ioredis). Neither blocks the server, so one call
cannot hold up the next longer than Redis, which runs one at a time anyway, would. Every other command, and
every pipeline, keeps the pool (`brain.backends.redis.lean_pool`).

The same contract as a pooled call: the connection is redis-py's own, connected by it (TLS, ACL user,
database, client name); a reply that does not come within `socket_timeout` of the last one fails every call
waiting with redis-py's `TimeoutError`, a lost connection with its `ConnectionError`, and both are tried again
with the client's retry policy (its backoff, its count), on a new connection. An error reply (`NOSCRIPT`, a
script's own) is raised to its caller alone, as redis-py's parser would raise it. A caller cancelled before
its call was written is never sent; one cancelled after has its reply read and dropped, and the connection
stays in use (a pooled call closes its connection then). The connection is one more than the pool's cap.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any

import hiredis
import redis.asyncio as aioredis
from redis._parsers.hiredis import _AsyncHiredisParser
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import InvalidResponse, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

__all__ = ["MULTIPLEXED", "Multiplexer"]

MULTIPLEXED = frozenset({"EVALSHA", "EVAL", "EVALSHA_RO", "EVAL_RO", "GET"})
"""The commands sent on the shared connection: script calls and GET (a turn reads a counter with it), which
never block the server and whose replies redis-py gives back as they come."""

_WAITING = object()  # hiredis: a reply not whole yet
_PUSH = hiredis.PushNotification
_READ_SIZE = 65536


class _Link:
    """One connection in use by a `Multiplexer`: its streams, parser and the calls waiting for replies."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.writer: asyncio.StreamWriter = conn._writer
        self.reader: asyncio.StreamReader = conn._reader
        options: dict[str, Any] = {}
        if conn.encoder.decode_responses:
            options = {"encoding": conn.encoder.encoding, "errors": conn.encoder.encoding_errors}
        self.parser = hiredis.Reader(
            protocolError=InvalidResponse,
            replyError=_AsyncHiredisParser.parse_error,
            notEnoughData=_WAITING,
            **options,
        )
        self.sent: deque[asyncio.Future[Any]] = deque()  # written, in order, waiting for their replies
        self.progress = 0.0  # loop time of the last write to an idle link, or of the last reply
        self.broken = False
        self.task: asyncio.Task[None] | None = None
        self.watchdog: asyncio.TimerHandle | None = None


class Multiplexer:
    """The shared connection of one standalone client (see the module): `call(args)` sends a script call
    on it and returns the reply; `aclose()` closes it. Bound to the loop that first used it."""

    def __init__(self, pool: aioredis.ConnectionPool) -> None:
        self._pool = pool
        kwargs = pool.connection_kwargs
        self._timeout = float(kwargs.get("socket_timeout") or 0) or None
        self._retry = kwargs.get("retry")
        self._loop: asyncio.AbstractEventLoop | None = None
        self._link: _Link | None = None
        self._opening: asyncio.Lock | None = None
        self._queued: list[bytes] = []
        self._waiting: list[asyncio.Future[Any]] = []
        self._closed = False

    def usable(self) -> bool:
        """Whether calls may go through here now: not closed, and on its loop (the first to ask)."""
        if self._closed:
            return False
        loop = asyncio.get_running_loop()
        if self._loop is None:
            self._loop, self._opening = loop, asyncio.Lock()
        return self._loop is loop

    async def call(self, args: tuple[Any, ...]) -> Any:
        """Send one script call and return its reply, tried again on a lost connection or a timeout as the
        client's retry policy says."""
        try:  # the first try outside the policy, in this frame: fewer frames to resume
            return await self._send(self._in_use() or await self._open(), args)
        except (RedisConnectionError, RedisTimeoutError) as error:
            if self._retry is None:
                raise
            failed = error
        return await self._retried(args, failed)

    async def _retried(self, args: tuple[Any, ...], error: Exception) -> Any:
        """`call` after its first try failed with `error`: the retry policy's, counting that try. Apart
        from `call`, whose every call would otherwise make the cells of this closure."""
        assert self._retry is not None
        failed = [error]

        async def again() -> Any:  # the policy's first try is the one that failed: the same count
            if failed:
                raise failed.pop()
            return await self._send(self._in_use() or await self._open(), args)

        return await self._retry.call_with_retry(again, _ignore)

    def _in_use(self) -> _Link | None:
        """The link calls go out on now; None when there is none or it broke (`_open` makes one)."""
        link = self._link
        return None if link is None or link.broken else link

    def _send(self, link: _Link, args: tuple[Any, ...]) -> asyncio.Future[Any]:
        """Queue the call for the next write; the future of its reply."""
        future: asyncio.Future[Any] = self._loop.create_future()  # type: ignore[union-attr]
        if not self._queued:
            self._loop.call_soon(self._flush)  # type: ignore[union-attr]
        self._queued.append(b"".join(link.conn.pack_command(*args)))
        self._waiting.append(future)
        return future

    async def _open(self) -> _Link:
        async with self._opening:  # type: ignore[union-attr]
            link = self._link
            if link is not None and not link.broken:
                return link
            if self._closed:
                raise RedisConnectionError("the client is closed")
            conn = self._pool.make_connection()  # type: ignore[no-untyped-call]
            await conn.connect()
            link = _Link(conn)
            link.task = self._loop.create_task(self._read(link))  # type: ignore[union-attr]
            self._link = link
            return link

    def _flush(self) -> None:
        """Write what was queued since the last write, on the link in use now (any link of the pool's
        connections packs a command the same way)."""
        queued, waiting, link = self._queued, self._waiting, self._link
        self._queued, self._waiting = [], []
        if link is None or link.broken:  # lost meanwhile: these were never sent
            for future in waiting:
                if not future.done():
                    future.set_exception(RedisConnectionError("Connection lost before the command was sent"))
            return
        if all(f.done() for f in waiting):  # every caller gone before their calls left
            return
        chunks = [c for c, f in zip(queued, waiting, strict=True) if not f.done()]
        waiting = [f for f in waiting if not f.done()]
        if not link.sent:
            link.progress = self._loop.time()  # type: ignore[union-attr]
            self._arm(link)
        link.sent.extend(waiting)
        link.writer.write(b"".join(chunks))

    def _arm(self, link: _Link) -> None:
        if self._timeout is not None and link.watchdog is None:
            link.watchdog = self._loop.call_at(link.progress + self._timeout, self._watch, link)  # type: ignore[union-attr]

    def _watch(self, link: _Link) -> None:
        link.watchdog = None
        if link.broken or not link.sent:
            return
        if self._loop.time() - link.progress >= self._timeout:  # type: ignore[union-attr, operator]
            self._fail(link, RedisTimeoutError(f"Timeout reading from {link.conn._host_error()}"))
        else:
            self._arm(link)

    async def _read(self, link: _Link) -> None:
        parser, sent, loop = link.parser, link.sent, self._loop
        try:
            while True:
                data = await link.reader.read(_READ_SIZE)
                if not data:
                    raise RedisConnectionError("Connection closed by server.")
                parser.feed(data)
                reply = parser.gets()
                while reply is not _WAITING:
                    if type(reply) is _PUSH:  # RESP3 out of band (a notification): nobody's reply
                        reply = parser.gets()
                        continue
                    future = sent.popleft()
                    if not future.done():
                        if isinstance(reply, ResponseError):
                            future.set_exception(reply)
                        else:
                            future.set_result(reply)
                    reply = parser.gets()
                link.progress = loop.time()  # type: ignore[union-attr]
        except asyncio.CancelledError:
            self._fail(link, RedisConnectionError("the client is closed"))
            raise
        except IndexError:  # a reply nobody asked for: the stream cannot be trusted any more
            self._fail(link, InvalidResponse("a reply came that no command asked for"))
        except (RedisConnectionError, InvalidResponse) as exc:
            self._fail(link, exc)
        except OSError as exc:
            host = link.conn._host_error()
            self._fail(link, RedisConnectionError(f"Error while reading from {host} : {exc.args}"))
        except Exception as exc:  # never leave a caller waiting on a reader that is gone
            self._fail(link, RedisConnectionError(f"the shared connection's reader failed: {exc!r}"))

    def _fail(self, link: _Link, error: Exception) -> None:
        """Close `link` and fail every call waiting on it with (a copy of) `error`."""
        if link.broken:
            return
        link.broken = True
        if link.watchdog is not None:
            link.watchdog.cancel()
        link.writer.transport.abort()
        link.conn._close()  # redis-py's own forgets its streams (no "unclosed Connection" warning)
        if link.task is not None and link.task is not asyncio.current_task():
            link.task.cancel()
        waiting = list(link.sent)
        link.sent.clear()
        if self._link is link:
            self._link = None
        for future in waiting:
            if not future.done():
                future.set_exception(type(error)(*error.args))

    async def aclose(self) -> None:
        """Close the connection; calls still waiting fail with `ConnectionError`."""
        self._closed = True
        link = self._link
        if link is None or self._loop is not asyncio.get_running_loop():  # none, or its loop is gone
            return
        self._fail(link, RedisConnectionError("the client is closed"))
        if link.task is not None:
            await asyncio.gather(link.task, return_exceptions=True)


async def _ignore(error: Exception) -> None:
    """After a failed try: nothing to do (the failed connection was already dropped)."""
