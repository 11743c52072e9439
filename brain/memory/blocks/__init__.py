"""Block memory: LlamaIndex-style token-budgeted memory blocks, persistent in the backend."""

from brain.memory.blocks.base import MemoryBlock, StaticBlock, VectorBlock
from brain.memory.blocks.memory import BlockMemory
from brain.storage.blocks import BlockSessionStore, Record

__all__ = [
    "BlockMemory",
    "BlockSessionStore",
    "MemoryBlock",
    "Record",
    "StaticBlock",
    "VectorBlock",
]
