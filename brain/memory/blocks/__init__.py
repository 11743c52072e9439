"""Block memory: LlamaIndex-style token-budgeted memory blocks, persistent in the backend."""

from brain.memory.blocks.base import MemoryBlock, StaticBlock, VectorBlock
from brain.memory.blocks.memory import BlockMemory, BlockRuntime
from brain.storage.blocks import BlockSessionStore, Record

__all__ = [
    "BlockMemory",
    "BlockRuntime",
    "BlockSessionStore",
    "MemoryBlock",
    "Record",
    "StaticBlock",
    "VectorBlock",
]
