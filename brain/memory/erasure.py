"""Erasure that reaches every tier: a chat (turns, summary, knowledge, recall postings and vectors) or a
whole user (every chat, archival memory, the user's core blocks), checked afterwards with a SCAN."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from brain.keys import user_scope
from brain.memory.tiers import Tiers
from brain.storage.conversation import Conversation, MemoryStore

__all__ = ["ErasureReport", "erase_chat", "erase_user", "user_keys"]


class ErasureReport(BaseModel):
    """What an erasure removed, and what of the user was still found afterwards (`remaining` keys)."""

    model_config = ConfigDict(frozen=True)

    chats: int = 0  # conversations deleted
    recall_entries: int = 0  # turns removed from recall memory
    archival_passages: int = 0
    core_blocks: int = 0
    queued: int = 0  # entries of the fact queue naming the user or chat
    remaining: tuple[str, ...] = ()  # keys of the user a final scan still found (empty after erase_user)

    def __add__(self, other: ErasureReport) -> ErasureReport:
        return ErasureReport(
            chats=self.chats + other.chats,
            recall_entries=self.recall_entries + other.recall_entries,
            archival_passages=self.archival_passages + other.archival_passages,
            core_blocks=self.core_blocks + other.core_blocks,
            queued=self.queued + other.queued,
            remaining=self.remaining + other.remaining,
        )


async def erase_chat(store: MemoryStore, tiers: Tiers | None, conv: Conversation) -> ErasureReport:
    """Delete one conversation, its entries in the fact queue, its recall memory (postings, vectors,
    progress marker; also where an older version kept it) and its block memory (history, archive, block
    state, vectors)."""
    queued = await tiers.fact_queue.drop(conv.user_id, conv.chat_id) if tiers is not None else 0
    return await _erase_chat(store, tiers, conv) + ErasureReport(queued=queued)


async def _erase_chat(store: MemoryStore, tiers: Tiers | None, conv: Conversation) -> ErasureReport:
    """`erase_chat` but for the fact queue (which `erase_user` reads once for every chat)."""
    recall = 0
    if tiers is not None:
        recall = await tiers.recall(conv.user_id, conv.chat_id).drop()
        recall += await tiers.legacy_recall(conv.user_id, conv.chat_id).drop()
        recall += await tiers.block_vectors(conv.user_id, conv.chat_id).drop()
        recall += await tiers.block_session(conv.user_id, conv.chat_id).drop()
    existed = await store.delete(conv)
    return ErasureReport(chats=int(existed), recall_entries=recall)


async def erase_user(store: MemoryStore, tiers: Tiers | None, user_id: str | bytes) -> ErasureReport:
    """Delete everything of `user_id` in every tier, then scan for anything of theirs still there (a key
    written meanwhile by a concurrent turn shows up in `remaining`)."""
    report = ErasureReport()
    for chat in await store.list_chats(user_id):
        report += await _erase_chat(store, tiers, Conversation(user_id, chat))
    if tiers is None:
        left = await store.list_chats(user_id)
        return report + ErasureReport(remaining=tuple(f"chat {c!r}" for c in left))
    report += ErasureReport(
        archival_passages=await tiers.archival(user_id).drop(),
        core_blocks=await tiers.core.drop(user_scope(user_id)),
        queued=await tiers.fact_queue.drop(user_id),  # one read of the queue for every chat
    )
    # e.g. the recall memory of a chat deleted earlier alone, facts, graph, usage
    await tiers.backend.purge(await user_keys(tiers, user_id))
    return report + ErasureReport(remaining=tuple(await user_keys(tiers, user_id)))


async def user_keys(tiers: Tiers, user_id: str | bytes) -> list[str]:
    """Everything of `user_id` still stored (a full scan: for erasure and audits, not hot paths)."""
    return await tiers.backend.user_leftovers(user_id)
