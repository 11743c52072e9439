"""The deadlines of a streamed reply: its first chunk within `first` seconds of the start, each next one
within `gap` seconds of being awaited. One timer per stream checks them (a reply has hundreds of chunks;
an `asyncio.timeout` per chunk costs ~5 µs each, a millisecond per reply), re-armed only when it fires
early."""

from __future__ import annotations

import asyncio
from types import TracebackType

__all__ = ["Pace"]


class Pace:
    """Wrap each await of the stream in `with pace:`; call `arrived()` after each chunk. An await past its
    deadline raises `TimeoutError` (`late` says which: "first" or "gap"); only the await is cancelled,
    never the consumer's own work between chunks. Not shared between streams."""

    def __init__(self, first: float, gap: float) -> None:
        self._loop = asyncio.get_running_loop()
        self._gap = gap
        self._first: float | None = self._loop.time() + first  # None once a chunk arrived
        self._due = 0.0
        self._task: asyncio.Task[object] | None = None  # the task awaiting now (None: none is)
        self._timer: asyncio.TimerHandle | None = None
        self._expired = False
        self.late = ""

    def arrived(self) -> None:
        """A chunk came: from now on each await has `gap` seconds."""
        self._first = None

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def __enter__(self) -> Pace:
        self._due = self._first if self._first is not None else self._loop.time() + self._gap
        self._task = asyncio.current_task()
        if self._timer is None or self._timer.when() > self._due:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = self._loop.call_at(self._due, self._check)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        task, self._task = self._task, None
        if self._expired and task is not None:  # as `asyncio.timeout` does: our cancel, not another's
            self.close()
            if task.uncancel() == 0 and kind is asyncio.CancelledError:
                raise TimeoutError from exc

    def _check(self) -> None:
        self._timer = None
        if self._task is None:  # between awaits: the next one arms it again
            return
        if self._loop.time() + 0.001 >= self._due:  # timers fire up to the clock's resolution early
            self._expired, self.late = True, "first" if self._first is not None else "gap"
            self._task.cancel()
        else:
            self._timer = self._loop.call_at(self._due, self._check)
