"""The memory tiers beyond the conversation, all in the same Redis: core memory blocks, each user's
archival memory and facts (with the queue feeding them), each conversation's recall memory (every past turn,
searchable). Namespaces come from `brain.keys`, so one tenant's index is never another's."""

from __future__ import annotations

from brain.errors import NotFoundError
from brain.keys import archival_base, legacy_recall_base, recall_base
from brain.llm.protocol import Embed, embed_one
from brain.llm.rerank import Rerank
from brain.memory.blocks.store import BlockScripts, BlockSession
from brain.memory.core import CoreMemory
from brain.memory.fact_queue import FactQueue
from brain.memory.facts import AuditEvent, FactStore
from brain.memory.graph import GraphStore
from brain.memory.procedures import ProcedureStore
from brain.search.analysis import Fusion
from brain.search.index import IndexScripts, SearchIndex
from brain.store.connection import RedisClient

__all__ = ["Tiers"]


class Tiers:
    """Core, archival and recall memory over one injected Redis client (the caller owns it). Archival and
    recall indexes are dated: each document is indexed (and embedded) with its day in words.

    `embed`, when set, gives vectors for hybrid search (the configured embedding model), fused as `fusion`
    says (the model's measured weight); `rerank`, when
    set, reorders the best `rerank_depth` hits of archival and recall searches (`SearchIndex`)."""

    def __init__(
        self,
        client: RedisClient,
        *,
        prefix: str = "brain",
        embed: Embed | None = None,
        rerank: Rerank | None = None,
        rerank_depth: int = 20,
        fusion: Fusion | None = None,
    ) -> None:
        self.client = client
        self.prefix = prefix
        self.embed = embed
        self.rerank, self.rerank_depth = rerank, rerank_depth
        # one set of scripts and vector snapshots for every index, fusing `embed`'s vectors as `fusion` says
        self.index_scripts = IndexScripts(client, fusion=fusion)
        self.core = CoreMemory(client, prefix=prefix)
        self.facts = FactStore(client, prefix=prefix, embed=embed, scripts=self.index_scripts)
        self.fact_queue = FactQueue(client, prefix=prefix)
        self.graph = GraphStore(client, prefix=prefix)
        self.procedures = ProcedureStore(client, prefix=prefix, embed=embed, scripts=self.index_scripts)
        self._block_scripts = BlockScripts(client)

    def archival(self, user_id: str | bytes) -> SearchIndex:
        """A user's archival memory (shared by all their chats)."""
        return SearchIndex(
            self.client,
            archival_base(self.prefix, user_id),
            scripts=self.index_scripts,
            dated=True,
            rerank=self.rerank,
            rerank_depth=self.rerank_depth,
        )

    def recall(self, user_id: str | bytes, chat_id: str | bytes) -> SearchIndex:
        """One conversation's recall memory."""
        return SearchIndex(
            self.client,
            recall_base(self.prefix, user_id, chat_id),
            scripts=self.index_scripts,
            dated=True,
            rerank=self.rerank,
            rerank_depth=self.rerank_depth,
        )

    def block_session(self, user_id: str | bytes, chat_id: str | bytes) -> BlockSession:
        """One conversation's block memory storage (`memory.mode: blocks`)."""
        return BlockSession(self.client, user_id, chat_id, prefix=self.prefix, scripts=self._block_scripts)

    def block_vectors(self, user_id: str | bytes, chat_id: str | bytes) -> SearchIndex:
        """The index of a conversation's flushed messages (the vector block's)."""
        base = self.block_session(user_id, chat_id).vectors_base
        return SearchIndex(self.client, base, scripts=self.index_scripts)

    def legacy_recall(self, user_id: str | bytes, chat_id: str | bytes) -> SearchIndex:
        """A chat's recall index as brain-assistant 0.1 named it (only erasure reads it)."""
        return SearchIndex(
            self.client,
            legacy_recall_base(self.prefix, user_id, chat_id),
            scripts=self.index_scripts,
            dated=True,
        )

    async def vector(self, text: str) -> list[float] | None:
        """The embedding of `text`, or None without an embedding model (or for blank text)."""
        return await embed_one(self.embed, text)

    async def rollback(self, user_id: str | bytes, event_id: str, *, actor: str = "") -> AuditEvent:
        """Undo one audited change of fact or graph memory (itself audited); the event undone.
        `NotFoundError` when the user has no such event."""
        event = next((e for e in await self.facts.history(user_id) if e.id == event_id), None)
        if event is None:
            raise NotFoundError(f"there is no memory event {event_id!r}")
        if event.subject == "relation":
            await self.graph.rollback(user_id, event, actor=actor)
        else:
            await self.facts.undo(user_id, event, actor=actor)
        return event
