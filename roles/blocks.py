"""`BlocksAssistant`: an Assistant in block-memory mode (`roles.modes.BlocksMode`) whatever `memory.mode`
says."""

from __future__ import annotations

from typing import Any

from brain.memory.blocks import BlockMemory
from brain.runtime import Runtime
from roles.assistant import Assistant
from roles.modes.blocks import BlocksMode

__all__ = ["BlocksAssistant"]


class BlocksAssistant(Assistant):
    """An Assistant whose prompt is built by block memory (needs a backend: `runtime.tiers`)."""

    def __init__(self, runtime: Runtime, **options: Any) -> None:
        self.blocks_mode = BlocksMode(runtime)
        super().__init__(runtime, mode=self.blocks_mode, **options)

    def block_memory(self, user_id: str | bytes, chat_id: str | bytes) -> BlockMemory:
        """The chat's block memory (a cheap view; state is in the backend)."""
        return self.blocks_mode.block_memory(user_id, chat_id)
