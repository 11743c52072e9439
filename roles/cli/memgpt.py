"""The REPL's commands as MemGPT's CLI has them: `/pop` (exchanges), `/dump` (the main context), `/rethink`,
`/heartbeat`, `/memorywarning`, `/attach`, `/save`; and `/history`, the stored turns. Memory is read and
changed only through the Assistant and its engine's public parts."""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from actions.memory_section import MemoryItem, core_block_items
from actions.talk import render_talk
from brain.errors import InputError
from brain.llm.protocol import ChatMessage
from brain.memory.brain_memory import BrainMemory
from brain.memory.context import pressure_note, prompt_tokens
from brain.message import speaker
from roles.access import agent_of
from roles.cli.memory import load_files
from roles.cli.progress import progress_to
from roles.modes import BlocksMode, TieredMode
from roles.modes.tiered import MEMGPT_INSTRUCTIONS
from roles.operations import TakenBack

if TYPE_CHECKING:
    from roles.cli.session import ChatSession

__all__ = ["MEMGPT_COMMANDS", "Command", "count_arg", "main_context", "packaged"]

Command = Callable[["ChatSession", str], Awaitable[bool]]


def count_arg(arg: str, default: int, usage: str, what: str = "turns") -> int:
    """The number a command was given (`default` without one); `InputError` showing `usage` otherwise."""
    if not arg:
        return default
    if not arg.isascii() or not arg.isdigit():
        raise InputError(f"{arg!r} is not a number of {what}; usage: {usage}")
    return int(arg)


def packaged(kind: str, **fields: str) -> str:
    """A system event as MemGPT sends it to the agent in the user's place: JSON with its type and the local
    time (`{"type": "heartbeat", "reason": ..., "time": ...}`)."""
    now = datetime.now().astimezone().strftime("%Y-%m-%d %I:%M:%S %p %Z%z")
    return json.dumps({"type": kind, **fields, "time": now}, ensure_ascii=False)


async def main_context(s: ChatSession) -> tuple[list[ChatMessage], BrainMemory]:
    """The prompt the next turn starts from (`actions.talk.render_talk`, as the brain and tiered modes build
    it): the system message (persona, a mode's instructions, the memory section: knowledge, summary, core
    blocks) and the window's messages that fit; without the facts and search results a turn adds for its
    own question. With the chat's memory."""
    engine = await s.assistant.ready()
    memory = await s.assistant.memory_of(s.user_id, s.chat_id)
    core: list[MemoryItem] = []
    instructions = ""
    if isinstance(engine.mode, TieredMode):
        core = core_block_items(await engine.mode.core_blocks(engine, s.user_id, agent_of(s.chat_id)))
        instructions = MEMGPT_INSTRUCTIONS
    prompt = render_talk(
        persona=engine.persona,
        text="",
        tokenizer=engine.tokenizer,
        history_budget=int(engine.context_window * engine.memory_settings.prompt_history_share),
        knowledge=memory.get_knowledge(),
        summary=memory.historical_summary,
        history=memory.history,
        history_tokens=memory.history_tokens,
        memory=core,
        instructions=instructions,
    )
    return prompt[:-1], memory  # the last message is the (empty) question of a turn


async def _dump(s: ChatSession, arg: str) -> bool:
    n = count_arg(arg, -1, "/dump [n]", "messages")
    prompt, memory = await main_context(s)
    engine = s.assistant.engine
    queued = len(prompt) - 1
    shown = queued if n < 0 else min(n, queued)
    used, window = prompt_tokens(prompt, engine.tokenizer), engine.context_window
    s.say(
        f"main context: the system message and {queued} of the window's {len(memory.history)} messages, "
        f"{used} of {window} tokens ({used * 100 // window}%); a turn adds facts and search results"
    )
    if isinstance(engine.mode, BlocksMode):
        s.say("(memory.mode blocks puts its blocks in at each turn, beside the persona: /memory shows them)")
    s.say(f"[system]\n{prompt[0].content}")
    s.say(f"[messages: the last {shown}]" if shown else "[messages: none]")
    for turn in await memory.last_turns(shown):
        s.say(f"#{turn.seq} {speaker(turn.message)}: {turn.message.content}")
    return True


async def _history(s: ChatSession, arg: str) -> bool:
    n = count_arg(arg, 10, "/history [n]")
    m = await s.assistant.memory_of(s.user_id, s.chat_id)
    for turn in await m.read_history(max(m.turn_count - n + 1, 1), n):
        flag = " (taken back)" if turn.hidden else ""
        s.say(f"#{turn.seq} {speaker(turn.message)}: {turn.message.content}{flag}")
    return True


async def _pop(s: ChatSession, arg: str) -> bool:
    n = count_arg(arg, 1, "/pop [n]", "exchanges")
    taken = await s.assistant.take_back_exchanges(s.user_id, s.chat_id, n)
    if taken.pending is not None:
        s.unsent, s.failed = None, False
    s.say(_taken_text(taken))
    return True


def _taken_text(taken: TakenBack) -> str:
    """What `/pop` says it took back. Pure."""
    if not taken.exchanges:
        return "nothing to take back"
    parts = ["the unanswered question"] if taken.pending is not None else []
    if taken.turns:
        parts.append(f"{len(taken.turns)} turn(s)")
    stored = "; they stay stored (see /history)" if taken.turns else ""
    return f"took back {' and '.join(parts)} ({taken.exchanges} exchange(s)){stored}"


async def _rethink(s: ChatSession, arg: str) -> bool:
    if not arg:
        s.say("usage: /rethink TEXT")
        return True
    memory = await s.assistant.memory_of(s.user_id, s.chat_id)
    last = [t.message for t in await memory.last_turns(2)]
    if len(last) == 2 and last[0].role == "assistant" and last[0].metadata.get("thought"):
        raise InputError(
            "the last answer came with inner thoughts, which cannot be changed yet; /rewrite replaces "
            "the answer"
        )
    await s.assistant.rewrite(s.user_id, s.chat_id, arg)  # its answer is all the agent thought
    s.say("the agent's last message was replaced (it kept no inner thoughts apart from its answer)")
    return True


async def _heartbeat(s: ChatSession, _: str) -> bool:
    text = packaged("heartbeat", reason="Automated timer")
    await s.reply(lambda: s.assistant.chat_stream(s.user_id, s.chat_id, text), text)
    return True


async def _memorywarning(s: ChatSession, _: str) -> bool:
    prompt, _memory = await main_context(s)
    engine = s.assistant.engine
    note = pressure_note(max(prompt_tokens(prompt, engine.tokenizer), 1), engine.context_window, 0.0)
    assert note is not None and note.content is not None  # a share of 0: always a note
    text = packaged("system_alert", message=note.content)
    await s.reply(lambda: s.assistant.chat_stream(s.user_id, s.chat_id, text), text)
    return True


async def _attach(s: ChatSession, arg: str) -> bool:
    if not arg:
        s.say("usage: /attach FILE (a text or Markdown file, loaded into archival memory)")
        return True
    name = await asyncio.to_thread(os.path.expanduser, arg)
    with progress_to(s.status) as progress:
        await load_files(s.assistant.runtime, s.user_id, [name], progress, s.say)
    if not isinstance(s.assistant.mode, TieredMode):
        s.say("(the agent searches archival memory in memory.mode: tiered)")
    return True


async def _save(s: ChatSession, arg: str) -> bool:
    if arg:
        s.say("usage: /save (a file under the brain home; /export FILE writes elsewhere)")
        return True
    export = await s.assistant.export_chat(s.user_id, s.chat_id)
    folder = s.assistant.runtime.settings.home / "saves"
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    path = await asyncio.to_thread(
        _write_new, folder, f"{_slug(s.user_id)}.{_slug(s.chat_id)}.{stamp}", export.model_dump_json(indent=2)
    )
    s.say(f"saved {len(export.turns)} turns to {path} (/import or brain memory import loads it)")
    return True


def _slug(value: str) -> str:
    """`value` as a part of a file name: letters, digits, '-' and '_' only. Pure."""
    return re.sub(r"[^A-Za-z0-9_-]+", "_", value)[:64] or "_"


def _write_new(folder: Path, stem: str, text: str) -> Path:
    """Write `text` to a new file `folder/stem.json` (`stem-2.json`, ... when taken); its path."""
    folder.mkdir(parents=True, exist_ok=True)
    for number in range(1, 1_000):
        path = folder / (f"{stem}.json" if number == 1 else f"{stem}-{number}.json")
        try:
            with path.open("x", encoding="utf-8") as file:
                file.write(text + "\n")
        except FileExistsError:
            continue
        return path
    raise InputError(f"{folder} already holds too many saves named {stem}")


MEMGPT_COMMANDS: dict[str, Command] = {
    "/dump": _dump,
    "/history": _history,
    "/pop": _pop,
    "/rethink": _rethink,
    "/heartbeat": _heartbeat,
    "/memorywarning": _memorywarning,
    "/attach": _attach,
    "/save": _save,
}
