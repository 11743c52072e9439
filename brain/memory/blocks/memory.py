"""`BlockMemory`: LlamaIndex's `Memory` done right, one session of it, persistent in the backend.

`put` / `put_messages` add to a FIFO history; past `chat_history_token_ratio` x `token_limit` tokens the
oldest messages (at least `token_flush_size` tokens' worth) move to the archive and every block that accepts
them takes them in. `get` returns the system messages, then the history, with the blocks' content inserted in
the system message or the newest user message; the blocks are cut to keep everything within `token_limit`.

Unlike LlamaIndex: tool calls, tool results and reasoning count; system messages are never flushed; nothing
is lost on restart or when a block fails (it reads the archive again on the next put); one block object
serves any number of sessions without sharing their state.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from brain.errors import BrainError, InputError
from brain.llm.protocol import ChatMessage
from brain.llm.tokens import Tokenizer
from brain.memory.blocks.base import MemoryBlock
from brain.memory.blocks.budget import BlockText, RenderBlocks, fit_blocks, flush_count, message_tokens
from brain.settings import BlockSettings
from brain.storage.blocks import BlockSessionStore, Record

__all__ = ["BlockMemory"]

_log = logging.getLogger("brain.blocks")
_SYSTEM = "system"


def _mark(block: MemoryBlock) -> str:
    return f"mark:{block.name}"


class BlockMemory:
    """One session's block memory. Build one per call (cheap); blocks and the client are shared. `render`
    turns the blocks that fit into the prompt's memory text (e.g. `actions.memory_section`)."""

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

    # ------------------------------------------------------------------ writing

    async def put(self, message: ChatMessage, *, reasoning: str = "") -> None:
        """Add one message (its `reasoning`, if any, is counted with it)."""
        await self.put_messages([message], reasoning=[reasoning])

    async def put_messages(self, messages: Sequence[ChatMessage], *, reasoning: Sequence[str] = ()) -> None:
        """Add messages in order, then flush what overflows. A message that alone is over the history's
        budget is refused (`InputError`) before anything is written."""
        records: list[Record] = []
        system: list[dict[str, Any]] = []
        for i, message in enumerate(messages):
            if not isinstance(message, ChatMessage):
                raise InputError(f"expected a ChatMessage, got {type(message).__name__}")
            why = reasoning[i] if i < len(reasoning) else ""
            tokens = message_tokens(self.tokenizer, message, why)
            if message.role == "system":
                system.append(message.model_dump())
            elif tokens > self.settings.history_limit:
                raise InputError(
                    f"a {message.role} message of {tokens:,} tokens can never fit the history's "
                    f"{self.settings.history_limit:,} tokens (token_limit x chat_history_token_ratio)"
                )
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
            count = flush_count(
                [r.message.role for r in records],
                [r.tokens for r in records],
                threshold=self.settings.history_limit,
                flush_size=self.settings.flush_size,
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

    async def reset(self) -> int:
        """Delete the session: history, archive, block state and block indexes."""
        dropped = 0
        for block in self.blocks:
            dropped += await block.drop(self.session)
        return dropped + await self.session.drop()

    # ------------------------------------------------------------------ reading

    async def get_all(self) -> list[ChatMessage]:
        """Every message ever put, system messages first, archived then active (nothing is deleted)."""
        system = [ChatMessage.model_validate(m) for m in await self.session.get_state(_SYSTEM) or []]
        archived = await self.session.archived(0)
        active, _ = await self.session.active()
        return system + [r.message for r in archived + active]

    async def get(self, input: str | None = None, *, system: str = "", reserve: int = 0) -> list[ChatMessage]:
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
        texts, framing = self._rendered_costs(texts)
        limit = self.settings.token_limit - framing
        for _ in range(4):  # estimates first, then the exact cost of what was rendered
            memory = self.render(fit_blocks(texts, used, limit, self.tokenizer))
            prompt = _insert(heads, history, memory, self.settings.insert_method)
            excess = used + self._inserted(heads + history, prompt) - self.settings.token_limit
            if excess <= 0 or not memory:
                break
            limit -= excess
        return prompt

    def _rendered_costs(self, texts: list[BlockText]) -> tuple[list[BlockText], int]:
        """Each block's cost as rendered (its item, header included) and the rendering's fixed framing
        (e.g. a standing instruction): rendered alone, a block costs framing + its own part; together,
        the framing counts once."""
        alone = [self.tokenizer.count(self.render([t])) for t in texts]
        framing = 0
        if len(texts) > 1:
            framing = max((sum(alone) - self.tokenizer.count(self.render(texts))) // (len(texts) - 1), 0)
        costs = [replace(t, tokens=max(cost - framing, 1)) for t, cost in zip(texts, alone, strict=True)]
        return costs, framing

    def _inserted(self, before: list[ChatMessage], after: list[ChatMessage]) -> int:
        """Tokens the blocks' insertion added: the one message it changed or added, less the one it
        replaced (the rest is counted already, as stored)."""
        kept, old = {id(m) for m in after}, {id(m) for m in before}
        added = sum(message_tokens(self.tokenizer, m) for m in after if id(m) not in old)
        return added - sum(message_tokens(self.tokenizer, m) for m in before if id(m) not in kept)


def _insert(
    heads: list[ChatMessage], history: list[ChatMessage], memory: str, method: str
) -> list[ChatMessage]:
    if not memory:
        return heads + history
    if method == "user":
        for i in range(len(history) - 1, -1, -1):
            if history[i].role == "user":
                updated = history[i].model_copy(update={"content": f"{memory}\n\n{history[i].content or ''}"})
                return heads + history[:i] + [updated] + history[i + 1 :]
    if heads:
        first = heads[0].model_copy(update={"content": f"{heads[0].content or ''}\n\n{memory}"})
        return [first, *heads[1:], *history]
    return [ChatMessage(role="system", content=memory), *heads, *history]
