"""`ErasureStoreConformance`: the erasure fence every backend keeps (`brain.storage.fence`), as tests: a
write under a ticket older than an erasure of its user or chat is dropped whole, by every store."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from brain.errors import ErasedError
from brain.keys import archival_base, chat_bases, recall_base, user_bases, user_scope
from brain.llm.protocol import ChatMessage
from brain.llm.usage import Usage
from brain.message import Message
from brain.storage.backend import Backend
from brain.storage.blocks import Block, Record
from brain.storage.conversation import Conversation, WriteBatch
from brain.storage.facts import AuditEntry, Fact, fact_hash
from brain.storage.fence import Ticket, holding
from brain.storage.index import IndexedDoc, IndexEntry
from brain.testing.conformance.base import BackendSuite

__all__ = ["WRITES", "ErasureStoreConformance"]

Write = Callable[[Backend, str, str], Awaitable[object]]


def _fact(text: str) -> Fact:
    return Fact(text=text, hash=fact_hash(text))


def _entry(base_text: str) -> list[IndexEntry]:
    return [IndexEntry(doc=IndexedDoc(id="d1", text=base_text), counts={"secret": 1})]


WRITES: dict[str, Write] = {
    "conversation write": lambda b, u, c: b.conversations.write(
        Conversation(u, c), WriteBatch(turns=((Message(content="secret"), 1),))
    ),
    "usage": lambda b, u, c: b.usage.add(u, c, "m", Usage(prompt_tokens=1, completion_tokens=1)),
    "fact": lambda b, u, c: b.facts.add(u, _fact("secret"), AuditEntry(event="ADD")),
    "fact alias": lambda b, u, c: b.facts.alias(u, fact_hash("secret"), "f1"),
    "fact batch": lambda b, u, c: b.facts.set_batch_facts(u, "batch", ["f1"]),
    "fact progress": lambda b, u, c: b.facts.set_progress(u, c, 3),
    "graph batch": lambda b, u, c: b.graph.set_applied(u, "batch"),
    "recall index": lambda b, u, c: b.index(recall_base(b.prefix, u, c)).add(_entry("secret"), "1"),
    "archival source": lambda b, u, c: b.index(archival_base(b.prefix, u)).set_source("s", {"a": 1}),
    "core block": lambda b, u, c: b.core.create(user_scope(u), Block(label="human", value="secret")),
    "block history": lambda b, u, c: b.block_session(u, c).append(
        [Record(message=ChatMessage(role="user", content="secret"), tokens=1)]
    ),
    "block state": lambda b, u, c: b.block_session(u, c).set_state("field", 1),
}


class ErasureStoreConformance(BackendSuite):
    """Every implementation of the erasure record and fence passes these."""

    async def _erase(self, backend: Backend, user: str, chats: list[str] | None) -> int:
        epoch = await backend.erasure.begin(user, chats)
        bases = [*user_bases(backend.prefix, user)]
        for chat in chats or ["c"]:
            bases += chat_bases(backend.prefix, user, chat)
        await backend.erasure.fence(user, bases, chats, epoch)
        return epoch

    async def _stored(self, backend: Backend, user: str) -> list[str]:
        return [n for n in await backend.user_leftovers(user) if not n.endswith(":fence")]

    async def test_a_ticket_counts_the_users_erasures(self, backend: Backend) -> None:
        assert (await backend.erasure.ticket("u")).epoch == 0
        assert await self._erase(backend, "u", None) == 1
        assert await self._erase(backend, "u", ["c"]) == 2
        assert (await backend.erasure.ticket("u", "c")) == Ticket("u", 2, "c")
        assert (await backend.erasure.ticket("v")).epoch == 0  # users apart

    @pytest.mark.parametrize("name", sorted(WRITES))
    async def test_a_write_begun_before_the_users_erasure_is_dropped(
        self, backend: Backend, name: str
    ) -> None:
        stale = await backend.erasure.ticket("u", "c")
        await self._erase(backend, "u", None)
        with holding(stale), pytest.raises(ErasedError):
            await WRITES[name](backend, "u", "c")
        assert await self._stored(backend, "u") == []  # nothing of it was written
        with holding(await backend.erasure.ticket("u", "c")):  # work begun after the erasure writes
            await WRITES[name](backend, "u", "c")
        assert await self._stored(backend, "u") != []

    @pytest.mark.parametrize("name", sorted(WRITES))
    async def test_a_chats_erasure_drops_that_chats_work_only(self, backend: Backend, name: str) -> None:
        before = await backend.erasure.ticket("u", "c")
        other = await backend.erasure.ticket("u", "d")
        await self._erase(backend, "u", ["c"])
        with holding(before), pytest.raises(ErasedError):
            await WRITES[name](backend, "u", "c")
        with holding(other):  # the same user's work in another chat goes on
            await WRITES[name](backend, "u", "d")

    async def test_writes_without_a_ticket_are_not_checked(self, backend: Backend) -> None:
        await self._erase(backend, "u", None)
        for write in WRITES.values():
            await write(backend, "u", "c")
        assert await self._stored(backend, "u") != []
