"""Memory blocks: what a block memory adds to the prompt besides the history. A block object is shared by
every session (it holds no session state); each call gets the session to read and write.

Built here: static text and vector recall of flushed messages. Blocks that need an LLM task (fact
extraction) live in `actions`.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence

from brain.errors import ConfigError
from brain.llm.protocol import ChatMessage, Embed, embed_one
from brain.llm.tokens import Tokenizer
from brain.search.index import IndexedDoc, SearchIndex
from brain.storage.blocks import BlockSessionStore, Record

__all__ = ["MemoryBlock", "StaticBlock", "VectorBlock"]

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")


class MemoryBlock(ABC):
    """A named part of the prompt. `priority` 0 is never cut or dropped; others are cut, then dropped, in
    ascending priority when the prompt is over `token_limit`. `accept_short_term_memory`: whether the block
    reads the messages flushed out of the history. `source` and `lower_trust` say where its content comes
    from (lower: assistant or tool output) for the prompt's memory section."""

    accept_short_term_memory = True
    source = ""
    lower_trust = False

    def __init__(self, name: str, priority: int) -> None:
        if not _NAME.match(name):
            raise ConfigError(f"block name {name!r}: letters, digits and _, starting with a letter")
        if priority < 0:
            raise ConfigError(f"block {name!r}: priority must be 0 (never cut) or more")
        self.name, self.priority = name, priority

    @abstractmethod
    async def aget(
        self, session: BlockSessionStore, messages: Sequence[ChatMessage], input: str | None = None
    ) -> str:
        """The block's content for a prompt whose history is `messages` (and new `input`)."""

    async def aput(self, session: BlockSessionStore, records: Sequence[Record]) -> None:  # noqa: B027
        """Take in messages flushed out of the history (in order; each batch once)."""

    def truncate(self, content: str, tokens: int) -> str | None:
        """`content` at least `tokens` tokens shorter, or None to leave the block out."""
        return None

    async def drop(self, session: BlockSessionStore) -> int:
        """Delete what the block keeps for `session` outside its state (an index); how many items."""
        return 0


class StaticBlock(MemoryBlock):
    """Fixed text (a persona, a policy); by default priority 0, always in the prompt."""

    accept_short_term_memory = False
    source = "configuration"

    def __init__(self, content: str, *, name: str = "static", priority: int = 0) -> None:
        super().__init__(name, priority)
        self.content = content

    async def aget(
        self, session: BlockSessionStore, messages: Sequence[ChatMessage], input: str | None = None
    ) -> str:
        return self.content


class VectorBlock(MemoryBlock):
    """Recall of flushed messages: each flushed batch is one searchable passage (BM25, plus vectors with an
    embedding model) in the session's own index; the query is the newest messages and the input."""

    source = "user turns, assistant turns and tool results, as they were said"
    lower_trust = True

    def __init__(
        self,
        index: Callable[[str], SearchIndex],
        tokenizer: Tokenizer,
        *,
        embed: Embed | None = None,
        name: str = "retrieved",
        priority: int = 2,
        top_k: int = 2,
        context_window: int = 5,
    ) -> None:
        super().__init__(name, priority)
        self._index, self.tokenizer, self.embed = index, tokenizer, embed
        self.top_k, self.context_window = top_k, context_window

    def index(self, session: BlockSessionStore) -> SearchIndex:
        return self._index(session.vectors_base)

    async def aput(self, session: BlockSessionStore, records: Sequence[Record]) -> None:
        lines = [f"{r.message.role}: {r.message.content}" for r in records if r.message.content]
        if not lines:
            return
        text = "\n".join(lines)
        await self.index(session).add(
            IndexedDoc(id=records[0].id, text=text, source="flushed"), await embed_one(self.embed, text)
        )

    async def aget(
        self, session: BlockSessionStore, messages: Sequence[ChatMessage], input: str | None = None
    ) -> str:
        recent = [m.content or "" for m in messages[-self.context_window :]] + [input or ""]
        query = " ".join(t for t in recent if t)
        if not query.strip():
            return ""
        hits = await self.index(session).related(
            query, limit=self.top_k, vector=await embed_one(self.embed, query)
        )
        return "\n---\n".join(h.doc.text for h in hits)

    def truncate(self, content: str, tokens: int) -> str | None:
        keep = self.tokenizer.count(content) - tokens
        return self.tokenizer.truncate(content, keep) if keep > 20 else None

    async def drop(self, session: BlockSessionStore) -> int:
        return await self.index(session).drop()
