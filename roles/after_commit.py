"""What follows a turn's write: the fact queue, the mode's own indexing, usage. A turn that was committed is
reported as committed even when one of these fails (a caller that retried a "failed" turn would otherwise
store it twice): the failed step is logged and tried again in the background, a few times with backoff,
under the turn's erasure ticket (the task inherits the context), then given up with a warning. What is given
up is caught up later anyway: the chat's next queue entry covers its earlier turns, and recall indexing
syncs what it missed."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from brain.errors import BrainError, ErasedError

__all__ = ["AfterCommit"]

_log = logging.getLogger("brain.turns")

Step = Callable[[], Awaitable[object]]


class AfterCommit:
    """Runs the steps after a write; shared by every turn of an engine (it keeps only its retry tasks)."""

    def __init__(self, tries: int = 4, first_delay: float = 0.5) -> None:
        self.tries, self.first_delay = tries, first_delay
        self._retrying: set[asyncio.Task[None]] = set()

    @property
    def retrying(self) -> int:
        """Steps being tried again now."""
        return len(self._retrying)

    async def run(self, what: str, step: Step) -> None:
        """`step()`; when it fails with a `BrainError`, log it (its class, never its text: it may quote a
        user's memory) and try it again in the background. An erasure met meanwhile ends it quietly."""
        try:
            await step()
        except ErasedError:
            return
        except BrainError as exc:
            _log.warning("%s after a committed turn failed (%s); trying again", what, type(exc).__name__)
            task = asyncio.create_task(self._again(what, step), name=f"brain-after-commit-{what}")
            self._retrying.add(task)
            task.add_done_callback(self._retrying.discard)

    async def _again(self, what: str, step: Step) -> None:
        failure = ""
        for n in range(self.tries):
            await asyncio.sleep(self.first_delay * 2**n)
            try:
                await step()
                return
            except ErasedError:
                return
            except BrainError as exc:
                failure = type(exc).__name__
        _log.warning(
            "%s after a committed turn failed %d more times (%s); given up", what, self.tries, failure
        )
