"""`brain memory ...` and `brain agent ...`: memory for scripts (export, import, backfill, delete, load
documents).
Long work shows its progress on stderr (`roles.cli.progress`); stdout carries only data and results."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import ValidationError

from brain.backends.redis import RedisBackend
from brain.backends.redis.stats import storage_report
from brain.errors import InputError
from brain.memory.transfer import export_conversation, parse_export
from brain.message import Message
from brain.progress import Progress, report, within
from brain.runtime import Runtime, open_runtime
from brain.search.documents import load_document
from brain.settings import Settings
from brain.storage import fence
from brain.storage.conversation import Conversation
from roles.agent_file import export_agent, import_agent, parse_agent_file
from roles.assistant import Assistant
from roles.cli.progress import progress_to
from roles.fact_worker import FactWorker

__all__ = ["agent_command", "load_files", "memory_command"]


def _read(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path} is not UTF-8 text") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None


def _read_source(path: str) -> tuple[str, str]:
    return str(Path(path).resolve()), _read(path)


async def memory_command(settings: Settings, args: argparse.Namespace) -> int:
    if args.memory_command == "delete" and not args.yes:
        print("brain: refusing to delete without --yes", file=sys.stderr)
        return 2
    async with open_runtime(settings, defer_model=True) as runtime:
        if args.memory_command == "delete":
            return await _delete(Assistant.for_runtime(runtime), args.user, args.chat)
        if args.memory_command == "compact":
            return await _compact(runtime)
        if args.memory_command == "stats":
            return await _stats(runtime, args.user)
        with progress_to(sys.stderr) as progress:
            return await _transfer(runtime, args, progress)


async def _transfer(runtime: Runtime, args: argparse.Namespace, progress: Progress) -> int:
    if args.memory_command == "load":
        return await _load(runtime, args.user, args.files, progress)
    conv = Conversation(args.user, args.chat)
    if args.memory_command == "export":
        export = await export_conversation(runtime.store, conv, progress)
        text = export.model_dump_json(indent=2) + "\n"
        if args.file:
            await asyncio.to_thread(Path(args.file).write_text, text, encoding="utf-8")
        else:
            sys.stdout.write(text)
    elif args.memory_command == "backfill":
        messages = parse_messages(await asyncio.to_thread(_read, args.file), args.file)
        assistant = Assistant.for_runtime(runtime)
        await assistant.backfill(args.user, args.chat, messages, progress=progress)
        print(f"loaded {len(messages)} messages into {args.user}/{args.chat}")
        facts = runtime.settings.memory.facts
        if facts.enabled and facts.in_process_worker and runtime.tiers is not None:
            turns, calls = await _learn(runtime, len(messages), progress)
            print(f"facts learned from {turns} turns with {calls} model calls")
        elif facts.enabled:
            print("its turns are queued for fact memory: brain worker applies them")
    else:
        export = parse_export(await asyncio.to_thread(_read, args.file))
        await Assistant.for_runtime(runtime).import_chat(args.user, args.chat, export, progress=progress)
        print(f"imported {len(export.turns)} turns into {args.user}/{args.chat}")
    return 0


async def _learn(runtime: Runtime, total: int, progress: Progress) -> tuple[int, int]:
    """Apply the queued turns here (the fact worker, until the queue is empty); the turns and calls."""
    turns = calls = 0
    while (done := await FactWorker(runtime).run_once(block_ms=None)).entries:
        turns, calls = turns + done.turns, calls + done.calls
        report(progress, "learning facts", turns, max(total, turns), "turns")
    return turns, calls


def parse_messages(text: str, name: str) -> list[Message]:
    """JSON Lines of messages (`Message` fields; `created_at` an ISO time); `InputError` naming the first
    bad line."""
    messages = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            messages.append(Message.model_validate_json(line))
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"]) or "line"
            raise InputError(f"{name}:{number}: not a message: {where}: {err['msg']}") from None
    if not messages:
        raise InputError(f"{name} holds no messages")
    return messages


async def _delete(assistant: Assistant, user: str, chat: str | None) -> int:
    if chat is not None:
        report = await assistant.forget(user, chat)
        if not report.chats and not report.recall_entries:
            print(f"nothing stored for {user}/{chat}")
        else:
            recall = f" and its {report.recall_entries} recall entries" if report.recall_entries else ""
            print(f"deleted {user}/{chat}{recall}")
        return 0
    report = await assistant.forget_user(user)
    print(
        f"erased user {user!r}: {report.chats} chats, {report.recall_entries} recall entries, "
        f"{report.archival_passages} archival passages, {report.core_blocks} core blocks"
    )
    if report.remaining:
        left = ", ".join(report.remaining)
        print(
            f"brain: {len(report.remaining)} keys of user {user!r} are still there: {left}", file=sys.stderr
        )
        return 1
    print(f"checked with a scan: nothing of user {user!r} remains")
    print(f"deleted {report.api_keys} API keys; not reached by an erasure:", *report.unreachable, sep="\n  ")
    return 0


async def _stats(runtime: Runtime, user: str | None) -> int:
    if not isinstance(runtime.backend, RedisBackend):
        raise InputError("storage statistics read Redis; this runtime keeps memory elsewhere")
    print("counting every key (a full scan) ...", file=sys.stderr)
    report = await storage_report(runtime.backend, user)
    total = report.bytes or 1
    print(f"{'memory':<20} {'keys':>10} {'bytes':>14} {'share':>7}")
    for cost in report.families:
        print(f"{cost.family:<20} {cost.keys:>10,} {cost.bytes:>14,} {cost.bytes / total:>7.1%}")
    print(f"{'total':<20} {report.keys:>10,} {report.bytes:>14,}" + (f"   user {user!r}" if user else ""))
    q = report.queue
    print(
        f"fact queue: {q.backlog:,} of {q.max_len:,} entries ({q.pending:,} being worked on), {q.overflow:,} "
        f"chats waiting outside it; {q.deferred:,} turns deferred and {q.dropped:,} dropped at the bound; "
        f"{q.dead:,} dead letters of {q.dead_letters_max:,}, {q.dead_trimmed:,} trimmed"
    )
    return 0


async def _compact(runtime: Runtime) -> int:
    if runtime.backend is None:
        raise InputError("there is no store to compact")
    print("rewriting the append-only file ...", file=sys.stderr)
    done = await runtime.backend.compact()
    print("the append-only file was rewritten" if done else "the store keeps no append-only file")
    return 0


async def _load(runtime: Runtime, user: str, files: list[str], progress: Progress) -> int:
    await load_files(runtime, user, files, progress, print)
    return 0


async def load_files(
    runtime: Runtime, user: str, files: Sequence[str], progress: Progress, say: Callable[[str], object]
) -> None:
    """Load text or Markdown `files` into `user`'s archival memory (a file loaded before is replaced, an
    unchanged one adds nothing), telling `progress` the work and `say` one line per file."""
    if runtime.tiers is None:
        raise InputError("archival memory needs Redis")
    await runtime.tiers.present(user)
    index = runtime.tiers.archival(user)
    ticket = await runtime.tiers.backend.erasure.ticket(user)
    for name in files:
        source, text = await asyncio.to_thread(_read_source, name)
        with fence.holding(ticket):  # an erasure of the user meanwhile drops what is left to write
            result = await load_document(
                index,
                source,
                text,
                runtime.tokenizer,
                embed=runtime.tiers.embed,
                progress=within(progress, name),
            )
        if result.unchanged:
            say(f"{name}: unchanged, nothing added")
        else:
            replaced = f", {result.removed} old passages replaced" if result.removed else ""
            say(f"{name}: {result.added} passages added{replaced}")


async def agent_command(settings: Settings, args: argparse.Namespace) -> int:
    async with open_runtime(settings, defer_model=True) as runtime:
        agent = Assistant.for_runtime(runtime)
        if args.agent_command == "export":
            user, chat = args.user or "local", args.chat or "default"
            with progress_to(sys.stderr) as progress:
                exported = await export_agent(agent, settings, user, chat, progress)
            text = exported.model_dump_json(indent=2) + "\n"
            await asyncio.to_thread(Path(args.file).write_text, text, encoding="utf-8")
            print(f"exported the agent to {args.file}")
            return 0
        file = parse_agent_file(await asyncio.to_thread(_read, args.file))
        user = args.user or file.agent.get("user_id", "local")
        chat = args.chat or file.agent.get("chat_id", "default")
        with progress_to(sys.stderr) as progress:
            await import_agent(file, agent, user, chat, progress)
    print(
        f"imported the agent into {user}/{chat}: {len(file.conversation.turns)} turns, "
        f"{len(file.core_blocks)} core blocks, {len(file.archival)} archival passages"
    )
    return 0
