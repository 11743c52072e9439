"""One async Redis connection pool per process, health-checked at start."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import ssl
from collections.abc import AsyncIterator
from types import TracebackType
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.cluster import ClusterPipeline, RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from brain.errors import StoreError
from brain.logs import redact
from brain.settings import RedisSettings, Settings, mask_url
from brain.store.embedded import EmbeddedValkey

__all__ = ["FairBlockingPool", "RedisClient", "RedisConnection", "WaitingCluster", "client_kwargs"]

RedisClient = aioredis.Redis | RedisCluster

_CERT_REQS = {"required": ssl.CERT_REQUIRED, "optional": ssl.CERT_OPTIONAL, "none": ssl.CERT_NONE}


def client_kwargs(settings: RedisSettings, url: str) -> dict[str, Any]:
    """Keyword arguments for `from_url`: credentials, timeouts, retries and TLS. Pure."""
    kwargs: dict[str, Any] = {
        "socket_timeout": settings.socket_timeout,
        "socket_connect_timeout": settings.connect_timeout,
        "max_connections": settings.max_connections,
        "retry": Retry(ExponentialBackoff(cap=1.0, base=0.05), settings.retries),
        "retry_on_error": [RedisConnectionError, RedisTimeoutError],
        "health_check_interval": 30,
    }
    if settings.username is not None:
        kwargs["username"] = settings.username
    if settings.password is not None:
        kwargs["password"] = settings.password.get_secret_value()
    if url.lower().startswith(("rediss://", "valkeys://")):
        kwargs["ssl_cert_reqs"] = _CERT_REQS[settings.ssl_cert_reqs]
        kwargs["ssl_check_hostname"] = settings.ssl_check_hostname and settings.ssl_cert_reqs != "none"
        for name in ("ssl_ca_certs", "ssl_certfile", "ssl_keyfile"):
            value = getattr(settings, name)
            if value is not None:
                kwargs[name] = str(value)
    return kwargs


async def _wait_turn(turns: asyncio.Semaphore, wait_s: float | None, cap: int) -> None:
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
    a command that finds one free pays for no timer.
    """

    def __init__(self, *args: Any, timeout: float | None = 10.0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.timeout = timeout
        self._turns = asyncio.Semaphore(self.max_connections)

    async def get_connection(self, *args: Any, **kwargs: Any) -> Any:
        await _wait_turn(self._turns, self.timeout, self.max_connections)
        try:
            return await super().get_connection(*args, **kwargs)  # type: ignore[no-untyped-call]
        except BaseException:
            self._turns.release()
            raise

    async def release(self, connection: Any) -> None:
        try:
            await super().release(connection)
        finally:
            self._turns.release()


class WaitingCluster(RedisCluster):
    """A cluster client whose commands and pipelines wait (up to `pool_timeout`, first come, first served)
    while `max_connections` are in use, instead of failing with `MaxConnectionsError`. One command or one
    pipeline uses at most one connection per node, so capping them in flight caps every node's pool."""

    def __init__(self, *args: Any, pool_timeout: float = 10.0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._cap = int(kwargs.get("max_connections", 100))
        self._gate = asyncio.Semaphore(self._cap)
        self._pool_timeout = pool_timeout

    @contextlib.asynccontextmanager
    async def _turn(self) -> AsyncIterator[None]:
        if _HOLDING.get():  # a pipeline retrying one of its commands already holds a turn
            yield
            return
        await _wait_turn(self._gate, self._pool_timeout, self._cap)
        token = _HOLDING.set(True)
        try:
            yield
        finally:
            _HOLDING.reset(token)
            self._gate.release()

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        async with self._turn():
            return await super().execute_command(*args, **kwargs)

    def pipeline(self, transaction: Any = None, shard_hint: Any = None) -> ClusterPipeline:
        pipe = super().pipeline(transaction, shard_hint)
        execute = pipe.execute

        async def gated(raise_on_error: bool = True, allow_redirections: bool = True) -> list[Any]:
            async with self._turn():
                return await execute(raise_on_error, allow_redirections)

        pipe.execute = gated  # type: ignore[method-assign]
        return pipe


_HOLDING: contextvars.ContextVar[bool] = contextvars.ContextVar("brain_redis_turn", default=False)


class RedisConnection:
    """Owns the process's Redis client (and the embedded server when it started one)."""

    def __init__(
        self, client: RedisClient, url: str, embedded: EmbeddedValkey | None = None, *, shown: str = ""
    ) -> None:
        self.client = client
        self.masked_url = shown or mask_url(url)  # as every message shows it (the configured URL, masked)
        self.embedded = embedded

    @classmethod
    async def open(cls, settings: Settings) -> RedisConnection:
        """Connect to `redis.url`, or to the embedded Valkey under `home`; ping and check the version.

        Raises `StoreError` naming the URL (password masked) when the server is not usable.
        """
        embedded = None
        if settings.redis.url is None:
            embedded = EmbeddedValkey(settings.home)
            url = await asyncio.to_thread(embedded.start)
        else:
            url = settings.redis.url.get_secret_value()
        shown = mask_url(url)  # the URL as configured (valkey:// included), password masked, in every message
        if url.lower().startswith("valkey"):
            url = "redis" + url[len("valkey") :]
        kwargs = client_kwargs(settings.redis, url)
        try:
            client: RedisClient
            if settings.redis.cluster:
                kwargs.pop("health_check_interval")
                client = WaitingCluster.from_url(url, pool_timeout=settings.redis.pool_timeout, **kwargs)
            else:
                # At its cap a command waits (up to pool_timeout, in turn) for a free connection.
                pool = FairBlockingPool.from_url(url, timeout=settings.redis.pool_timeout, **kwargs)
                client = aioredis.Redis.from_pool(pool)
        except (ValueError, RedisError) as exc:
            await asyncio.to_thread(_stop, embedded)
            raise StoreError(f"bad Redis URL {shown}: {redact(str(exc))}") from exc
        connection = cls(client, url, embedded, shown=shown)
        try:
            await connection.check()
        except StoreError:
            await connection.aclose()
            raise
        return connection

    async def check(self) -> str:
        """Ping and return the server version; `StoreError` when unreachable or older than 7."""
        try:
            await self.client.ping()
            info = await self.client.info("server")
        except (RedisError, OSError) as exc:
            raise StoreError(f"cannot reach Redis at {self.masked_url}: {exc}") from exc
        if isinstance(self.client, RedisCluster):
            info = next(iter(info.values())) if info and isinstance(next(iter(info.values())), dict) else info
        version = str(info.get("valkey_version") or info.get("redis_version") or "0")
        major = int(version.split(".")[0]) if version.split(".")[0].isdigit() else 0
        if major < 7:
            raise StoreError(
                f"Redis at {self.masked_url} is version {version}; brain needs Redis >= 7 or Valkey"
            )
        return version

    async def aclose(self) -> None:
        """Close the pool, then stop the embedded server if this process started it."""
        try:
            await self.client.aclose()
        finally:
            await asyncio.to_thread(_stop, self.embedded)

    async def __aenter__(self) -> RedisConnection:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


def _stop(embedded: EmbeddedValkey | None) -> None:
    if embedded is not None:
        embedded.stop()
