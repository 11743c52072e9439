"""How the `brain` CLI shows long work (`brain.progress.ProgressEvent`s): on a terminal, one line on stderr
redrawn in place (bar, percentage, counts, rate, time left); otherwise `brain.progress` log lines at INFO,
every tenth of the way. Never on stdout, which carries data (an export's JSON)."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from typing import TextIO

from brain.progress import Progress, ProgressEvent, ProgressLog

__all__ = ["TerminalBar", "bar_line", "progress_to"]

BAR_WIDTH = 24
REDRAW_SECONDS = 0.5


def _clock_text(seconds: float) -> str:
    minutes, secs = divmod(int(seconds + 0.5), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _rate_text(rate: float) -> str:
    return f"{rate:.1f}/s" if rate < 100 else f"{rate:.0f}/s" if rate < 10_000 else f"{rate / 1000:.0f}k/s"


def bar_line(event: ProgressEvent, elapsed: float, columns: int = 80, width: int = BAR_WIDTH) -> str:
    """The bar's line for `event`, `elapsed` seconds after its task started, in fewer than `columns`
    characters: the bar narrows (to 10) and then the task's name is shortened from the left to fit. Pure."""
    rate = event.done / elapsed if elapsed > 0 and event.done else 0.0
    if event.finished:
        when = f"in {_clock_text(elapsed)}"
    else:
        when = f"ETA {_clock_text((event.total - event.done) / rate)}" if rate else "ETA --:--"
    stats = f"{event.fraction:4.0%} {event.done}/{event.total} {event.unit} {_rate_text(rate)} {when}"
    width = max(min(width, 10), min(width, columns - 1 - len(event.task) - len(stats) - 4))
    filled = int(event.fraction * width)
    tail = f"[{'#' * filled}{'-' * (width - filled)}] {stats}"
    room = columns - 1 - len(tail) - 1
    task = event.task if len(event.task) <= room else "…" + event.task[len(event.task) - room + 1 :]
    return f"{task} {tail}" if room > 1 else tail


class TerminalBar:
    """A `Progress` drawing one line on a terminal, redrawn at most every `interval` seconds (and always
    at a task's start and end); a new task starts a new line. One per command: `close` ends its line."""

    def __init__(
        self,
        stream: TextIO,
        *,
        columns: int | None = None,
        interval: float = REDRAW_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._out, self._interval, self._clock = stream, interval, clock
        self._columns = columns or _columns(stream)
        self._task: str | None = None
        self._began = self._drawn = 0.0
        self._done, self._shown, self._open, self._ended = 0, 0, False, False

    def __call__(self, event: ProgressEvent) -> None:
        now = self._clock()
        if event.task != self._task or event.done < self._done:
            self.close()
            self._task, self._began, self._ended, self._shown = event.task, now, False, 0
        elif self._ended or (not event.finished and now - self._drawn < self._interval):
            self._done = event.done
            return
        self._done, self._drawn = event.done, now
        line = bar_line(event, now - self._began, self._columns)
        self._out.write("\r" + line + " " * max(0, self._shown - len(line)))
        self._shown, self._open = len(line), True
        if event.finished:
            self.close()
            self._ended = True
        self._out.flush()

    def close(self) -> None:
        """End the line of an unfinished bar (the command failed, or was interrupted)."""
        if self._open:
            self._out.write("\n")
            self._out.flush()
            self._open = False


def _columns(stream: TextIO) -> int:
    try:
        return os.get_terminal_size(stream.fileno()).columns or 80  # 0: a terminal that never said
    except (AttributeError, OSError, ValueError):
        return 80


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or unusual stream
        return False


@contextlib.contextmanager
def progress_to(stream: TextIO) -> Iterator[Progress]:
    """The `Progress` for one command: a bar on `stream` when it is a terminal (its line ended however the
    command ends), else counts logged to `brain.progress`."""
    if not _is_terminal(stream):
        yield ProgressLog()
        return
    bar = TerminalBar(stream)
    try:
        yield bar
    finally:
        bar.close()
