"""One user's chat in the `brain chat` REPL: `ChatSession.handle` does the work of one input line (testable
without a terminal). Every change to memory goes through the Assistant; this module only talks to the user.

A failed turn prints one line and keeps the typed text pending: `/retry` answers it, `/memory` shows it.
A failed slash command (a bad argument, a file that cannot be read or written, the store, a bug) prints one
line, `error: /command: what went wrong`, and the session goes on.
While the model is slow to answer (retries after errors, a long queue), a status line says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TextIO

from brain.errors import BrainError, InputError
from brain.llm.usage import spending
from brain.logs import redact
from roles.assistant import Assistant
from roles.cli.commands import COMMANDS

__all__ = ["ChatSession", "describe"]


WAIT_FIRST_S = 2.0
WAIT_EVERY_S = 5.0


class ChatSession:
    """One user's chat with an assistant; `handle` returns False when the session should end."""

    def __init__(
        self,
        assistant: Assistant,
        user_id: str,
        chat_id: str,
        out: TextIO,
        confirm: Callable[[str], bool],
        status: TextIO | None = None,
    ) -> None:
        self.assistant, self.user_id, self.chat_id, self.out = assistant, user_id, chat_id, out
        self.status = status or out  # progress notes; the CLI sends them to stderr
        self.confirm = confirm
        self.turn_calls: list[int] = []
        self.unsent: str | None = None  # the line of a failed turn (the store may not have kept it)
        self.failed = False  # the last turn failed and was not answered since

    def say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    async def handle(self, line: str) -> bool:
        """Do one input line: a turn, or a slash command. Whatever fails prints one line and the session goes
        on; False only when the session should end (`/exit`)."""
        text = line.strip()
        if not text:
            return True
        if not text.startswith("/"):
            await self.reply(lambda: self.assistant.chat_stream(self.user_id, self.chat_id, text), text)
            return True
        command, _, rest = text.partition(" ")
        handler = COMMANDS.get(command)
        if handler is None:
            self.say(f"unknown command {command}; /help lists them")
            return True
        try:
            return await handler(self, rest.strip())
        except Exception as exc:  # a bad argument, a file, the store, a bug: the session outlives it
            self.say(f"error: {command}: {describe(exc)}")
            return True

    async def reply(self, start: Callable[[], AsyncIterator[str]], text: str | None = None) -> None:
        """Stream an answer; a status line appears while the model keeps us waiting. A failed turn prints one
        line: bad input is dropped, any other failure leaves the text pending for `/retry`."""
        try:
            await self._stream(start, text)
        except InputError as exc:
            self.unsent = None  # nothing was stored or sent: there is nothing to retry
            self.say(f"error: {describe(exc)}")
        except Exception as exc:  # the turn failed; memory is as it was and the line waits for /retry
            self.failed = True
            self.note(f"error: {describe(exc)}")
            self.note("(your message is kept: /retry sends it again)")

    async def _stream(self, start: Callable[[], AsyncIterator[str]], text: str | None) -> None:
        self.unsent = text
        began = time.monotonic()
        got_text = asyncio.Event()
        watcher = asyncio.create_task(self._watch(began, got_text))
        try:
            with _retry_notes(self), spending() as spent:
                async for piece in start():
                    got_text.set()
                    self.out.write(piece)
                    self.out.flush()
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher
        self.unsent, self.failed = None, False
        self.out.write("\n")
        self.out.flush()
        self.turn_calls.append(spent.calls)

    async def _watch(self, began: float, got_text: asyncio.Event) -> None:
        wait = WAIT_FIRST_S
        while not got_text.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(got_text.wait(), wait)
                return
            self.note(f"… waiting for the model ({time.monotonic() - began:.0f} s)")
            wait = WAIT_EVERY_S

    def note(self, text: str) -> None:
        self.status.write(text + "\n")
        self.status.flush()


def describe(exc: BaseException) -> str:
    """A failure as one plain line: the library's own message, a file's problem, or what went wrong;
    passwords in URLs masked. Pure."""
    if isinstance(exc, BrainError):
        text = str(exc)
    elif isinstance(exc, OSError) and exc.strerror:
        text = f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
    else:
        text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return redact("; ".join(line.strip() for line in text.splitlines() if line.strip()))


class _RetryNotes(logging.Handler):
    """Shows the OpenAI client's retries (after a 429, a 5xx, a dropped connection) as status lines."""

    def __init__(self, session: ChatSession) -> None:
        super().__init__(logging.INFO)
        self.session = session

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("Retrying request"):
            text = record.getMessage()
            self.session.note(f"… the model endpoint failed; {text[:1].lower()}{text[1:]}")


@contextlib.contextmanager
def _retry_notes(session: ChatSession) -> Iterator[_RetryNotes]:
    # The SDK says its retries on its logger; chat completions sent by `ChatHTTP` say them on ours.
    loggers = [logging.getLogger("openai._base_client"), logging.getLogger("brain.llm")]
    handler, levels = _RetryNotes(session), [logger.level for logger in loggers]
    for logger in loggers:
        logger.addHandler(handler)
        if logger.getEffectiveLevel() > logging.INFO:
            logger.setLevel(logging.INFO)
    try:
        yield handler
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.removeHandler(handler)
            logger.setLevel(level)
