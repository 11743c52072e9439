"""Conformance suite of `ConversationStore.drop_text` (retention, `brain.memory.retention`): the oldest
turns lose their text, never past the summary, atomically and idempotently, and keep their place, id, role,
time, tokens and hidden flag, so seq numbers, idempotent appends, the window and exports still work. Needs
pytest-asyncio in auto mode."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from brain.errors import ConflictError
from brain.message import Message
from brain.storage.backend import Backend
from brain.storage.conversation import Conversation, WriteBatch, without_text
from brain.testing.conformance.base import BackendSuite

__all__ = ["TurnRetentionConformance"]

CONV = Conversation(user_id="ret", chat_id="c")


def turns(n: int) -> list[Message]:
    return [
        Message(
            id=f"m{i}",
            role="user" if i % 2 else "assistant",
            content=f"turn {i} says something 你好",
            sent_from="Ann" if i % 2 else "",
            cause_by="TalkAction",
            created_at=datetime(2025, 1, 1 + i % 28, 9, i % 60, tzinfo=UTC),
            metadata={"rewrite": f"secret {i}"},
        )
        for i in range(1, n + 1)
    ]


def batch(messages: list[Message]) -> WriteBatch:
    return WriteBatch(turns=tuple((m, 10 + i) for i, m in enumerate(messages)))


class TurnRetentionConformance(BackendSuite):
    """Subclass it in a test module and override the `backend` fixture (a `Backend` with no conversations
    yet, or a prefix no other test uses)."""

    async def test_drop_text_keeps_each_turns_record_but_its_text(self, backend: Backend) -> None:
        store, sent = backend.conversations, turns(10)
        await store.write(CONV, batch(sent))
        await store.hide_turns(CONV, [2])
        await store.commit_summary(CONV, summary="S", upto=8, expected_upto=0, tokens=100)
        assert await store.drop_text(CONV, 5) == 5
        read = await store.read_turns(CONV, 1, 20)
        assert [t.seq for t in read] == list(range(1, 11))
        assert [t.dropped for t in read] == [True] * 5 + [False] * 5
        assert [t.hidden for t in read] == [False, True] + [False] * 8
        assert [t.tokens for t in read] == [10 + i for i in range(10)]
        for turn, message in zip(read[:5], sent[:5], strict=True):
            assert turn.message == without_text(message)
            assert (turn.message.id, turn.message.role, turn.message.created_at) == (
                message.id,
                message.role,
                message.created_at,
            )
            assert turn.message.content == "" and turn.message.metadata == {}
        assert [t.message for t in read[5:]] == sent[5:]
        state = await store.load(CONV, window_turns=50, knowledge_items=0)
        assert state.meta.dropped_upto == 5 and state.meta.summary_upto == 8
        assert [t.seq for t in state.window] == [9, 10]

    async def test_drop_text_is_idempotent_and_moves_forward_only(self, backend: Backend) -> None:
        store = backend.conversations
        await store.write(CONV, batch(turns(10)))
        await store.commit_summary(CONV, summary="S", upto=9, expected_upto=0, tokens=0)
        assert await store.drop_text(CONV, 3) == 3
        version = (await store.load(CONV, window_turns=0, knowledge_items=0)).meta.version
        assert await store.drop_text(CONV, 3) == 0
        assert await store.drop_text(CONV, 2) == 0  # behind what was dropped: nothing comes back or goes
        assert (await store.load(CONV, window_turns=0, knowledge_items=0)).meta.version == version
        assert await store.drop_text(CONV, 7) == 4
        assert [t.dropped for t in await store.read_turns(CONV, 1, 10)] == [True] * 7 + [False] * 3

    async def test_dropped_turns_keep_their_ids_for_idempotent_appends(self, backend: Backend) -> None:
        store, sent = backend.conversations, turns(6)
        await store.write(CONV, batch(sent))
        await store.commit_summary(CONV, summary="S", upto=4, expected_upto=0, tokens=0)
        await store.drop_text(CONV, 4)
        assert [await store.seq_of(CONV, m.id) for m in sent] == [1, 2, 3, 4, 5, 6]
        again = await store.write(CONV, batch([*sent, Message(id="new", content="fresh")]))
        assert again.seqs == (1, 2, 3, 4, 5, 6, 7) and again.added == 1
        [first] = await store.read_turns(CONV, 1, 1)
        assert first.dropped and first.message.content == ""  # a retried append brings no text back

    async def test_drop_text_never_passes_the_summary(self, backend: Backend) -> None:
        store = backend.conversations
        with pytest.raises(ConflictError):
            await store.drop_text(CONV, 1)  # no chat
        await store.write(CONV, batch(turns(5)))
        with pytest.raises(ConflictError):
            await store.drop_text(CONV, 1)  # no summary yet
        await store.commit_summary(CONV, summary="S", upto=2, expected_upto=0, tokens=0)
        with pytest.raises(ConflictError):
            await store.drop_text(CONV, 3)
        assert not any(t.dropped for t in await store.read_turns(CONV, 1, 10))  # all or nothing
        assert await store.drop_text(CONV, 0) == 0
        assert await store.drop_text(CONV, 2) == 2

    async def test_export_import_keeps_dropped_turns_dropped(self, backend: Backend) -> None:
        from brain.memory.transfer import export_conversation, import_conversation, parse_export

        store = backend.conversations
        await store.write(CONV, batch(turns(6)))
        await store.commit_summary(CONV, summary="S", upto=4, expected_upto=0, tokens=0)
        await store.drop_text(CONV, 3)
        first = await export_conversation(store, CONV)
        assert [t.dropped for t in first.turns] == [True] * 3 + [False] * 3
        assert all(t.message.content == "" for t in first.turns[:3])
        await store.delete(CONV)
        await import_conversation(store, parse_export(first.model_dump_json()))
        assert await export_conversation(store, CONV) == first
