"""The blocking edge of block memory (LlamaIndex's sync `put`, `get`, ...): every blocking call of the process
runs on one private event loop, so that clients bound to the loop they first ran on (the Redis pool, HTTP
clients) are used on that loop every time. `asyncio.run` would give each call a new loop and break them on
the second call ("Event loop is closed").

Inside a running event loop a blocking call would stall it (or deadlock): it is refused with a `RuntimeError`
naming the awaitable method to use instead. Blocking calls from several threads take turns.
"""

from __future__ import annotations

import asyncio
import atexit
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["run_blocking"]

T = TypeVar("T")

_lock = threading.Lock()
_runner: list[asyncio.Runner] = []  # at most one, made on first use, closed at exit


def run_blocking(call: Callable[[], Coroutine[Any, Any, T]], *, name: str, instead: str) -> T:
    """`call()` run to completion on the blocking edge's loop. Outside a running loop only: inside one, a
    `RuntimeError` saying to `await` `instead` (e.g. "memory.aput(...)"); `call` is not called then."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError(f"{name}() blocks, so it cannot run inside an event loop: use `await {instead}`")
    with _lock:
        if not _runner:
            _runner.append(asyncio.Runner(loop_factory=asyncio.new_event_loop))  # the thread's loop untouched
            atexit.register(_runner[0].close)
        return _runner[0].run(call())
