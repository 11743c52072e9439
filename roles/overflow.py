"""A turn's answer that recovers once from a context-window overflow: when the endpoint refuses the prompt as
too long for the model before anything of the turn was done (no text, no tool round), the chat is
summarized (keeping recent turns within the window the endpoint named, if smaller) and the answer asked
for once more, its prompt rebuilt. Nothing folded into the summary, or a second overflow, ends the turn
with a `ContextOverflowError` saying what to set; the question stays pending for `/retry`."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

from actions.summarizer import Summarizer
from brain.errors import BrainError, ContextOverflowError
from brain.memory.window import Window
from roles.modes import BrainMode
from roles.turn import Host, Turn

__all__ = ["answer_recovering"]

_log = logging.getLogger("brain.assistant")


async def answer_recovering(
    host: Host, mode: BrainMode, summarizer: Summarizer, turn: Turn
) -> AsyncIterator[str]:
    """`mode`'s answer for `turn`, recovering once from an overflow (see the module)."""
    try:
        async for piece in mode.answer(host, turn):
            yield piece
        return
    except ContextOverflowError as exc:
        if turn.pieces or turn.trail:
            raise
        overflow = exc
    memory, settings = turn.memory, host.memory_settings
    _log.warning("the prompt overflowed the model's context window; summarizing the chat: %s", overflow)
    folded = memory.summary_upto
    if overflow.limit is not None and overflow.limit < host.context_window:
        keep = Window.of(settings, overflow.limit).share(settings.keep_recent_share)
        try:
            await memory.summarize(
                summarizer, settings.summary_max_words, keep_language=True, keep_recent=keep
            )
        except BrainError as exc:  # as in `summarize`: nothing was folded, and the turn ends below
            _log.warning("summarizing a chat failed: %s", exc)
    else:
        await host.summarize(memory, forced=True)
    if memory.summary_upto == folded:
        raise ContextOverflowError(
            f"the prompt does not fit the model's context window, and summarizing the chat freed no "
            f"room (set llm.context_window to the model's window): {overflow}",
            limit=overflow.limit,
        ) from overflow
    try:
        async for piece in mode.answer(host, turn):
            yield piece
    except ContextOverflowError as exc:
        raise ContextOverflowError(
            f"the prompt does not fit the model's context window even with the chat summarized (set "
            f"llm.context_window to the model's window): {exc}",
            limit=exc.limit,
        ) from exc
