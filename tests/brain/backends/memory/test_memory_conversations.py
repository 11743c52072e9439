"""The in-memory backend passes the conversation, retention and procedure suites."""

from __future__ import annotations

import pytest

from brain.backends.memory import MemoryBackend
from brain.memory.tiers import Tiers
from brain.storage import ProcedureStore
from brain.testing.conformance.conversation import ConversationStoreConformance
from brain.testing.conformance.procedures import ProcedureStoreConformance
from brain.testing.conformance.retention import TurnRetentionConformance


class TestMemoryConversations(ConversationStoreConformance):
    @pytest.fixture
    def backend(self) -> MemoryBackend:
        return MemoryBackend(prefix="t")


class TestMemoryRetention(TurnRetentionConformance):
    @pytest.fixture
    def backend(self) -> MemoryBackend:
        return MemoryBackend(prefix="t")


class TestMemoryProcedures(ProcedureStoreConformance):
    @pytest.fixture
    def procedures(self) -> ProcedureStore:
        return Tiers(MemoryBackend(prefix="t")).procedures


async def test_a_users_conversations_are_found_and_erased_by_their_patterns() -> None:
    from brain.storage.conversation import Conversation, WriteBatch

    backend = MemoryBackend(prefix="t")
    await backend.conversations.write(
        Conversation("ann", "c1"), WriteBatch(set_last_talk=True, last_talk="hi")
    )
    await backend.conversations.write(
        Conversation("bob", "c1"), WriteBatch(set_last_talk=True, last_talk="hi")
    )
    left = await backend.user_leftovers("ann")
    assert len(left) == 1 and await backend.purge(left) == 1
    assert await backend.user_leftovers("ann") == [] and await backend.conversations.list_chats("bob") == [
        "c1"
    ]
