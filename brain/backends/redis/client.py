"""The process's Redis client, with every failure translated once: a command, a pipeline or a script that
fails raises `StoreError` (or `Refused`, a script's own refusal), never a raw client exception. Messages name
the command, never a key (keys carry user ids).

Also here: the pools that make commands wait their turn at the connection cap, first come, first served.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import ssl
from collections.abc import AsyncIterator
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.client import Pipeline
from redis.asyncio.cluster import ClusterPipeline, RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, RedisClusterException, RedisError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from brain.errors import ErasedError, StoreError
from brain.logs import redact
from brain.settings import RedisSettings

__all__ = [
    "FairBlockingPool",
    "RedisClient",
    "Refused",
    "TranslatingRedis",
    "WaitingCluster",
    "client_kwargs",
    "connect",
]

RedisClient = aioredis.Redis | RedisCluster

_CERT_REQS = {"required": ssl.CERT_REQUIRED, "optional": ssl.CERT_OPTIONAL, "none": ssl.CERT_NONE}
_FAILURES = (RedisError, RedisClusterException, OSError)


class Refused(StoreError):
    """A script refused a write on purpose (`redis.error_reply('BRAIN_<CODE> detail')`): `code` and `detail`
    say why, for the store to turn into the right error (missing, conflict, limit...)."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(f"{code} {detail}".strip())
        self.code, self.detail = code, detail


def _translated(command: str, exc: BaseException) -> StoreError:
    """The one translation of a client failure."""
    text = str(exc)
    if isinstance(exc, ResponseError) and "BRAIN_ERASED" in text:  # a script's, or a pipeline's
        return ErasedError("the memory this work was for was erased meanwhile: nothing was written")
    if isinstance(exc, ResponseError) and text.startswith("BRAIN_"):
        code, _, detail = text.split(" script:")[0].partition(" ")
        return Refused(code, detail.strip())
    return StoreError(f"Redis {command} failed: {type(exc).__name__}: {redact(text)}")


def _command(args: tuple[Any, ...]) -> str:
    return str(args[0]) if args else "command"


# Each translating method catches in place (a try costs nothing until something fails; a context manager
# would cost every command). NoScriptError passes: redis-py loads the script and calls again.


class TranslatingPipeline(Pipeline):
    """A pipeline whose failures are `StoreError`s."""

    async def execute(self, raise_on_error: bool = True) -> list[Any]:
        try:
            return await super().execute(raise_on_error)
        except NoScriptError:
            raise
        except _FAILURES as exc:
            raise _translated("pipeline", exc) from exc


class TranslatingRedis(aioredis.Redis):
    """A standalone client whose failures are `StoreError`s."""

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        try:
            return await super().execute_command(*args, **options)  # type: ignore[no-untyped-call]
        except NoScriptError:
            raise
        except _FAILURES as exc:
            raise _translated(_command(args), exc) from exc

    def pipeline(self, transaction: bool = True, shard_hint: str | None = None) -> Pipeline:
        return TranslatingPipeline(self.connection_pool, self.response_callbacks, transaction, shard_hint)


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
    pipeline uses at most one connection per node, so capping them in flight caps every node's pool.
    Failures are `StoreError`s."""

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
        try:
            async with self._turn():
                return await super().execute_command(*args, **kwargs)
        except NoScriptError:
            raise
        except _FAILURES as exc:
            raise _translated(_command(args), exc) from exc

    def pipeline(self, transaction: Any = None, shard_hint: Any = None) -> ClusterPipeline:
        pipe = super().pipeline(transaction, shard_hint)
        execute = pipe.execute

        async def gated(raise_on_error: bool = True, allow_redirections: bool = True) -> list[Any]:
            try:
                async with self._turn():
                    return await execute(raise_on_error, allow_redirections)
            except NoScriptError:
                raise
            except _FAILURES as exc:
                raise _translated("pipeline", exc) from exc

        pipe.execute = gated  # type: ignore[method-assign]
        return pipe


_HOLDING: contextvars.ContextVar[bool] = contextvars.ContextVar("brain_redis_turn", default=False)


def connect(url: str, settings: RedisSettings, *, cluster: bool = False) -> RedisClient:
    """A translating client for `url` (not connected yet); `StoreError` for a URL it cannot use."""
    kwargs = client_kwargs(settings, url)
    try:
        if cluster:
            kwargs.pop("health_check_interval")
            return WaitingCluster.from_url(url, pool_timeout=settings.pool_timeout, **kwargs)
        # At its cap a command waits (up to pool_timeout, in turn) for a free connection.
        pool = FairBlockingPool.from_url(url, timeout=settings.pool_timeout, **kwargs)
        return TranslatingRedis.from_pool(pool)
    except (ValueError, RedisError) as exc:
        raise StoreError(redact(str(exc))) from exc
