"""The process's caches of what users wrote, emptied together so erased text does not live on in memory.

Parsed turns (and the turns a write stored), prompt messages, analysed questions, stems, token counts,
rendered memory items, encoded ids, chats' keys and the documents of ids-only hits are cached by their text or
id, shared by every user of the process (`brain.text_cache`, `functools.lru_cache`).
Such a cache never serves one user another's text (its key is the text), but it keeps what it holds until it
is pushed out. So each registers here (`remember`), and all of them are emptied:

- at once in the process that erases a chat or a user (`forget_soon`, from `brain.memory.erasure`), or, in a
  burst of erasures, once the last emptying is `MIN_GAP` old (a tenant erasing chat after chat must not make
  every other chat parse its window again on every erasure);
- in every process with an open runtime, at least every `MAX_AGE` seconds (`aging`, which `open_runtime`
  runs): what another process erased leaves this one's caches within that time. A turn of the erased
  chat still in flight during the erasure may cache its text again; the same bound removes it. Vector
  snapshots (`brain.backends.redis.vectors`) are checked against Redis on every search, so only those
  nobody searched since the last emptying are dropped: an erased one within two emptyings.

Emptying costs the next turns their first look-ups again (a window's turns parsed once more).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import weakref
from collections.abc import AsyncIterator
from typing import Protocol, TypeVar

__all__ = ["MAX_AGE", "MIN_GAP", "Clearable", "aging", "expire", "forget", "forget_soon", "remember"]

MAX_AGE = 60.0
"""Seconds a cached text may outlive its erasure elsewhere (as `FactCache`'s entries)."""
MIN_GAP = 1.0
"""Seconds an erasure's text may stay in the erasing process's caches when another erasure emptied them
just before (an emptying costs every chat's next turn a parse of its window: ~150 µs)."""


class Clearable(Protocol):
    def cache_clear(self) -> None: ...


C = TypeVar("C", bound=Clearable)

_CACHES: weakref.WeakSet[Clearable] = weakref.WeakSet()  # a cache gone with its owner leaves by itself
_emptied = [time.monotonic()]
_due: list[tuple[asyncio.AbstractEventLoop, asyncio.TimerHandle] | None] = [None]  # a `forget_soon` waiting


def remember(cache: C) -> C:
    """Register `cache` (anything with `cache_clear()` that can be weakly referenced) to be emptied with
    the others; returns it, so it serves as a decorator above `functools.lru_cache`."""
    _CACHES.add(cache)
    return cache


def forget() -> None:
    """Empty every registered cache now."""
    for cache in list(_CACHES):
        cache.cache_clear()
    _emptied[0] = time.monotonic()


def forget_soon() -> None:
    """Empty every registered cache now, or, when the last emptying is less than `MIN_GAP` old, once it is
    (on the running loop; one emptying for a burst of calls)."""
    wait = _emptied[0] + MIN_GAP - time.monotonic()
    if wait <= 0:
        forget()
        return
    loop, due = asyncio.get_running_loop(), _due[0]
    if due is not None and due[0] is loop and not loop.is_closed() and not due[1].cancelled():
        return  # already on its way
    _due[0] = (loop, loop.call_later(wait, _forget_due))


def _forget_due() -> None:
    _due[0] = None
    forget()


def expire(now: float | None = None) -> bool:
    """Empty every registered cache when the last emptying is `MAX_AGE` seconds old or more; whether it
    did."""
    if (time.monotonic() if now is None else now) - _emptied[0] < MAX_AGE:
        return False
    forget()
    return True


@contextlib.asynccontextmanager
async def aging(every: float | None = None) -> AsyncIterator[None]:
    """While open, `expire` every `every` seconds (default: a tenth of `MAX_AGE`) on the running loop: the
    caches are emptied within `MAX_AGE + every` seconds of any text entering them. Several open at once are
    harmless: the caches are emptied once per `MAX_AGE` whoever looks."""
    pause = MAX_AGE / 10 if every is None else every

    async def tick() -> None:
        while True:
            await asyncio.sleep(pause)
            expire()

    task = asyncio.get_running_loop().create_task(tick(), name="brain.process_caches")
    try:
        yield
    finally:
        task.cancel()
        await asyncio.wait([task])  # its end, not its CancelledError (a cancellation of ours still raises)
