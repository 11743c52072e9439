"""The process's Redis client, with every failure translated once: a command, a pipeline or a script that
fails raises `StoreError` (or `Refused`, a script's own refusal), never a raw client exception. Messages name
the command, never a key (keys carry user ids).

The pool that makes commands wait their turn at the connection cap, first come, first served, and the lean
command path are `brain.backends.redis.lean_pool`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import ssl
from collections.abc import AsyncIterator
from typing import Any, cast

import redis.asyncio as aioredis
from redis.asyncio.client import Pipeline
from redis.asyncio.cluster import ClusterPipeline, RedisCluster
from redis.asyncio.connection import Connection
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, RedisClusterException, RedisError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.maint_notifications import MaintNotificationsConfig

from brain.backends.redis.lean_pool import FairBlockingPool, lean_execute, observed, wait_turn
from brain.backends.redis.lean_script import LeanScript
from brain.backends.redis.lean_send import LeanConnection
from brain.backends.redis.multiplex import MULTIPLEXED, Multiplexer
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
# AttributeError: redis-py's asyncio cluster client raises one during a primary's failover (a connection
# reused while it is being closed: `None.writelines`); `_translated` translates it only when redis-py raised
# it, and lets any other (our own bug) go on as it is.
_FAILURES = (RedisError, RedisClusterException, OSError, AttributeError)


class Refused(StoreError):
    """A script refused a write on purpose (`redis.error_reply('BRAIN_<CODE> detail')`): `code` and `detail`
    say why, for the store to turn into the right error (missing, conflict, limit...)."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(f"{code} {detail}".strip())
        self.code, self.detail = code, detail


def _translated(command: str, exc: BaseException) -> StoreError:
    """The one translation of a client failure: a `StoreError` that says why and names the command, never a
    key. A Cluster none of whose nodes answers is `UnreachableError`; one failing over (CLUSTERDOWN, a slot
    without a primary, redirections or TRYAGAIN past their limit, a connection closed under a command) a
    `StoreError` worth retrying shortly. An `AttributeError` that redis-py did not raise is raised again."""
    from redis.exceptions import (  # here: the rest of this module never needs them
        AskError,
        ClusterDownError,
        ClusterError,
        MaxConnectionsError,
        MovedError,
        SlotNotCoveredError,
        TryAgainError,
    )

    from brain.errors import UnreachableError

    failed = f"Redis {command} failed"
    if isinstance(exc, AttributeError):
        # Translated only when redis-py raised it, that is when the traceback's innermost frame is in one of
        # redis-py's modules (`redis.*`): its asyncio cluster client, while a primary fails over, reuses a
        # connection that is being closed and reads `None.writelines`. An AttributeError raised in our own
        # code is a bug, not a store failure: it is raised again as it is, never hidden in a StoreError.
        frame = exc.__traceback__
        while frame is not None and frame.tb_next is not None:
            frame = frame.tb_next
        module = str(frame.tb_frame.f_globals.get("__name__", "")) if frame is not None else ""
        if module != "redis" and not module.startswith("redis."):
            raise exc
        return StoreError(
            f"{failed}: a connection was closed under it (a node failing over?): "
            f"AttributeError: {redact(str(exc))}"
        )
    text = str(exc)
    if isinstance(exc, ResponseError) and "BRAIN_ERASED" in text:  # a script's, or a pipeline's
        return ErasedError("the memory this work was for was erased meanwhile: nothing was written")
    if isinstance(exc, ResponseError) and text.startswith("BRAIN_"):
        code, _, detail = text.split(" script:")[0].partition(" ")
        return Refused(code, detail.strip())
    detail = f"{type(exc).__name__}: {redact(text)}" if text else type(exc).__name__
    if isinstance(exc, ClusterDownError | SlotNotCoveredError):  # MASTERDOWN too
        reason = "a slot has no primary: the Cluster is failing over or down"
    elif isinstance(exc, MovedError):  # past the client's redirections, or met by a standalone client
        reason = "another node serves the slot (a slot moving, or a Cluster without redis.cluster: true?)"
    elif isinstance(exc, TryAgainError | AskError):
        reason = "the Cluster is moving the slot or failing over"
    elif isinstance(exc, ClusterError):  # "TTL exhausted": redirected or told to try again too many times
        reason = "the Cluster kept redirecting it (slots moving or a failover)"
    elif isinstance(exc, MaxConnectionsError):
        reason = "every connection to a node is in use (raise redis.max_connections)"
    elif isinstance(exc, RedisClusterException) and "cannot be connected" in text:
        last = text.partition("reachable node: ")[2] or text
        return UnreachableError(f"{failed}: no node of the Cluster answers (the last said: {redact(last)})")
    elif isinstance(exc, RedisClusterException) and ("not covered" in text or "could not agree" in text):
        reason = "the nodes do not cover every slot or disagree on who serves one (a failover under way?)"
    elif isinstance(exc, RedisClusterException):  # its text may quote the command, keys included
        return StoreError(f"{failed}: the Cluster client could not route it (RedisClusterException)")
    else:
        return StoreError(f"{failed}: {detail}")
    return StoreError(f"{failed}: {reason} ({detail})")


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
    """A standalone client whose failures are `StoreError`s. Made by `connect`, its script calls share one
    connection, pipelined (`brain.backends.redis.multiplex`)."""

    multiplexer: Multiplexer | None = None

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        try:
            if self.connection is None and not self.single_connection_client and not observed():
                mux = self.multiplexer
                # redis-py names a command's keys (`keys=`) for its client-side cache, unused here
                plain = not options or (len(options) == 1 and "keys" in options)
                if mux is not None and plain and args[0] in MULTIPLEXED and mux.usable():
                    return await mux.call(args)
                return await lean_execute(self, args, options)  # redis-py's way, less its recorders
            return await super().execute_command(*args, **options)  # type: ignore[no-untyped-call]
        except NoScriptError:
            raise
        except _FAILURES as exc:
            raise _translated(_command(args), exc) from exc

    def pipeline(self, transaction: bool = True, shard_hint: str | None = None) -> Pipeline:
        return TranslatingPipeline(self.connection_pool, self.response_callbacks, transaction, shard_hint)

    def register_script(self, script: Any) -> LeanScript:  # type: ignore[override]  # AsyncScript
        return LeanScript(self, script)

    async def aclose(self, close_connection_pool: bool | None = None) -> None:
        if self.multiplexer is not None:
            await self.multiplexer.aclose()
        await super().aclose(close_connection_pool)


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


class WaitingCluster(RedisCluster):
    """A cluster client whose commands and pipelines wait (up to `pool_timeout`, first come, first served)
    while `max_connections` are in use, instead of failing with `MaxConnectionsError`. One command or one
    pipeline uses at most one connection per node, so capping them in flight caps every node's pool.
    Failures are `StoreError`s.

    A primary's failover costs no more than its promotion (issue 33):

    - `aclose()` called by redis-py itself while a command runs only refreshes the topology (see there):
      redis-py's own closes every connection of every node, under the commands of other tasks, and forgets
      the default node, which sent the next commands to random primaries, whose MOVED replies called it
      again: a loop that outlived the failover for as long as the load went on.
    - Its nodes close only connections idle at that moment (`cluster_pool.IdleClosingNode`), never one
      another task has just taken (`None.writelines`, "Connection lost").
    - Retries are ours (`cluster_pool.Resender`), not redis-py's (which resends at once, without a pause,
      whether or not the command had reached the server): with the configured backoff and `redis.retries`,
      within `socket_timeout` seconds, a command that was never sent or was refused unrun; one whose
      outcome is unknown only if it may run twice (a read, or within `cluster_pool.idempotent()`).
    - The topology is read at most once per `REFRESH_S` (see `initialize`).
    """

    REFRESH_S = 0.1  # the least time between two reads of the topology (`initialize`)

    def __init__(self, *args: Any, pool_timeout: float = 10.0, **kwargs: Any) -> None:
        from redis.backoff import NoBackoff

        from brain.backends.redis.cluster_pool import Resender, adopt_nodes, tracking_connection

        super().__init__(*args, **kwargs)
        self._cap = int(kwargs.get("max_connections", 100))
        self._gate = asyncio.Semaphore(self._cap)
        self._pool_timeout = pool_timeout
        self._fresh_until = 0.0  # the topology is not read again before (loop time)
        self._resender = Resender(self.retry, float(self.connection_kwargs.get("socket_timeout") or 5.0))
        self.retry = Retry(NoBackoff(), 0)  # redis-py's own loops (commands, pipelines) send once
        # connections that say whether a try got as far as sending its command (for `Resender`)
        tracking = tracking_connection(self.connection_kwargs["connection_class"])
        self.connection_kwargs["connection_class"] = tracking  # the nodes found later are made with it
        for node in self.nodes_manager.startup_nodes.values():
            node.connection_class = tracking
        adopt_nodes(self.nodes_manager)

    def set_retry(self, retry: Retry) -> None:
        from brain.backends.redis.cluster_pool import Resender

        self._resender = Resender(retry, self._resender.deadline_s)

    async def initialize(self, *args: Any, **kwargs: Any) -> RedisCluster:
        """Read the topology when asked to, at most once per `REFRESH_S` once it was read: redis-py asks
        after every connection error, and while a primary is down every command of its slots fails,
        so it read CLUSTER SLOTS and COMMAND again before nearly every command (~190 times in a 3 s
        promotion, the commands of every other slot waiting on its lock meanwhile). Until the next read
        a command for the dead primary fails unsent, and is tried again after a pause."""
        from brain.backends.redis.cluster_pool import adopt_nodes, untracked

        now = asyncio.get_running_loop().time()
        if self._initialize and self.nodes_manager.default_node is not None and now < self._fresh_until:
            return self
        asked = self._initialize
        try:
            with untracked():  # CLUSTER SLOTS and COMMAND are not the command being tried
                return await super().initialize(*args, **kwargs)
        finally:
            adopt_nodes(self.nodes_manager)  # the nodes it found close only idle connections
            if asked and not self._initialize:
                self._fresh_until = asyncio.get_running_loop().time() + self.REFRESH_S

    async def aclose(self) -> None:
        """Close every connection, unless called while a command runs: redis-py calls `aclose()` itself to
        recover (on CLUSTERDOWN, on every `reinitialize_steps`-th MOVED, before retrying a pipeline), and
        there only the topology is refreshed before the next command. Closing there broke the commands
        other tasks had in flight on every node (`ConnectionError`, or `AttributeError: 'NoneType' object
        has no attribute 'writelines'` on a connection closed between its check and its write) and unset
        the default node, so that commands begun before the refresh went to random primaries."""
        if _HOLDING.get():
            self._initialize = True  # the next command (or this one's retry) reads the topology again
            return
        await super().aclose()

    @contextlib.asynccontextmanager
    async def _turn(self, command: str = "command") -> AsyncIterator[None]:
        if _HOLDING.get():  # a pipeline retrying one of its commands already holds a turn
            yield
            return
        try:
            await wait_turn(self._gate, self._pool_timeout, self._cap)
        except RedisConnectionError as exc:  # waited long enough: not tried again
            raise _translated(command, exc) from exc
        token = _HOLDING.set(True)
        try:
            yield
        finally:
            _HOLDING.reset(token)
            self._gate.release()

    async def _failed(self, error: Exception) -> None:
        """Before a retry: the topology is read again first (the command's node may have failed over)."""
        self._initialize = True

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        run = super().execute_command

        async def once() -> Any:
            async with self._turn(_command(args)):
                return await run(*args, **kwargs)

        try:
            return await self._resender.run(once, [args], self._failed)
        except NoScriptError:
            raise
        except _FAILURES as exc:
            raise _translated(_command(args), exc) from exc

    def pipeline(self, transaction: Any = None, shard_hint: Any = None) -> ClusterPipeline:
        pipe = super().pipeline(transaction, shard_hint)
        execute, queue = pipe.execute, pipe.execute_command
        queued: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

        def recording(*args: Any, **kwargs: Any) -> Any:
            queued.append((args, dict(kwargs)))
            return queue(*args, **kwargs)

        async def gated(raise_on_error: bool = True, allow_redirections: bool = True) -> list[Any]:
            batch, tries = list(queued), 0
            queued.clear()

            async def once() -> list[Any]:
                nonlocal tries
                if tries:  # a failed execute emptied the pipeline: the same commands again
                    for args, kwargs in batch:
                        queue(*args, **dict(kwargs))
                tries += 1
                async with self._turn("pipeline"):
                    return await execute(raise_on_error, allow_redirections)

            commands = [args for args, _ in batch]
            watched = any(_command(args).upper() in ("WATCH", "UNWATCH", "MULTI") for args in commands)
            try:
                return await self._resender.run(once, commands, self._failed, retry=not watched)
            except NoScriptError:
                raise
            except _FAILURES as exc:
                raise _translated("pipeline", exc) from exc

        initialize = pipe.initialize

        async def initialized() -> ClusterPipeline:  # `async with` reads the topology first: translated too
            try:
                return await initialize()
            except _FAILURES as exc:
                raise _translated("pipeline", exc) from exc

        pipe.execute_command = recording  # type: ignore[method-assign]
        pipe.execute = gated  # type: ignore[method-assign]
        pipe.initialize = initialized  # type: ignore[method-assign]
        return pipe


_HOLDING: contextvars.ContextVar[bool] = contextvars.ContextVar("brain_redis_turn", default=False)


def connect(url: str, settings: RedisSettings, *, cluster: bool = False) -> RedisClient:
    """A translating client for `url` (not connected yet); `StoreError` for a URL it cannot use.

    On a Cluster `url` may list several seed nodes, `redis://user:password@h1:7000,h2:7000/0`
    (`RedisSettings.seed_urls`): the client asks them in turn for the cluster's layout until one answers,
    with the URL's credentials and TLS settings for every node."""
    from urllib.parse import urlsplit  # here: the rest of this module never needs them

    from redis.asyncio.cluster import ClusterNode

    kwargs = client_kwargs(settings, url)
    try:
        if cluster:
            kwargs.pop("health_check_interval")
            urls = RedisSettings.seed_urls(url)
            if len(urls) > 1:  # in the order written; the first, which redis-py adds again, keeps its place
                seeds = [urlsplit(seed) for seed in urls]
                kwargs["startup_nodes"] = [ClusterNode(s.hostname or "", s.port or 6379) for s in seeds]
            # the first's credentials, TLS and options are every node's
            return WaitingCluster.from_url(urls[0], pool_timeout=settings.pool_timeout, **kwargs)
        # At its cap a command waits (up to pool_timeout, in turn) for a free connection. Without
        # maintenance notifications (a managed service's, which we do not use) the pool checks a connection
        # it hands out for a closed socket (redis-py skips that check while they are on, as they are by
        # default with RESP3): after a restart, a stale connection is replaced, not failed.
        off = MaintNotificationsConfig(enabled=False)
        pool = FairBlockingPool.from_url(
            url, timeout=settings.pool_timeout, maint_notifications_config=off, **kwargs
        )
        if pool.connection_class is Connection:  # plain TCP (not TLS, not a Unix socket): leaner writes
            pool.connection_class = LeanConnection
        client = cast(TranslatingRedis, TranslatingRedis.from_pool(pool))
        client.multiplexer = Multiplexer(pool)
        return client
    except (ValueError, RedisError, RedisClusterException) as exc:  # a database other than 0 on a Cluster...
        raise StoreError(redact(str(exc))) from exc
