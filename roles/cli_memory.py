"""`brain memory ...` and `brain agent ...`: memory for scripts (export, import, delete, load documents)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from brain.connection import RedisConnection
from brain.documents import load_document
from brain.errors import InputError
from brain.openai_llm import OpenAILLM
from brain.redis_store import RedisMemoryStore
from brain.search_index import SearchIndex
from brain.settings import Settings
from brain.store import Conversation
from brain.tokens import Tokenizer
from brain.transfer import export_conversation, import_conversation, parse_export
from roles.agent_file import export_agent, import_agent, parse_agent_file
from roles.assistant import Assistant

__all__ = ["agent_command", "memory_command"]


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
    async with await RedisConnection.open(settings) as connection:
        if args.memory_command == "load":
            return await _load(settings, connection, args.user, args.files)
        conv = Conversation(args.user, args.chat)
        store = RedisMemoryStore(
            connection.client, prefix=settings.redis.key_prefix, ttl_seconds=settings.memory.ttl_seconds
        )
        if args.memory_command == "export":
            text = (await export_conversation(store, conv)).model_dump_json(indent=2) + "\n"
            if args.file:
                await asyncio.to_thread(Path(args.file).write_text, text, encoding="utf-8")
            else:
                sys.stdout.write(text)
        elif args.memory_command == "import":
            export = parse_export(await asyncio.to_thread(_read, args.file))
            await import_conversation(store, export, conv)
            print(f"imported {len(export.turns)} turns into {args.user}/{args.chat}")
        else:
            existed = await store.delete(conv)
            print(
                f"deleted {args.user}/{args.chat}"
                if existed
                else f"nothing stored for {args.user}/{args.chat}"
            )
    return 0


async def _load(settings: Settings, connection: RedisConnection, user: str, files: list[str]) -> int:
    index = SearchIndex(connection.client, f"archival:{user}", prefix=settings.redis.key_prefix)
    tokenizer = Tokenizer.for_model(settings.llm.model, settings.llm.encoding)
    async with OpenAILLM.from_settings(settings.llm) as llm:
        embed = llm.embed if settings.llm.embedding_model else None
        for name in files:
            source, text = await asyncio.to_thread(_read_source, name)
            result = await load_document(index, source, text, tokenizer, embed=embed)
            if result.unchanged:
                print(f"{name}: unchanged, nothing added")
            else:
                replaced = f", {result.removed} old passages replaced" if result.removed else ""
                print(f"{name}: {result.added} passages added{replaced}")
    return 0


async def agent_command(settings: Settings, args: argparse.Namespace) -> int:
    if args.agent_command == "export":
        async with Assistant.from_settings(
            settings, user_id=args.user or "local", chat_id=args.chat or "default"
        ) as agent:
            text = (await export_agent(agent, settings)).model_dump_json(indent=2) + "\n"
        await asyncio.to_thread(Path(args.file).write_text, text, encoding="utf-8")
        print(f"exported the agent to {args.file}")
        return 0
    file = parse_agent_file(await asyncio.to_thread(_read, args.file))
    user, chat = (
        args.user or file.agent.get("user_id", "local"),
        args.chat or file.agent.get("chat_id", "default"),
    )
    async with Assistant.from_settings(settings, user_id=user, chat_id=chat) as agent:
        await import_agent(file, agent)
    print(
        f"imported the agent into {user}/{chat}: {len(file.conversation.turns)} turns, "
        f"{len(file.core_blocks)} core blocks, {len(file.archival)} archival passages"
    )
    return 0
