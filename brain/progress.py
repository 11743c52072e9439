"""Progress of long work (chat imports, document loading, reindexing, embedding backfills): one seam.

A long operation takes an optional `progress: Progress` and tells it a `ProgressEvent` when it starts, after
every chunk of work (every few hundred items) and at the end. What is shown is the caller's business: the
`brain` CLI draws a bar on a terminal and logs counts otherwise. A `Progress` is made for one call and passed
along, never kept on a shared object. `ProgressLog` is the logging one, also used where nobody asked (an
index re-analysed on first use logs its counts at INFO).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["PROGRESS_LOGGER", "Progress", "ProgressEvent", "ProgressLog", "report", "within"]

PROGRESS_LOGGER = "brain.progress"


class ProgressEvent(BaseModel):
    """`done` of `total` `unit` of `task` (e.g. "importing alice/trip", 500 of 2000 "turns")."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task: str
    done: int = Field(ge=0)
    total: int = Field(ge=0)
    unit: str = "items"

    @property
    def fraction(self) -> float:
        return 1.0 if self.total == 0 else min(self.done / self.total, 1.0)

    @property
    def finished(self) -> bool:
        return self.done >= self.total


Progress = Callable[[ProgressEvent], None]
"""Told how a long operation goes; called on the operation's task, so it must be quick and not block."""


def report(progress: Progress | None, task: str, done: int, total: int, unit: str) -> None:
    """Tell `progress` (when there is one and something to do) that `done` of `total` are done."""
    if progress is not None and total > 0:
        progress(ProgressEvent(task=task, done=min(done, total), total=total, unit=unit))


def within(progress: Progress | None, prefix: str) -> Progress | None:
    """`progress` with each task named `prefix: task` (one file of many, one chat of many)."""
    if progress is None:
        return None
    told = progress

    def tell(event: ProgressEvent) -> None:
        told(event.model_copy(update={"task": f"{prefix}: {event.task}"}))

    return tell


class ProgressLog:
    """A `Progress` that logs at INFO: each task's counts every tenth of the way, and its end with the time
    it took. It counts, so make one per call."""

    def __init__(
        self, logger: logging.Logger | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._log = logger or logging.getLogger(PROGRESS_LOGGER)
        self._clock = clock
        self._task: str | None = None
        self._began, self._done, self._tenth = 0.0, 0, -1

    def __call__(self, event: ProgressEvent) -> None:
        if event.task != self._task or event.done < self._done:  # another task, or this one again
            self._task, self._began, self._tenth = event.task, self._clock(), -1
        self._done = event.done
        tenth = int(event.fraction * 10)
        if tenth <= self._tenth:
            return
        self._tenth = tenth
        if event.finished:
            seconds = self._clock() - self._began
            self._log.info(
                "%s: %d/%d %s done in %.1f s", event.task, event.done, event.total, event.unit, seconds
            )
        else:
            self._log.info("%s: %d/%d %s (%d%%)", event.task, event.done, event.total, event.unit, tenth * 10)
