"""Block memory: LlamaIndex-style token-budgeted memory blocks, persistent in Redis."""

from brain.memory.blocks.base import MemoryBlock, StaticBlock, VectorBlock
from brain.memory.blocks.memory import BlockMemory
from brain.memory.blocks.store import BlockScripts, BlockSession, Record

__all__ = [
    "BlockMemory",
    "BlockScripts",
    "BlockSession",
    "MemoryBlock",
    "Record",
    "StaticBlock",
    "VectorBlock",
]
