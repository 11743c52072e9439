"""`TieredAssistant`: an Assistant in MemGPT's tiered mode (`roles.modes.TieredMode`) whatever
`memory.mode` says, with the mode's views of a user's memory at hand."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from brain.memory.brain_memory import BrainMemory
from brain.memory.core import Block
from brain.progress import Progress
from brain.runtime import Runtime
from roles.assistant import Assistant
from roles.memory_tools import MemoryTools
from roles.modes.tiered import DEFAULT_BLOCKS, TieredMode

__all__ = ["TieredAssistant"]


class TieredAssistant(Assistant):
    """An Assistant with MemGPT memory tiers (`blocks`: the core blocks' defaults; `shared_blocks`: label ->
    name of a scope shared with other agents)."""

    def __init__(
        self,
        runtime: Runtime,
        *,
        blocks: Sequence[Block] = DEFAULT_BLOCKS,
        shared_blocks: dict[str, str] | None = None,
        **options: Any,
    ) -> None:
        self.tiered = TieredMode(blocks=blocks, shared_blocks=shared_blocks)
        super().__init__(runtime, mode=self.tiered, **options)

    def scopes(self, user_id: str | bytes) -> dict[str, bytes]:
        return self.tiered.scopes(self.engine, user_id)

    def tools(self, user_id: str | bytes, chat_id: str | bytes) -> MemoryTools:
        return self.tiered.tools(self.engine, user_id, chat_id)

    async def core_blocks(self, user_id: str | bytes) -> list[Block]:
        return await self.tiered.core_blocks(self.engine, user_id)

    async def sync_recall(self, memory: BrainMemory, progress: Progress | None = None) -> int:
        return await self.tiered.sync_recall(self.engine, memory, progress)

    async def linked_turns(
        self,
        user_id: str | bytes,
        query: str,
        vector: Sequence[float] | None = None,
        chat_id: str | bytes | None = None,
    ) -> list[str]:
        return await self.tiered.linked_turns(self.engine, user_id, query, vector, chat_id)
