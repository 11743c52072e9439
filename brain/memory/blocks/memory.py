"""`BlockMemory`: LlamaIndex's `Memory` done right, one session of it, persistent in the backend.

`aput` / `aput_messages` add to a FIFO history; past `chat_history_token_ratio` x `token_limit` tokens the
oldest messages (at least `token_flush_size` tokens' worth) move to the archive and every block that accepts
them takes them in. A message over that budget on its own is never refused: it goes to the archive and the
blocks at once, with what came before it. `aget` returns the system messages, then the history, with the
blocks' content inserted in the system message or the newest user message; the blocks are cut to keep
everything within `token_limit`.

LlamaIndex's names: `BlockMemory.from_defaults(session_id=..., token_limit=..., memory_blocks=[...], ...)`,
awaitable `aput`, `aput_messages`, `aget`, `aget_all`, `areset`, and their blocking forms `put`,
`put_messages`, `get`, `get_all`, `reset` for scripts (refused inside an event loop: `blocking`).

Unlike LlamaIndex: tool calls, tool results and reasoning count; system messages are never flushed; nothing
is lost on restart or when a block fails (it reads the archive again on the next put); one block object
serves any number of sessions without sharing their state.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

from pydantic import ValidationError

from brain.errors import BrainError, ConfigError, InputError
from brain.keys import check_id
from brain.llm.protocol import ChatMessage
from brain.llm.tokens import Tokenizer
from brain.memory.blocks.base import MemoryBlock
from brain.memory.blocks.blocking import run_blocking
from brain.memory.blocks.budget import (
    BlockText,
    RenderBlocks,
    fit_blocks,
    flush_count,
    message_tokens,
    oversize_count,
)
from brain.memory.blocks.prompt import insert_memory, inserted_tokens, rendered_costs
from brain.settings import BlockSettings
from brain.storage.blocks import BlockSessionStore, Record

if TYPE_CHECKING:
    from brain.memory.tiers import Tiers

__all__ = ["BlockMemory", "BlockRuntime"]

_log = logging.getLogger("brain.blocks")
_SYSTEM = "system"
T = TypeVar("T")


class BlockRuntime(Protocol):
    """What `BlockMemory.from_defaults` takes from a runtime (`brain.Runtime` has it)."""

    @property
    def tiers(self) -> Tiers | None: ...

    @property
    def tokenizer(self) -> Tokenizer: ...


def _mark(block: MemoryBlock) -> str:
    return f"mark:{block.name}"


class BlockMemory:
    """One session's block memory. Build one per call (cheap; `from_defaults` in LlamaIndex's terms); blocks
    and the client are shared. `render` turns the blocks that fit into the prompt's memory text (e.g.
    `actions.memory_section.render_block_memory`)."""

    def __init__(
        self,
        session: BlockSessionStore,
        *,
        settings: BlockSettings | None = None,
        blocks: Sequence[MemoryBlock] = (),
        tokenizer: Tokenizer,
        render: RenderBlocks,
    ) -> None:
        names = [b.name for b in blocks]
        if len(set(names)) != len(names):
            raise InputError(f"block names must be unique, got {names}")
        self.session, self.tokenizer, self.render = session, tokenizer, render
        self.settings = settings or BlockSettings()
        self.blocks = tuple(blocks)

    @classmethod
    def from_defaults(
        cls,
        session_id: str | None = None,
        *,
        runtime: BlockRuntime,
        render: RenderBlocks,
        user_id: str | None = None,
        token_limit: int = 30_000,
        chat_history_token_ratio: float = 0.7,
        token_flush_size: int | None = None,
        memory_blocks: Sequence[MemoryBlock] = (),
        insert_method: Literal["system", "user"] = "system",
        tokenizer: Tokenizer | None = None,
    ) -> BlockMemory:
        """A session's block memory in `runtime`'s backend, set up in LlamaIndex's terms and defaults
        (`token_flush_size` None: 10% of `token_limit`). `session_id` (default: a new one) names the chat
        and `user_id` (default: the session id) its owner, whose erasure deletes it. `render` makes the
        blocks that fit into prompt text (`actions.memory_section.render_block_memory`). `ConfigError` for
        unusable settings or a runtime without a backend, `InputError` for an unusable id."""
        if runtime.tiers is None:
            raise ConfigError("block memory keeps its sessions in a backend: open the runtime with one")
        chat = check_id(session_id or uuid.uuid4().hex, "session_id")
        owner = check_id(user_id or chat, "user_id")
        try:
            settings = BlockSettings(
                token_limit=token_limit,
                chat_history_token_ratio=chat_history_token_ratio,
                token_flush_size=token_flush_size,
                insert_method=insert_method,
            )
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'settings'}: {e['msg']}" for e in exc.errors()
            )
            raise ConfigError(f"block memory: {problems}") from None
        return cls(
            runtime.tiers.block_session(owner, chat),
            settings=settings,
            blocks=memory_blocks,
            tokenizer=tokenizer or runtime.tokenizer,
            render=render,
        )

    # ------------------------------------------------------------------ blocking forms (scripts)

    def _blocking(self, name: str, call: Callable[[], Coroutine[Any, Any, T]]) -> T:
        return run_blocking(call, name=f"BlockMemory.{name}", instead=f"memory.a{name}(...)")

    def put(self, message: ChatMessage, *, reasoning: str = "") -> None:
        """`aput`, blocking; not inside an event loop (`RuntimeError`)."""
        self._blocking("put", lambda: self.aput(message, reasoning=reasoning))

    def put_messages(self, messages: Sequence[ChatMessage], *, reasoning: Sequence[str] = ()) -> None:
        """`aput_messages`, blocking; not inside an event loop (`RuntimeError`)."""
        self._blocking("put_messages", lambda: self.aput_messages(messages, reasoning=reasoning))

    def get(self, input: str | None = None, *, system: str = "", reserve: int = 0) -> list[ChatMessage]:
        """`aget`, blocking; not inside an event loop (`RuntimeError`)."""
        return self._blocking("get", lambda: self.aget(input, system=system, reserve=reserve))

    def get_all(self) -> list[ChatMessage]:
        """`aget_all`, blocking; not inside an event loop (`RuntimeError`)."""
        return self._blocking("get_all", self.aget_all)

    def reset(self) -> int:
        """`areset`, blocking; not inside an event loop (`RuntimeError`)."""
        return self._blocking("reset", self.areset)

    # ------------------------------------------------------------------ writing

    async def aput(self, message: ChatMessage, *, reasoning: str = "") -> None:
        """Add one message (its `reasoning`, if any, is counted with it)."""
        await self.aput_messages([message], reasoning=[reasoning])

    async def aput_messages(self, messages: Sequence[ChatMessage], *, reasoning: Sequence[str] = ()) -> None:
        """Add messages in order, then flush what overflows. A message over the history's budget on its own
        is flushed at once with everything before it (and any tool round after it), so the blocks take it
        in; the history then starts with the next user message, or is empty. Non-messages are refused
        (`InputError`) before anything is written."""
        records: list[Record] = []
        system: list[dict[str, Any]] = []
        for i, message in enumerate(messages):
            if not isinstance(message, ChatMessage):
                raise InputError(f"expected a ChatMessage, got {type(message).__name__}")
            why = reasoning[i] if i < len(reasoning) else ""
            tokens = message_tokens(self.tokenizer, message, why)
            if message.role == "system":
                system.append(message.model_dump())
            else:
                records.append(Record(message=message, tokens=tokens, reasoning=why))
        if system:
            held = await self.session.get_state(_SYSTEM) or []
            await self.session.set_state(_SYSTEM, held + [m for m in system if m not in held])
        await self.session.append(records)
        await self._manage_queue()

    async def _manage_queue(self) -> None:
        for _ in range(100):  # each round flushes, or sees that another writer did
            records, raws = await self.session.active()
            roles, tokens = [r.message.role for r in records], [r.tokens for r in records]
            limit = self.settings.history_limit
            count = max(
                flush_count(roles, tokens, threshold=limit, flush_size=self.settings.flush_size),
                oversize_count(roles, tokens, threshold=limit),
            )
            if count == 0:
                break
            await self.session.flush(raws[0], count)
        await self.feed_blocks()

    async def feed_blocks(self) -> None:
        """Give each block the archived messages it has not read. A block that fails keeps its place and
        reads them again on the next put (logged, never lost)."""
        total = await self.session.archived_count()
        for block in self.blocks:
            if not block.accept_short_term_memory:
                continue
            read = int(await self.session.get_state(_mark(block)) or 0)
            if read >= total or not await self.session.claim(_mark(block), read, total):
                continue
            try:
                await block.aput(self.session, await self.session.archived(read, total - 1))
            except BrainError as exc:
                await self.session.claim(_mark(block), total, read)
                _log.warning("block %r failed on flushed messages (read again later): %s", block.name, exc)

    async def drop_exchanges(self, count: int) -> int:
        """Take the newest `count` exchanges (a user message and what followed) out of the history, as far
        as they are still in it (flushed ones stay with the blocks); how many messages left."""
        return await self.session.drop_tail(count)

    async def replace_answer(self, text: str) -> bool:
        """Put `text` in place of the newest answer while it is still in the history (a rewritten answer);
        False when it is not (flushed to the blocks already)."""
        message = ChatMessage(role="assistant", content=text)
        record = Record(message=message, tokens=message_tokens(self.tokenizer, message))
        return await self.session.replace_answer(record)

    async def areset(self) -> int:
        """Delete the session: history, archive, block state and block indexes."""
        dropped = 0
        for block in self.blocks:
            dropped += await block.drop(self.session)
        return dropped + await self.session.drop()

    # ------------------------------------------------------------------ reading

    async def aget_all(self) -> list[ChatMessage]:
        """Every message ever put, system messages first, archived then active (nothing is deleted)."""
        system = [ChatMessage.model_validate(m) for m in await self.session.get_state(_SYSTEM) or []]
        archived = await self.session.archived(0)
        active, _ = await self.session.active()
        return system + [r.message for r in archived + active]

    async def aget(
        self, input: str | None = None, *, system: str = "", reserve: int = 0
    ) -> list[ChatMessage]:
        """The prompt: `system` (e.g. the persona) and the stored system messages, the history, and the
        blocks' content (inserted by `insert_method`), within `token_limit` as far as priority-0 blocks
        allow. `input` (the new user text, not stored) steers what blocks retrieve and is counted, as are
        `reserve` tokens the caller adds (a turn's tool rounds not yet put)."""
        stored = [ChatMessage.model_validate(m) for m in await self.session.get_state(_SYSTEM) or []]
        heads = ([ChatMessage(role="system", content=system)] if system else []) + stored
        records, _ = await self.session.active()
        history = [r.message for r in records]
        extra = self.tokenizer.count(input or "") + 4 + reserve
        used = sum(r.tokens for r in records) + sum(message_tokens(self.tokenizer, m) for m in heads) + extra
        texts: list[BlockText] = []
        for block in self.blocks:
            content = await block.aget(self.session, history, input)
            if content:
                cost = self.tokenizer.count(content) + 2 * self.tokenizer.count(block.name) + 6
                texts.append(
                    BlockText(
                        block.name,
                        block.priority,
                        content,
                        cost,
                        block.truncate,
                        source=block.source,
                        lower_trust=block.lower_trust,
                    )
                )
        texts, framing = rendered_costs(texts, self.render, self.tokenizer)
        limit = self.settings.token_limit - framing
        for _ in range(4):  # estimates first, then the exact cost of what was rendered
            memory = self.render(fit_blocks(texts, used, limit, self.tokenizer))
            prompt = insert_memory(heads, history, memory, self.settings.insert_method)
            added = inserted_tokens(self.tokenizer, heads + history, prompt)
            excess = used + added - self.settings.token_limit
            if excess <= 0 or not memory:
                break
            limit -= excess
        return prompt
