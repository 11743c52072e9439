"""`BlocksMode` (`memory.mode: blocks`): the turn engine with LlamaIndex-style block memory.

Each chat has a `BlockMemory` in the backend: the history FIFO within `memory.blocks.token_limit` x
`chat_history_token_ratio`, and blocks (static text, facts extracted from flushed messages, recall of flushed
messages) cut to keep the whole prompt within `token_limit`. A turn's tool calls and results are part of the
history and count in its tokens. The transcript is kept as in every mode (export, retry, erasure).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import ClassVar

from actions.fact_block import FactBlock
from actions.memory_section import render_block_memory
from brain.errors import ConfigError, StoreError
from brain.llm.protocol import ChatMessage
from brain.memory.blocks import BlockMemory, MemoryBlock, StaticBlock, VectorBlock
from brain.memory.blocks.budget import message_tokens
from brain.memory.brain_memory import BrainMemory
from brain.message import Message
from brain.runtime import Runtime
from roles.modes.brain import BrainMode
from roles.turn import Host, Turn

__all__ = ["BlocksMode"]

_log = logging.getLogger("brain.blocks")
_NEEDS_A_BACKEND = "memory.mode blocks keeps its blocks in a backend: open the runtime with one"


class BlocksMode(BrainMode):
    """Prompts built by block memory (needs a backend: `runtime.tiers`); the blocks are built once from
    `runtime` and serve every chat."""

    name: ClassVar[str] = "blocks"
    resolves: ClassVar[bool] = False  # block memory retrieves with the text as written

    def __init__(self, runtime: Runtime) -> None:
        if runtime.tiers is None:
            raise ConfigError(_NEEDS_A_BACKEND)
        self.tiers = runtime.tiers
        self.settings = settings = runtime.settings.memory.blocks
        self.tokenizer = runtime.tokenizer
        blocks: list[MemoryBlock] = []
        if settings.static:
            blocks.append(StaticBlock(settings.static, priority=settings.static_priority))
        if settings.facts:
            blocks.append(
                FactBlock(
                    runtime.memory_llm,
                    runtime.tokenizer,
                    priority=settings.facts_priority,
                    max_facts=settings.max_facts,
                )
            )
        if settings.vector:
            blocks.append(
                VectorBlock(
                    self.tiers.index,
                    runtime.tokenizer,
                    embed=self.tiers.embed,
                    priority=settings.vector_priority,
                    top_k=settings.vector_top_k,
                )
            )
        self.blocks = tuple(blocks)

    def check(self, runtime: Runtime) -> None:
        if runtime.tiers is None:
            raise ConfigError(_NEEDS_A_BACKEND)

    def block_memory(self, user_id: str | bytes, chat_id: str | bytes) -> BlockMemory:
        """The chat's block memory (a cheap view; state is in the backend)."""
        return BlockMemory(
            self.tiers.block_session(user_id, chat_id),
            settings=self.settings,
            blocks=self.blocks,
            tokenizer=self.tokenizer,
            render=render_block_memory,
        )

    async def refine(self, host: Host, memory: BrainMemory) -> str | None:
        """Take the pending talk; block memory keeps the budget itself (no summaries)."""
        return memory.pop_last_talk()

    async def answer(self, host: Host, turn: Turn) -> AsyncIterator[str]:
        """The answer, each call's prompt fitted again by block memory around the turn's tool rounds."""
        memory = self.block_memory(turn.memory.user_id, turn.memory.chat_id)
        user = ChatMessage(role="user", content=turn.text)
        system = host.persona.system_prompt()

        async def refit(trail: list[ChatMessage]) -> list[ChatMessage]:
            reserve = sum(message_tokens(self.tokenizer, m) for m in trail)
            return [*await memory.aget(turn.text, system=system, reserve=reserve), user, *trail]

        async for piece in host.talk(turn, [], refit):
            yield piece

    async def committed(self, host: Host, turn: Turn) -> None:
        """After the transcript was stored as every mode does: the turn's messages (tool rounds included)
        into block memory; if that write fails the answer is kept and the next turn carries on (logged)."""
        answer = ChatMessage(role="assistant", content="".join(turn.pieces))
        messages = [ChatMessage(role="user", content=turn.text), *turn.trail, answer]
        try:
            await self.block_memory(turn.memory.user_id, turn.memory.chat_id).aput_messages(messages)
        except StoreError as exc:
            _log.warning("block memory missed a turn of %r: %s", turn.memory.user_id, exc)

    async def rewritten(self, host: Host, memory: BrainMemory, answer: Message) -> None:
        """The rewritten answer replaces the old one in the history too (if not flushed yet)."""
        if not await self.block_memory(memory.user_id, memory.chat_id).replace_answer(answer.content):
            _log.info("the rewritten answer of %r was flushed to the blocks already", memory.user_id)

    async def take_back(self, host: Host, memory: BrainMemory, n: int) -> list[Message]:
        """As brain mode does; the exchanges also leave the block memory's history when still there."""
        taken = await super().take_back(host, memory, n)
        users = sum(1 for m in taken if m.role == "user")
        if users:
            await self.block_memory(memory.user_id, memory.chat_id).drop_exchanges(users)
        return taken
