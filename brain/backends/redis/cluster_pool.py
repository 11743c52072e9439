"""The parts of `WaitingCluster` (`brain.backends.redis.client`) that replace redis-py's own behaviour
while a Cluster fails over (issue 33).

- Retries: redis-py's cluster client resends a command that failed with a connection error or a timeout at
  once, up to `retry.get_retries()` times, with no pause and whether or not the command had reached the
  server: a Lua script or an XADD whose reply was lost with its primary could run twice. `WaitingCluster`
  turns that off and retries with `Resender`: with the configured backoff, any command that was never sent
  (a refused connection, CLUSTERDOWN, TRYAGAIN...), and one whose outcome is unknown only when it is a
  read, or runs in an `idempotent()` block. Its connections (`tracking_connection`) say whether a try got
  as far as sending its command.
- Closing idle connections: `IdleClosingNode`, which no command can take half-closed.
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator
from typing import Any, TypeVar

from redis.asyncio.cluster import ClusterNode, NodesManager
from redis.asyncio.connection import Connection
from redis.asyncio.retry import Retry
from redis.commands.cluster import READ_COMMANDS
from redis.exceptions import BusyLoadingError, ClusterDownError, SlotNotCoveredError, TryAgainError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

__all__ = [
    "IdleClosingNode",
    "Resender",
    "Try",
    "adopt_nodes",
    "current_try",
    "idempotent",
    "may_resend",
    "tracked",
    "tracking_connection",
    "untracked",
]

T = TypeVar("T")

_TRY: contextvars.ContextVar[Try | None] = contextvars.ContextVar("brain_redis_try", default=None)
_IDEMPOTENT: contextvars.ContextVar[bool] = contextvars.ContextVar("brain_redis_idempotent", default=False)

# Commands that change nothing, or nothing twice: sent again after a lost reply, they do no harm.
_RESENDABLE = READ_COMMANDS | {
    "PING",
    "ECHO",
    "INFO",
    "TIME",
    "COMMAND",
    "SCRIPT LOAD",
    "SCRIPT EXISTS",
    "CLUSTER SLOTS",
    "CLUSTER SHARDS",
    "CLUSTER NODES",
    "CLUSTER INFO",
    "CLUSTER KEYSLOT",
    "READONLY",
    "READWRITE",
}


class Try:
    """One try of one command or pipeline; `sent` once any of it was handed to a node's socket."""

    __slots__ = ("sent",)

    def __init__(self) -> None:
        self.sent = False


def current_try() -> Try | None:
    """The try whose command the connections are sending, if any."""
    return _TRY.get()


@contextlib.contextmanager
def tracked(attempt: Try) -> Iterator[Try]:
    """Within: what the connections send is `attempt`'s (tasks started within inherit it)."""
    token = _TRY.set(attempt)
    try:
        yield attempt
    finally:
        _TRY.reset(token)


@contextlib.contextmanager
def untracked() -> Iterator[None]:
    """Within: what the connections send is no try's (the client reading the topology for a command)."""
    token = _TRY.set(None)
    try:
        yield
    finally:
        _TRY.reset(token)


@contextlib.contextmanager
def idempotent() -> Iterator[None]:
    """Within: the caller's commands may be sent again after their outcome was lost (a script that does
    nothing twice, such as a turn's write keyed by its message id)."""
    token = _IDEMPOTENT.set(True)
    try:
        yield
    finally:
        _IDEMPOTENT.reset(token)


def may_resend(commands: Iterable[tuple[Any, ...]]) -> bool:
    """Whether these commands (argument tuples) may be sent again when it is unknown whether they ran."""
    if _IDEMPOTENT.get():
        return True
    return all(_name(args) in _RESENDABLE for args in commands)


def _name(args: tuple[Any, ...]) -> str:
    name = args[0] if args else ""
    name = name.decode() if isinstance(name, bytes) else str(name)
    return name.upper()


class _Tracking(Connection):
    """A connection that marks the current `Try` sent just before it writes a command of the caller's.

    The connection's own writes (the handshake on connect, health-check PINGs) pass `check_health=False`
    and are not the caller's; a connection refused on the way is raised before anything is marked."""

    async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        if check_health:
            if self.is_connected and await self.can_read():  # its node closed it while it sat idle (died?)
                await self.disconnect(nowait=True)  # as redis-py's standalone pool does on taking one
            if not self.is_connected:
                await self.connect_check_health(check_health=False)  # as redis-py would, a step earlier
            attempt = current_try()
            if attempt is not None:
                attempt.sent = True
        await super().send_packed_command(command, check_health)


_CLASSES: dict[type[Connection], type[Connection]] = {}


def tracking_connection(base: type[Connection]) -> type[Connection]:
    """`base` (redis-py's `Connection` or `SSLConnection`) with `_Tracking`'s send."""
    if issubclass(base, _Tracking):
        return base
    if base not in _CLASSES:  # named as `base` is: it is one, with a send that tells `Resender` more
        _CLASSES[base] = type(base.__name__, (_Tracking, base), {"__module__": __name__})
    return _CLASSES[base]


# Failures after which a command is tried again: a connection error or a timeout (when nothing was sent, or
# the command may be sent again), and the replies that say it was not run (the Cluster failing over,
# TRYAGAIN during a slot's move, LOADING while a restarted node reads its data).
_AGAIN = (RedisConnectionError, RedisTimeoutError, ClusterDownError, SlotNotCoveredError, TryAgainError)
_NOT_RUN = (ClusterDownError, SlotNotCoveredError, TryAgainError, BusyLoadingError)


class Resender:
    """Runs a command (or a pipeline) and tries it again after a failure, with `policy`'s backoff and
    number of retries, until `deadline_s` seconds after the first try began: when it was never sent (a
    refused connection, no connection free), or was refused unrun (`_NOT_RUN`), or when its outcome is
    unknown (a connection lost or a timeout after it was sent) and `may_resend` says it may run twice."""

    def __init__(self, policy: Retry, deadline_s: float) -> None:
        self.policy = copy.copy(policy)
        self.policy.update_supported_errors(_AGAIN)  # type: ignore[arg-type]
        self.deadline_s = deadline_s

    async def run(
        self,
        once: Callable[[], Awaitable[T]],
        commands: Iterable[tuple[Any, ...]],
        failed: Callable[[Exception], Awaitable[None]],
        *,
        retry: bool = True,
    ) -> T:
        """`once()` until it succeeds or may not be tried again; `failed(error)` after each failure that
        is tried again (before the pause). `retry=False`: once only."""
        if not retry:
            with tracked(Try()):
                return await once()
        resend, began = may_resend(commands), time.monotonic()
        current = Try()

        async def attempt() -> T:
            nonlocal current
            current = Try()
            with tracked(current):
                return await once()

        def again(error: Exception) -> bool:
            if time.monotonic() - began >= self.deadline_s:
                return False
            unknown = current.sent and not isinstance(error, _NOT_RUN)
            return resend or not unknown

        return await self.policy.call_with_retry(attempt, failed, is_retryable=again)


class IdleClosingNode(ClusterNode):
    """A cluster node whose `disconnect_free_connections` (redis-py calls it on every connection error or
    timeout met on the node) closes only the connections idle at that moment, each at once.

    redis-py's gathers `disconnect()` tasks over a snapshot of the idle connections, which start a loop
    turn later and await the socket's close before marking the connection closed: meanwhile another task
    takes the connection from the pool, sees it connected and writes to it (`AttributeError: 'NoneType'
    object has no attribute 'writelines'`, or "Connection lost"), or has already sent a command on it when
    the close lands (its outcome lost). Here nothing can take a connection between the check that it is
    idle and its close (`nowait`: nothing awaited before its reader and writer are dropped); it stays in
    the pool, closed, and connects again when next used."""

    __slots__ = ()  # redis-py's slots: instances of ClusterNode can become this class (`adopt_nodes`)

    async def disconnect_free_connections(self) -> None:
        for connection in tuple(self._free):
            if connection in self._free:  # still idle (an earlier close may have let a task take it)
                await connection.disconnect(nowait=True)


def adopt_nodes(manager: NodesManager) -> None:
    """Make the manager's nodes `IdleClosingNode`s (redis-py makes its `ClusterNode`s itself, when it
    reads the topology: called after each read)."""
    for node in (*manager.startup_nodes.values(), *manager.nodes_cache.values()):
        if type(node) is ClusterNode:
            node.__class__ = IdleClosingNode
