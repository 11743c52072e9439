"""Token budgets of block memory: what a message costs, what the FIFO flushes, what blocks give up. Pure.

Everything a model reads counts: text, tool calls (names and arguments), tool results, reasoning. The FIFO
never leaves a history that starts with an assistant or tool message, and never flushes system messages. A
message over the history's budget on its own never stays in it: it goes to the blocks with what came before.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from brain.llm.protocol import ChatMessage
from brain.llm.tokens import Tokenizer

__all__ = [
    "BlockText",
    "Cut",
    "RenderBlocks",
    "fit_blocks",
    "flush_count",
    "message_tokens",
    "oversize_count",
]

_PER_MESSAGE = 4
_PER_CALL = 8  # the framing of one tool call (id, type, name) besides its arguments


def message_tokens(tokenizer: Tokenizer, message: ChatMessage, reasoning: str = "") -> int:
    """Prompt tokens of one message, tool calls and `reasoning` included (never 0 for a tool call)."""
    tokens = _PER_MESSAGE + tokenizer.count(message.content or "") + tokenizer.count(reasoning)
    for call in message.tool_calls:
        tokens += _PER_CALL + tokenizer.count(call.name) + tokenizer.count(call.arguments)
    if message.tool_call_id:
        tokens += tokenizer.count(message.tool_call_id)
    return tokens


def flush_count(roles: Sequence[str], tokens: Sequence[int], *, threshold: int, flush_size: int) -> int:
    """How many of the oldest active messages to flush: none while the history fits `threshold` tokens;
    else at least `flush_size` tokens' worth, then on until what stays starts with a user message. When
    nothing would stay, the newest complete exchange (from its user message on) is kept."""
    total = sum(tokens)
    if total <= threshold or not roles:
        return 0
    count, flushed = 0, 0
    while count < len(roles) and (flushed < flush_size or total - flushed > threshold):
        flushed += tokens[count]
        count += 1
    while count < len(roles) and roles[count] != "user":
        count += 1
    if count >= len(roles):  # keep the newest exchange that starts with the user
        users = [i for i, role in enumerate(roles) if role == "user"]
        count = users[-1] if users else len(roles) - 1
    return count


def oversize_count(roles: Sequence[str], tokens: Sequence[int], *, threshold: int) -> int:
    """How many of the oldest active messages to flush so that no message over `threshold` tokens on its own
    stays: through the newest such message, then on until what stays starts with a user message (0 when
    there is none; everything when no user message follows it)."""
    over = [i for i, cost in enumerate(tokens) if cost > threshold]
    if not over:
        return 0
    count = over[-1] + 1
    while count < len(roles) and roles[count] != "user":
        count += 1
    return count


Cut = Callable[[str, int], "str | None"]
"""A block's truncation: its content with at least N tokens fewer, or None to give the block up."""


@dataclass(frozen=True)
class BlockText:
    """A block's rendered content, its priority and cost, how it can be cut down, and its provenance
    (`source`; `lower_trust`: derived from assistant or tool output), for the renderer."""

    name: str
    priority: int
    content: str
    tokens: int
    cut: Cut | None = None
    source: str = ""
    lower_trust: bool = False


RenderBlocks = Callable[[Sequence[BlockText]], str]
"""How the blocks that fit become prompt text ("" for none): the caller's renderer (`actions`)."""


def fit_blocks(
    blocks: Sequence[BlockText], history_tokens: int, limit: int, tokenizer: Tokenizer
) -> list[BlockText]:
    """The blocks that fit `limit` tokens beside the history: blocks are cut, then given up, in ascending
    priority (1 first); priority 0 is never touched. Order is kept."""
    kept = list(blocks)
    order = sorted((b for b in blocks if b.priority != 0), key=lambda b: b.priority)

    def over() -> int:
        return history_tokens + sum(b.tokens for b in kept) - limit

    for block in order:  # first pass: cut
        excess = over()
        if excess <= 0:
            return kept
        if block.cut is not None:
            shorter = block.cut(block.content, excess)
            index = kept.index(block)
            if shorter:
                saved = tokenizer.count(block.content) - tokenizer.count(shorter)
                kept[index] = replace(block, content=shorter, tokens=block.tokens - saved)
            else:
                del kept[index]
    for block in order:  # second pass: give up whole blocks
        if over() <= 0:
            break
        kept = [b for b in kept if b.name != block.name]
    return kept
