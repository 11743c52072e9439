"""Memory: BrainMemory (one conversation), core memory blocks, context fitting, export and import."""

from brain.memory.brain_memory import BrainMemory
from brain.memory.core import Block, BlockLimitError, ensure_blocks

__all__ = ["Block", "BlockLimitError", "BrainMemory", "ensure_blocks"]
