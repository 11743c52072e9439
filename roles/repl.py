"""The `brain chat` REPL: streamed replies, memory that persists, MemGPT-style slash commands.

`ChatSession.handle` does the work of one input line (testable without a terminal); `run_repl` is the sync
loop around it: line editing and history through readline, Ctrl-C during a reply cancels only that reply.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from brain.errors import BrainError
from brain.message import Message, speaker
from brain.transfer import export_conversation, import_conversation, parse_export
from roles import repl_tiered as tiered_commands
from roles.assistant import Assistant
from roles.tiered import TieredAssistant

__all__ = ["HELP", "ChatSession", "run_repl"]

HELP = """commands:
  /memory             summary, knowledge, window size and token usage
  /dump [n]           the last n stored turns (default 10)
  /pop [n]            take back the last n turns (they stay stored, hidden)
  /retry              answer the last message again
  /rewrite TEXT       replace the last answer with TEXT
  /knowledge add TEXT remember TEXT as knowledge
  /summarize          summarize the conversation now
  /title              give the conversation a title
  /export [FILE]      write the conversation as JSON (to FILE or the screen)
  /import FILE        load a conversation exported before (into this empty chat)
  /forget             delete this chat's memory (asks first)
  /usage              LLM calls, tokens per turn, latency
  /core               core memory blocks (memory.mode: tiered)
  /archival search Q  search archival memory (tiered)
  /archival add TEXT  store TEXT in archival memory (tiered)
  /help, /exit"""


class ChatSession:
    """One user's chat with an assistant; `handle` returns False when the session should end."""

    def __init__(
        self, assistant: Assistant, user_id: str, chat_id: str, out: TextIO, confirm: Callable[[str], bool]
    ) -> None:
        self.assistant, self.user_id, self.chat_id, self.out = assistant, user_id, chat_id, out
        self.confirm = confirm
        self.turn_calls: list[int] = []

    def say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    async def handle(self, line: str) -> bool:
        text = line.strip()
        if not text:
            return True
        if not text.startswith("/"):
            await self.reply(text)
            return True
        command, _, rest = text.partition(" ")
        handler = _COMMANDS.get(command)
        if handler is None:
            self.say(f"unknown command {command}; /help lists them")
            return True
        try:
            return await handler(self, rest.strip())
        except BrainError as exc:
            self.say(f"error: {exc}")
            return True

    async def reply(self, text: str) -> None:
        before = len(self.assistant.llm.usage)
        async for piece in self.assistant.chat_stream(self.user_id, self.chat_id, text):
            self.out.write(piece)
            self.out.flush()
        self.out.write("\n")
        self.out.flush()
        self.turn_calls.append(len(self.assistant.llm.usage) - before)


async def _memory(s: ChatSession, _: str) -> bool:
    m = await s.assistant.load_memory(s.user_id, s.chat_id)
    if isinstance(s.assistant, TieredAssistant):
        for block in await s.assistant.core_blocks():
            s.say(f"core [{block.label}]: {block.value or '(empty)'}")
    totals = s.assistant.llm.usage.totals()
    s.say(f"summary: {m.historical_summary or '(none yet)'}")
    s.say(f"knowledge: {m.get_knowledge() or '(none)'}")
    s.say(
        f"window: {len(m.history)} turns, {m.window_tokens} tokens; {m.turn_count} turns stored; "
        f"summarized up to turn {m.summary_upto}"
    )
    tokens = f"{totals.prompt_tokens} prompt + {totals.completion_tokens} completion tokens"
    s.say(f"usage: {totals.calls} calls, {tokens}")
    return True


async def _dump(s: ChatSession, arg: str) -> bool:
    n = int(arg) if arg.isdigit() else 10
    m = await s.assistant.load_memory(s.user_id, s.chat_id)
    for turn in await m.read_history(max(m.turn_count - n + 1, 1), n):
        flag = " (taken back)" if turn.hidden else ""
        s.say(f"#{turn.seq} {speaker(turn.message)}: {turn.message.content}{flag}")
    return True


async def _pop(s: ChatSession, arg: str) -> bool:
    await s.assistant.load_memory(s.user_id, s.chat_id)
    taken = await s.assistant.take_back(int(arg) if arg.isdigit() else 1)
    s.say(f"took back {len(taken)} turn(s); they stay stored (see /dump)")
    return True


async def _retry(s: ChatSession, _: str) -> bool:
    m = await s.assistant.load_memory(s.user_id, s.chat_id)
    if len(m.history) < 2 or m.history[-1].role != "assistant":
        s.say("nothing to retry")
        return True
    question = m.history[-2].content
    await s.assistant.take_back(2)
    await s.reply(question)
    return True


async def _rewrite(s: ChatSession, arg: str) -> bool:
    if not arg:
        s.say("usage: /rewrite TEXT")
        return True
    m = await s.assistant.load_memory(s.user_id, s.chat_id)
    if not m.history or m.history[-1].role != "assistant":
        s.say("there is no answer to rewrite")
        return True
    await s.assistant.take_back(1)
    m.add_answer(Message(content=arg, sent_from=s.assistant.name, metadata={"rewritten": True}))
    await m.dumps()
    s.say("the last answer was replaced")
    return True


async def _knowledge(s: ChatSession, arg: str) -> bool:
    verb, _, text = arg.partition(" ")
    if verb != "add" or not text.strip():
        s.say("usage: /knowledge add TEXT")
        return True
    m = await s.assistant.load_memory(s.user_id, s.chat_id)
    m.add_knowledge(Message(content=text.strip(), sent_from="user"))
    await m.dumps()
    s.say("remembered")
    return True


async def _summarize(s: ChatSession, _: str) -> bool:
    await s.assistant.load_memory(s.user_id, s.chat_id)
    summary = await s.assistant.summarize_now()
    s.say(f"summary: {summary or '(nothing to summarize)'}")
    return True


async def _title(s: ChatSession, _: str) -> bool:
    m = await s.assistant.load_memory(s.user_id, s.chat_id)
    s.say(f"title: {await m.get_title(s.assistant.memory_llm)}")
    return True


async def _export(s: ChatSession, arg: str) -> bool:
    from brain.store import Conversation

    export = await export_conversation(s.assistant.store, Conversation(s.user_id, s.chat_id))
    text = export.model_dump_json(indent=2)
    if arg:
        await asyncio.to_thread(_write, arg, text + "\n")
        s.say(f"exported {len(export.turns)} turns to {arg}")
    else:
        s.say(text)
    return True


async def _import(s: ChatSession, arg: str) -> bool:
    from brain.store import Conversation

    if not arg:
        s.say("usage: /import FILE")
        return True
    try:
        data = await asyncio.to_thread(_read, arg)
    except OSError as exc:
        s.say(f"error: cannot read {arg}: {exc.strerror}")
        return True
    export = parse_export(data)
    await import_conversation(s.assistant.store, export, Conversation(s.user_id, s.chat_id))
    s.say(f"imported {len(export.turns)} turns")
    return True


async def _forget(s: ChatSession, _: str) -> bool:
    from brain.store import Conversation

    if not s.confirm(f"delete everything remembered in chat {s.chat_id!r}? [y/N] "):
        s.say("kept")
        return True
    await s.assistant.store.delete(Conversation(s.user_id, s.chat_id))
    s.assistant.memory = None
    s.say("forgotten")
    return True


async def _usage(s: ChatSession, _: str) -> bool:
    records = s.assistant.llm.usage.records
    totals = s.assistant.llm.usage.totals()
    s.say(
        f"calls: {totals.calls}; prompt tokens: {totals.prompt_tokens}; completion tokens: "
        f"{totals.completion_tokens}; latency: {totals.latency_s:.2f} s"
    )
    if records:
        s.say(
            f"last call: {records[-1].usage.prompt_tokens} prompt + {records[-1].usage.completion_tokens} "
            f"completion tokens, {records[-1].latency_s * 1000:.0f} ms"
        )
    if s.turn_calls:
        s.say(f"calls per turn: {json.dumps(s.turn_calls[-10:])}")
    if s.assistant.memory_llm is not s.assistant.llm:
        m = s.assistant.memory_llm.usage.totals()
        s.say(f"memory model: {m.calls} calls, {m.prompt_tokens} prompt tokens")
    return True


async def _help(s: ChatSession, _: str) -> bool:
    s.say(HELP)
    return True


async def _exit(s: ChatSession, _: str) -> bool:
    return False


def _write(path: str, text: str) -> None:
    Path(path).expanduser().write_text(text, encoding="utf-8")


def _read(path: str) -> str:
    return Path(path).expanduser().read_text(encoding="utf-8")


_COMMANDS = {
    "/memory": _memory,
    "/dump": _dump,
    "/pop": _pop,
    "/retry": _retry,
    "/rewrite": _rewrite,
    "/knowledge": _knowledge,
    "/summarize": _summarize,
    "/title": _title,
    "/export": _export,
    "/import": _import,
    "/forget": _forget,
    "/usage": _usage,
    "/help": _help,
    "/exit": _exit,
    "/quit": _exit,
    "/core": tiered_commands.core,
    "/archival": tiered_commands.archival,
}


def run_repl(runner: asyncio.Runner, session: ChatSession, stdin: TextIO, home: Path) -> int:
    """The sync loop. Ctrl-C at the prompt clears the line; during a reply it cancels that reply only."""
    interactive = stdin.isatty()
    if interactive:
        _enable_line_editing(home / "chat_history")
        session.say(
            f"chatting as {session.user_id!r} in {session.chat_id!r}; /help for commands, /exit to leave"
        )
    while True:
        try:
            line = input("you> ") if interactive else stdin.readline()
        except KeyboardInterrupt:
            session.out.write("\n")
            continue
        except EOFError:
            return 0
        if not interactive and not line:
            return 0
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
    import atexit

    atexit.register(
        lambda: readline.write_history_file(history) if os.access(history.parent, os.W_OK) else None
    )
