"""Core memory as the prompt shows it: blocks in a stable order (`render_blocks`). The blocks are stored by
a `brain.storage.CoreBlockStore`."""

from __future__ import annotations

from collections.abc import Sequence

from brain.errors import InputError
from brain.storage.blocks import Block, BlockLimitError, CoreBlockStore

__all__ = ["Block", "BlockLimitError", "ensure_blocks", "render_blocks"]


def render_blocks(blocks: Sequence[Block]) -> str:
    """Blocks in a stable order (persona, human, then by label), no timestamps or counters. Pure."""
    order = {"persona": 0, "human": 1}
    parts = []
    for block in sorted(blocks, key=lambda b: (order.get(b.label, 2), b.label)):
        head = f"<{block.label}>" + (f" ({block.description})" if block.description else "")
        parts.append(f"{head}\n{block.value}\n</{block.label}>")
    return "Core memory (always in view; edit with the core_memory tools):\n" + "\n".join(parts)


async def ensure_blocks(store: CoreBlockStore, scope: str | bytes, blocks: Sequence[Block]) -> list[Block]:
    """Create the blocks of `scope` that do not exist yet (a concurrent creation is no error); every block
    of the scope."""
    existing = {b.label for b in await store.list(scope)}
    for block in blocks:
        if block.label not in existing:
            try:
                await store.create(scope, block)
            except InputError as exc:
                if "exists" not in str(exc):
                    raise
    return await store.list(scope)
