"""The `brain chat` loop: line editing and history through readline; Ctrl-C at the prompt clears the line,
during a reply it cancels that reply only. SIGTERM and SIGHUP (a closed terminal) end the chat as leaving it
does, at once at the prompt and after the reply in progress otherwise: Python's default would end the process
on the spot, the last turns' facts never applied and the embedded Valkey left running. Each line's work is
`ChatSession.handle`."""

from __future__ import annotations

import asyncio
import atexit
import os
import signal
from pathlib import Path
from types import FrameType
from typing import TextIO

from roles.cli.session import ChatSession

__all__ = ["run_repl"]


def run_repl(runner: asyncio.Runner, session: ChatSession, stdin: TextIO, home: Path) -> int:
    """The sync loop around `session.handle`. Exit status 0, or 1 when input ended with the last turn
    failed and unanswered (so scripts piping lines in can tell), or 128 + the signal's number when SIGTERM
    or SIGHUP ended it."""
    leaving: list[int] = []

    def leave(signum: int, frame: FrameType | None) -> None:
        leaving.append(signum)
        if not runner.get_loop().is_running():  # at the prompt: now (a reply runs on until it is done)
            raise SystemExit(128 + signum)

    previous = {s: signal.signal(s, leave) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        return _loop(runner, session, stdin, home, leaving)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _loop(runner: asyncio.Runner, session: ChatSession, stdin: TextIO, home: Path, leaving: list[int]) -> int:
    interactive = stdin.isatty()
    if interactive:
        _enable_line_editing(home / "chat_history")
        session.say(
            f"chatting as {session.user_id!r} in {session.chat_id!r}; /help for commands, /exit to leave"
        )
    while True:
        if leaving:
            return 128 + leaving[0]
        try:
            line = input("you> ") if interactive else stdin.readline()
        except KeyboardInterrupt:
            session.out.write("\n")
            continue
        except EOFError:
            return int(session.failed)
        if not interactive and not line:
            return int(session.failed)
        try:
            if not runner.run(session.handle(line)):
                return 0
        except KeyboardInterrupt:
            session.say("\n[reply cancelled; nothing was lost]")


def _enable_line_editing(history: Path) -> None:
    try:
        import readline
    except ImportError:  # pragma: no cover - not on every platform
        return
    history.parent.mkdir(parents=True, exist_ok=True)
    if history.exists():
        readline.read_history_file(history)
    readline.set_history_length(1_000)
    atexit.register(
        lambda: readline.write_history_file(history) if os.access(history.parent, os.W_OK) else None
    )
