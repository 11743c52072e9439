"""The memory tiers beyond the conversation, all in one backend: core memory blocks, each user's archival
memory and facts (with the queue feeding them) and graph, each conversation's recall memory (every past
turn, searchable), agents' procedures. Namespaces come from `brain.keys`, so one tenant's index is never
another's."""

from __future__ import annotations

from typing import Protocol

from brain.errors import NotFoundError
from brain.keys import archival_base, legacy_recall_base, recall_base
from brain.llm.protocol import Embed, embed_one
from brain.llm.rerank import Rerank
from brain.memory.facts import AuditEvent, FactMemory, trimmed_event
from brain.memory.graph import GraphMemory
from brain.memory.procedures import Procedures
from brain.memory.recall import TurnTexts
from brain.search.analysis import Fusion
from brain.search.index import SearchIndex
from brain.search.storage import TextSource
from brain.storage.backend import Backend
from brain.storage.blocks import BlockSessionStore, CoreBlockStore
from brain.storage.conversation import Conversation, ConversationStore
from brain.storage.queue import FactQueue

__all__ = ["ColdArchive", "Tiers"]


class ColdArchive(Protocol):
    """A backend's archive of cold users (`brain.backends.redis.archive.UserArchive`)."""

    async def present(self, user_id: str | bytes) -> bool: ...

    async def forget(self, user_id: str | bytes) -> bool: ...


class Tiers:
    """Core, archival and recall memory, facts, graph and procedures over one injected backend (the caller
    owns it). Archival and recall indexes are dated: each document is indexed (and embedded) with its day
    in words.

    `embed`, when set, gives vectors for hybrid search (the configured embedding model), fused as `fusion`
    says (the model's measured weight); `rerank`, when set, reorders the best `rerank_depth` hits of
    archival and recall searches (`SearchIndex`)."""

    def __init__(
        self,
        backend: Backend,
        *,
        embed: Embed | None = None,
        rerank: Rerank | None = None,
        rerank_depth: int = 20,
        fusion: Fusion | None = None,
        conversations: ConversationStore | None = None,
    ) -> None:
        self.backend = backend
        self.conversations = conversations or backend.conversations  # where recall reads its turns
        self.prefix = backend.prefix
        self.embed = embed
        self.fusion = fusion or Fusion()
        self.rerank, self.rerank_depth = rerank, rerank_depth
        self.core: CoreBlockStore = backend.core
        self.facts = FactMemory(backend.facts, self.index, prefix=self.prefix, embed=embed)
        self.fact_queue: FactQueue = backend.queue
        self.graph = GraphMemory(backend.graph)
        self.procedures = Procedures(self.index, prefix=self.prefix, embed=embed)
        self.cold: ColdArchive | None = getattr(backend, "archive", None)

    async def present(self, user_id: str | bytes) -> None:
        """Bring the user's memory back from the cold archive when it is there (one round trip when it is
        not). Every way into a user's memory calls this first (a turn, a chat operation, an HTTP or MCP
        request, the fact worker); `StoreError` when it cannot: never an empty memory."""
        if self.cold is not None:
            await self.cold.present(user_id)

    def index(
        self,
        base: str,
        *,
        dated: bool = False,
        turns: bool = False,
        reranked: bool = False,
        texts: TextSource | None = None,
    ) -> SearchIndex:
        """The search index of namespace `base`, fusing this backend's vectors as `fusion` says; its
        documents' texts kept in `texts` when given."""
        return SearchIndex(
            self.backend.index(base),
            texts=texts,
            dated=dated,
            turns=turns,
            fusion=self.fusion,
            rerank=self.rerank if reranked else None,
            rerank_depth=self.rerank_depth,
        )

    def archival(self, user_id: str | bytes) -> SearchIndex:
        """A user's archival memory (shared by all their chats)."""
        return self.index(archival_base(self.prefix, user_id), dated=True, reranked=True)

    def recall(self, user_id: str | bytes, chat_id: str | bytes) -> SearchIndex:
        """One conversation's recall memory (its documents' texts are the turns')."""
        texts = TurnTexts(self.conversations, Conversation(user_id=user_id, chat_id=chat_id))
        base = recall_base(self.prefix, user_id, chat_id)
        return self.index(base, dated=True, turns=True, reranked=True, texts=texts)

    def block_session(self, user_id: str | bytes, chat_id: str | bytes) -> BlockSessionStore:
        """One conversation's block memory storage (`memory.mode: blocks`)."""
        return self.backend.block_session(user_id, chat_id)

    def block_vectors(self, user_id: str | bytes, chat_id: str | bytes) -> SearchIndex:
        """The index of a conversation's flushed messages (the vector block's)."""
        return self.index(self.block_session(user_id, chat_id).vectors_base)

    def legacy_recall(self, user_id: str | bytes, chat_id: str | bytes) -> SearchIndex:
        """A chat's recall index as brain-assistant 0.1 named it (only erasure reads it)."""
        return self.index(legacy_recall_base(self.prefix, user_id, chat_id), dated=True)

    async def vector(self, text: str) -> list[float] | None:
        """The embedding of `text`, or None without an embedding model (or for blank text)."""
        return await embed_one(self.embed, text)

    async def rollback(self, user_id: str | bytes, event_id: str, *, actor: str = "") -> AuditEvent:
        """Undo one audited change of fact or graph memory (itself audited); the event undone.
        `NotFoundError` when the user has no such event."""
        events = await self.facts.history(user_id)
        event = next((e for e in events if e.id == event_id), None)
        if event is None:
            raise NotFoundError(trimmed_event(event_id, events) or f"there is no memory event {event_id!r}")
        if event.subject == "relation":
            await self.graph.rollback(user_id, event, actor=actor)
        else:
            await self.facts.undo(user_id, event, actor=actor)
        return event
