"""The REPL's slash commands. Each reads or changes memory only through the Assistant's operations."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from brain.errors import InputError
from brain.memory.transfer import parse_export
from brain.search.index import IndexedDoc
from roles.cli.graph import graph_text
from roles.cli.memgpt import MEMGPT_COMMANDS, Command
from roles.cli.progress import progress_to
from roles.modes import TieredMode

if TYPE_CHECKING:
    from roles.cli.session import ChatSession

__all__ = ["COMMANDS", "HELP"]

HELP = """commands:
  /memory             summary, knowledge, window size, pending message and token usage
  /dump [n]           the main context: system message (persona, core memory, summary), last n messages
  /history [n]        the last n stored turns, taken-back ones too (default 10)
  /pop [n]            take back the last n exchanges (default 1; they stay stored, hidden)
  /retry              answer the pending message, or the last question again
  /rewrite TEXT       replace the last answer with TEXT
  /rethink TEXT       replace the agent's last message, as it remembers it, with TEXT
  /heartbeat          send the agent a heartbeat system message (it takes a step)
  /memorywarning      send the agent the memory-pressure warning
  /attach FILE        load FILE into archival memory (as brain memory load does)
  /save               write the conversation to a new file under the brain home now
  /knowledge add TEXT remember TEXT as knowledge
  /summarize          summarize the conversation now
  /title              give the conversation a title
  /export [FILE]      write the conversation as JSON (to FILE or the screen)
  /import FILE        load a conversation exported before (into this empty chat)
  /forget             delete this chat's memory in every tier (asks first)
  /usage              LLM calls, tokens per turn, latency
  /core               core memory blocks (memory.mode: tiered)
  /archival search Q  search archival memory (tiered)
  /archival add TEXT  store TEXT in archival memory (tiered)
  /graph [NAME]       graph memory: everyone's relations, or one entity's (memory.graph.enabled)
  /help, /exit"""


async def _memory(s: ChatSession, _: str) -> bool:
    m = await s.assistant.memory_of(s.user_id, s.chat_id)
    if isinstance(s.assistant.mode, TieredMode):
        for block in await s.assistant.mode.core_blocks(s.assistant.engine, s.user_id):
            s.say(f"core [{block.label}]: {block.value or '(empty)'}")
    totals = s.assistant.llm.usage.totals()
    s.say(f"summary: {m.historical_summary or '(none yet)'}")
    s.say(f"knowledge: {m.get_knowledge() or '(none)'}")
    s.say(
        f"window: {len(m.history)} turns, {m.window_tokens} tokens; {m.turn_count} turns stored; "
        f"summarized up to turn {m.summary_upto}"
    )
    pending = m.last_talk if m.last_talk is not None else s.unsent
    if pending is not None:
        s.say(f"pending (not answered yet; /retry answers it): {pending}")
    tokens = f"{totals.prompt_tokens} prompt + {totals.completion_tokens} completion tokens"
    s.say(f"usage: {totals.calls} calls, {tokens}")
    return True


async def _retry(s: ChatSession, _: str) -> bool:
    unsent = s.unsent
    if unsent is not None and await s.assistant.pending(s.user_id, s.chat_id) is None:
        # The failed line never reached the store (it was down): send it now.
        await s.reply(lambda: s.assistant.chat_stream(s.user_id, s.chat_id, unsent), unsent)
        return True
    await s.reply(lambda: s.assistant.retry_stream(s.user_id, s.chat_id), unsent)
    return True


async def _rewrite(s: ChatSession, arg: str) -> bool:
    if not arg:
        s.say("usage: /rewrite TEXT")
        return True
    await s.assistant.rewrite(s.user_id, s.chat_id, arg)
    s.say("the last answer was replaced")
    return True


async def _knowledge(s: ChatSession, arg: str) -> bool:
    verb, _, text = arg.partition(" ")
    if verb != "add" or not text.strip():
        s.say("usage: /knowledge add TEXT")
        return True
    await s.assistant.add_knowledge(s.user_id, s.chat_id, text)
    s.say("remembered")
    return True


async def _summarize(s: ChatSession, _: str) -> bool:
    summary = await s.assistant.summarize_now(s.user_id, s.chat_id)
    s.say(f"summary: {summary or '(nothing to summarize)'}")
    return True


async def _title(s: ChatSession, _: str) -> bool:
    s.say(f"title: {await s.assistant.title(s.user_id, s.chat_id)}")
    return True


async def _export(s: ChatSession, arg: str) -> bool:
    export = await s.assistant.export_chat(s.user_id, s.chat_id)
    text = export.model_dump_json(indent=2)
    if arg:
        try:
            await asyncio.to_thread(_write, arg, text + "\n")
        except OSError as exc:
            raise InputError(f"cannot write {arg}: {exc.strerror or exc}") from None
        s.say(f"exported {len(export.turns)} turns to {arg}")
    else:
        s.say(text)
    return True


async def _import(s: ChatSession, arg: str) -> bool:
    if not arg:
        s.say("usage: /import FILE")
        return True
    try:
        data = await asyncio.to_thread(_read, arg)
    except OSError as exc:
        raise InputError(f"cannot read {arg}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise InputError(f"{arg} is not UTF-8 text: not a conversation export") from None
    export = parse_export(data)
    with progress_to(s.status) as progress:
        await s.assistant.import_chat(s.user_id, s.chat_id, export, progress=progress)
    s.say(f"imported {len(export.turns)} turns")
    return True


async def _forget(s: ChatSession, _: str) -> bool:
    if not s.confirm(f"delete everything remembered in chat {s.chat_id!r}? [y/N] "):
        s.say("kept")
        return True
    report = await s.assistant.forget(s.user_id, s.chat_id)
    s.unsent = None
    recall = f" and {report.recall_entries} recall entries" if report.recall_entries else ""
    s.say(f"forgotten: the chat's turns, summary and knowledge{recall}")
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
    m = await s.assistant.memory_of(s.user_id, s.chat_id)
    s.say(
        f"this chat, every session: {m.calls} answer calls, {m.usage.prompt_tokens} prompt + "
        f"{m.usage.completion_tokens} completion tokens"
    )
    if (backend := s.assistant.runtime.backend) is not None:
        for row in await backend.usage.rows(s.user_id, s.chat_id):  # answers, summaries, facts, graph
            s.say(f"  {row.model}: {row.calls} calls, {row.prompt_tokens} + {row.completion_tokens} tokens")
    if s.assistant.memory_llm is not s.assistant.llm:
        spent = s.assistant.memory_llm.usage.totals()
        s.say(f"memory model: {spent.calls} calls, {spent.prompt_tokens} prompt tokens")
    return True


async def _core(s: ChatSession, _: str) -> bool:
    if (tiered := _tiered(s)) is not None:
        for block in await tiered.core_blocks(s.assistant.engine, s.user_id):
            s.say(f"[{block.label}] {len(block.value)}/{block.limit} characters: {block.value or '(empty)'}")
    return True


async def _archival(s: ChatSession, arg: str) -> bool:
    verb, _, text = arg.partition(" ")
    if verb not in {"search", "add"} or not text.strip():
        s.say("usage: /archival search QUERY, or /archival add TEXT")
        return True
    if _tiered(s) is None:
        return True
    agent = s.assistant
    archival = agent.tiers.archival(s.user_id)
    if verb == "add":
        doc = IndexedDoc(id=uuid.uuid4().hex, text=text.strip(), source="user")
        await archival.add(doc, await agent.tiers.vector(archival.indexed_text(doc)))
        s.say("stored in archival memory")
        return True
    hits, total = await archival.search(text, limit=5, vector=await agent.tiers.vector(text))
    s.say(f"{total} passage(s) match" + (":" if hits else ""))
    for hit in hits:
        s.say(f"- {hit.doc.text} (score {hit.score:.3f})")
    return True


async def _graph(s: ChatSession, arg: str) -> bool:
    tiers = s.assistant.runtime.tiers
    if tiers is None:
        s.say("graph memory needs Redis")
        return True
    try:
        graph = await graph_text(tiers, s.user_id, arg.strip() or None, None, False)
    except InputError as exc:
        s.say(str(exc))
        return True
    lines = graph.lines()
    s.say(f"{len(graph.entities)} entities, {len(lines)} relations" + (":" if lines else ""))
    for line in lines[:50]:
        s.say(f"- {line}")
    if len(lines) > 50:
        s.say(f"... and {len(lines) - 50} more: brain memory graph --user {s.user_id!s}")
    return True


def _tiered(s: ChatSession) -> TieredMode | None:
    if isinstance(s.assistant.mode, TieredMode):
        return s.assistant.mode
    s.say("this needs the tiered memory mode: set memory.mode: tiered")
    return None


async def _help(s: ChatSession, _: str) -> bool:
    s.say(HELP)
    return True


async def _exit(s: ChatSession, _: str) -> bool:
    return False


def _write(path: str, text: str) -> None:
    Path(path).expanduser().write_text(text, encoding="utf-8")


def _read(path: str) -> str:
    return Path(path).expanduser().read_text(encoding="utf-8")


COMMANDS: dict[str, Command] = {
    "/memory": _memory,
    **MEMGPT_COMMANDS,
    "/retry": _retry,
    "/rewrite": _rewrite,
    "/knowledge": _knowledge,
    "/summarize": _summarize,
    "/title": _title,
    "/export": _export,
    "/import": _import,
    "/forget": _forget,
    "/usage": _usage,
    "/core": _core,
    "/archival": _archival,
    "/graph": _graph,
    "/help": _help,
    "/exit": _exit,
    "/quit": _exit,
}
