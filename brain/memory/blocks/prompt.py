"""How block memory's prompt is put together: what the rendered blocks cost, where they go. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from brain.llm.protocol import ChatMessage
from brain.llm.tokens import Tokenizer
from brain.memory.blocks.budget import BlockText, RenderBlocks, message_tokens

__all__ = ["insert_memory", "inserted_tokens", "rendered_costs"]


def rendered_costs(
    texts: Sequence[BlockText], render: RenderBlocks, tokenizer: Tokenizer
) -> tuple[list[BlockText], int]:
    """Each block's cost as rendered (its item, header included) and the rendering's fixed framing
    (e.g. a standing instruction): rendered alone, a block costs framing + its own part; together,
    the framing counts once."""
    alone = [tokenizer.count(render([t])) for t in texts]
    framing = 0
    if len(texts) > 1:
        framing = max((sum(alone) - tokenizer.count(render(texts))) // (len(texts) - 1), 0)
    costs = [replace(t, tokens=max(cost - framing, 1)) for t, cost in zip(texts, alone, strict=True)]
    return costs, framing


def inserted_tokens(tokenizer: Tokenizer, before: list[ChatMessage], after: list[ChatMessage]) -> int:
    """Tokens the blocks' insertion added: the one message it changed or added, less the one it
    replaced (the rest is counted already, as stored)."""
    kept, old = {id(m) for m in after}, {id(m) for m in before}
    added = sum(message_tokens(tokenizer, m) for m in after if id(m) not in old)
    return added - sum(message_tokens(tokenizer, m) for m in before if id(m) not in kept)


def insert_memory(
    heads: list[ChatMessage], history: list[ChatMessage], memory: str, method: str
) -> list[ChatMessage]:
    """The prompt: `memory` (the rendered blocks) at the end of the first head (system) message, or before
    the newest user message's text when `method` is "user" and there is one; a system message of its own
    when there are no heads."""
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
