"""Erasure that reaches every tier and stays final: a chat (turns, summary, knowledge, recall postings and
vectors, block memory) or a whole user (every chat, facts and graph, archival memory, core blocks, queued
work, API keys, their file in the cold archive), checked afterwards with a SCAN.

Each erasure first records itself (`ErasureStore.begin`): from then on every write carrying a ticket of
work that began earlier (a turn streaming its answer, a fact extraction waiting on its model, a document
being ingested) is dropped inside the store, so nothing erased comes back whichever finishes first. What
is left of the user is content-free: the erasure record (named by a digest) and, on Cluster, its copies
(`<namespace>:fence`, expiring). What no command reaches is named in the report (`unreachable`).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from brain.keys import chat_bases, fence_key, namespace_base, user_bases, user_scope
from brain.memory.tiers import Tiers
from brain.process_caches import forget_soon
from brain.storage.conversation import Conversation, MemoryStore

__all__ = ["UNREACHABLE", "ErasureReport", "erase_chat", "erase_user", "user_keys"]

UNREACHABLE = (
    "the append-only file keeps erased data until it is rewritten (`brain memory compact`, or the "
    "server's own BGREWRITEAOF)",
    "replicas and backups (RDB snapshots) taken before the erasure",
    "the server's SLOWLOG, when a write of the user's was slow, until it rotates",
)


class ErasureReport(BaseModel):
    """What an erasure removed, what of the user was still found afterwards (`remaining` keys), the
    content-free tombstones it left, and what it cannot reach."""

    model_config = ConfigDict(frozen=True)

    chats: int = 0  # conversations deleted
    recall_entries: int = 0  # turns removed from recall memory
    archival_passages: int = 0
    core_blocks: int = 0
    queued: int = 0  # entries of the fact queue naming the user or chat
    api_keys: int = 0  # the user's API keys deleted (a whole user's erasure)
    remaining: tuple[str, ...] = ()  # keys of the user a final scan still found (empty after erase_user)
    tombstones: int = 0  # content-free fences left (Cluster), besides the erasure record itself
    unreachable: tuple[str, ...] = ()

    def __add__(self, other: ErasureReport) -> ErasureReport:
        return ErasureReport(
            chats=self.chats + other.chats,
            recall_entries=self.recall_entries + other.recall_entries,
            archival_passages=self.archival_passages + other.archival_passages,
            core_blocks=self.core_blocks + other.core_blocks,
            queued=self.queued + other.queued,
            api_keys=self.api_keys + other.api_keys,
            remaining=self.remaining + other.remaining,
            tombstones=self.tombstones + other.tombstones,
            unreachable=tuple(dict.fromkeys(self.unreachable + other.unreachable)),
        )


async def erase_chat(store: MemoryStore, tiers: Tiers | None, conv: Conversation) -> ErasureReport:
    """Erase one conversation: its entries in the fact queue, its recall memory (postings, vectors,
    progress marker; also where an older version kept it) and its block memory (history, archive, block
    state, vectors). Work for the chat still running writes nothing afterwards. This process's caches of
    text are emptied (within `MIN_GAP` in a burst), whether it finished or failed (`brain.process_caches`)."""
    try:
        return await _erase_one_chat(store, tiers, conv)
    finally:
        forget_soon()


async def _erase_one_chat(store: MemoryStore, tiers: Tiers | None, conv: Conversation) -> ErasureReport:
    if tiers is None:
        return ErasureReport(chats=int(await store.delete(conv)))
    await tiers.present(conv.user_id)  # the chat's keys may be in the cold archive
    erasure = tiers.backend.erasure
    epoch = await erasure.begin(conv.user_id, [conv.chat_id])
    queued = await tiers.fact_queue.drop(conv.user_id, conv.chat_id)
    report = await _erase_chat(store, tiers, conv) + ErasureReport(queued=queued)
    bases = [*chat_bases(tiers.prefix, conv.user_id, conv.chat_id), *user_bases(tiers.prefix, conv.user_id)]
    fences = await erasure.fence(conv.user_id, bases, [conv.chat_id], epoch)
    return report + ErasureReport(tombstones=fences, unreachable=UNREACHABLE)


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
    """Erase everything of `user_id` in every tier, their API keys included; then scan for anything of
    theirs still there besides the tombstones (`remaining`: should be empty). Work for the user still
    running writes nothing afterwards. This process's caches of text are emptied (within `MIN_GAP` in a
    burst), whether it finished or failed (`brain.process_caches`)."""
    try:
        return await _erase_whole_user(store, tiers, user_id)
    finally:
        forget_soon()


async def _erase_whole_user(store: MemoryStore, tiers: Tiers | None, user_id: str | bytes) -> ErasureReport:
    if tiers is None:
        report = ErasureReport()
        for chat in await store.list_chats(user_id):
            report += await _erase_chat(store, tiers, Conversation(user_id, chat))
        left = await store.list_chats(user_id)
        return report + ErasureReport(remaining=tuple(f"chat {c!r}" for c in left))
    backend = tiers.backend
    epoch = await backend.erasure.begin(user_id)
    if tiers.cold is not None:  # the cold archive's file and marker
        await tiers.cold.forget(user_id)
    found = await user_keys(tiers, user_id)
    chats = await store.list_chats(user_id)
    report = ErasureReport(queued=await tiers.fact_queue.drop(user_id))
    for chat in chats:
        report += await _erase_chat(store, tiers, Conversation(user_id, chat))
    report += ErasureReport(
        archival_passages=await tiers.archival(user_id).drop(),
        core_blocks=await tiers.core.drop(user_scope(user_id)),
        api_keys=await backend.api_keys.forget(user_id) if isinstance(user_id, str) else 0,
    )
    # e.g. the recall memory of a chat deleted earlier alone, facts, graph, usage, tenant block copies
    await backend.purge(await user_keys(tiers, user_id))
    bases = {namespace_base(k) for k in found} | set(user_bases(tiers.prefix, user_id))
    for chat in chats:
        bases.update(chat_bases(tiers.prefix, user_id, chat))
    fences = await backend.erasure.fence(user_id, sorted(bases), None, epoch)
    return report + ErasureReport(
        remaining=tuple(await user_keys(tiers, user_id)), tombstones=fences, unreachable=UNREACHABLE
    )


async def user_keys(tiers: Tiers, user_id: str | bytes) -> list[str]:
    """Everything of `user_id` still stored but the content-free fences (a full scan: for erasure and
    audits, not hot paths)."""
    return _without_fences(await tiers.backend.user_leftovers(user_id))


def _without_fences(names: Sequence[str]) -> list[str]:
    return [n for n in names if n != fence_key(namespace_base(n))]
