"""The standalone client's connection pool (`FairBlockingPool`) and its lean command path (`lean_execute`).

The pool makes commands wait their turn at the connection cap, first come, first served. When redis-py's own
metrics (its OpenTelemetry observability) are off, which is how this library runs it, a command skips what
only they need: each command and each hand-out and return of a connection otherwise awaits several recorders
that return at once, times itself, and dispatches a release event whose only listener re-authenticates a
connection holding a new token (a streaming credential provider's). Here that work is done only when it can
do something; everything else is redis-py's, called the same way: connecting and the ready check of a
connection handed out, its retries with their backoff, what a failed try closes, and the errors raised.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.observability import recorder
from redis.event import AsyncAfterConnectionReleasedEvent, AsyncReAuthConnectionListener
from redis.exceptions import ConnectionError as RedisConnectionError

__all__ = ["FairBlockingPool", "lean_execute", "observed", "wait_turn"]


def observed() -> bool:
    """Whether redis-py's own metrics are on (then every command goes its full way, recorded)."""
    return recorder._get_or_create_collector() is not None


async def wait_turn(turns: asyncio.Semaphore, wait_s: float | None, cap: int) -> None:
    """Take one of `cap` turns, first come, first served; a free one costs no timer. After `wait_s`
    seconds of waiting, a `ConnectionError` that says which setting to raise."""
    if not turns.locked():
        await turns.acquire()  # free now: returns at once
        return
    try:
        async with asyncio.timeout(wait_s):
            await turns.acquire()
    except TimeoutError:
        raise RedisConnectionError(
            f"No connection available: all {cap} connections stayed busy for {wait_s} s "
            "(raise redis.max_connections or redis.pool_timeout)"
        ) from None


class FairBlockingPool(aioredis.ConnectionPool):
    """A pool that, at its cap, makes commands wait (up to `timeout` seconds) first come, first served.

    redis-py's own blocking pool lets a running task take a freed connection ahead of the ones waiting, so
    under load a few waiters starve for seconds; here a FIFO semaphore hands connections out in order, and
    a command that finds one free pays for no timer. Unobserved (see the module), a connection is handed
    out and taken back without redis-py's recorders and release event where these would do nothing.
    """

    def __init__(self, *args: Any, timeout: float | None = 10.0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.timeout = timeout
        self._turns = asyncio.Semaphore(self.max_connections)

    async def get_connection(self, *args: Any, **kwargs: Any) -> Any:
        await wait_turn(self._turns, self.timeout, self.max_connections)
        try:
            if self._lock.locked() or observed():  # another holds the pool (a disconnect, a release)
                return await super().get_connection(*args, **kwargs)  # type: ignore[no-untyped-call]
            connection = self.get_available_connection()  # type: ignore[no-untyped-call]
        except BaseException:
            self._turns.release()
            raise
        try:
            await self.ensure_connection(connection)
        except BaseException:
            await self.release(connection)  # as redis-py's: given back, then raised
            raise
        return connection

    async def release(self, connection: Any) -> None:
        try:
            if (
                self._lock.locked()
                or connection.should_reconnect()
                or connection._re_auth_token is not None
                or observed()
                or not self._quiet_release()
            ):
                await super().release(connection)
                return
            self._in_use_connections.remove(connection)
            self._available_connections.append(connection)
        finally:
            self._turns.release()

    def _quiet_release(self) -> bool:
        """Whether releasing a connection without a new token notifies nobody: the release event's only
        listeners are redis-py's own re-authentication (which does nothing without a token)."""
        dispatcher = self._event_dispatcher
        if dispatcher is None:
            return False
        released = dispatcher._event_listeners_mapping.get(AsyncAfterConnectionReleasedEvent, ())
        return all(type(listener) is AsyncReAuthConnectionListener for listener in released)


async def lean_execute(client: aioredis.Redis, args: tuple[Any, ...], options: dict[str, Any]) -> Any:
    """`client.execute_command(*args, **options)` for a pooled client (no connection of its own) while
    unobserved: redis-py's, less its recorders (which would return at once)."""
    pool = client.connection_pool
    name = args[0]
    conn = await pool.get_connection()  # type: ignore[no-untyped-call]
    start = time.monotonic()

    def failed(error: Exception, failure_count: int) -> Any:
        return client._close_connection(conn, error, failure_count, start, name)

    try:
        return await conn.retry.call_with_retry(
            lambda: client._send_command_parse_response(conn, name, *args, **options),  # type: ignore[no-untyped-call]
            failed,
            with_failure_count=True,
        )
    finally:
        await pool.release(conn)
