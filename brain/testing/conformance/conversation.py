"""Conformance suite of `ConversationStore` (`brain.storage.conversation`): idempotent appends, windows,
summaries that never destroy turns, conflicts, pending text, knowledge, hidden turns, hostile ids, export
and import. Needs pytest-asyncio in auto mode."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from brain.errors import ConflictError
from brain.llm.usage import Usage
from brain.message import Message
from brain.storage.backend import Backend
from brain.storage.conversation import Conversation, WriteBatch
from brain.storage.usage import ModelUsage
from brain.testing.conformance.base import BackendSuite

__all__ = ["ConversationStoreConformance"]

CONV = Conversation(user_id="alice", chat_id="c1")


def msgs(n: int, start: int = 0, prefix: str = "m") -> list[Message]:
    return [
        Message(id=f"{prefix}{i}", role="user" if i % 2 == 0 else "assistant", content=f"turn {i}")
        for i in range(start, start + n)
    ]


def batch(messages: list[Message], **kw: object) -> WriteBatch:
    return WriteBatch.model_validate({"turns": tuple((m, 10) for m in messages), **kw})


HOSTILE = [
    "*",
    ":",
    "a:b",
    "{}",
    "{x}",
    "}{",
    "\n",
    "a\nb",
    "x" * 10_000,
    "é",
    "🚀",
    " ",
    "?[]",
    "\\",
    "%s",
    "b",
]


class ConversationStoreConformance(BackendSuite):
    """Subclass it in a test module and override the `backend` fixture: a `Backend` with no conversations
    yet (a fresh one, or a prefix no other test uses)."""

    async def test_missing_conversation_loads_empty(self, backend: Backend) -> None:
        store = backend.conversations
        state = await store.load(CONV, window_turns=10, knowledge_items=10)
        assert not state.exists and state.window == () and state.meta.summary == ""
        assert await store.read_turns(CONV, 1, 10) == []

    async def test_write_assigns_sequence_and_loads_window(self, backend: Backend) -> None:
        store = backend.conversations
        result = await store.write(CONV, batch(msgs(5)))
        assert result.seqs == (1, 2, 3, 4, 5) and result.added == 5
        assert (result.turn_count, result.window_tokens) == (5, 50)
        state = await store.load(CONV, window_turns=3, knowledge_items=10)
        assert state.exists and [t.seq for t in state.window] == [3, 4, 5]
        assert [t.message.id for t in state.window] == ["m2", "m3", "m4"]
        assert state.meta.turn_count == 5 and state.meta.window_tokens == 50
        assert state.meta.version == result.version

    async def test_appends_are_idempotent_by_id(self, backend: Backend) -> None:
        store = backend.conversations
        await store.write(CONV, batch(msgs(3)))
        again = await store.write(CONV, batch(msgs(4)))  # m0..m2 again, m3 new
        assert again.seqs == (1, 2, 3, 4) and again.added == 1 and again.window_tokens == 40
        turns = await store.read_turns(CONV, 1, 100)
        assert [t.message.id for t in turns] == ["m0", "m1", "m2", "m3"]

    async def test_a_turn_is_found_by_its_message_id(self, backend: Backend) -> None:
        store = backend.conversations
        assert await store.seq_of(CONV, "m1") is None
        await store.write(CONV, batch(msgs(3)))
        await store.write(CONV, batch(msgs(2, start=1)))  # m1 again: still where it was first stored
        assert [await store.seq_of(CONV, f"m{i}") for i in range(4)] == [1, 2, 3, None]
        assert await store.seq_of(Conversation("alice", "c2"), "m1") is None  # per chat
        await store.write(CONV, batch([], knowledge=(Message(id="k9", content="a note"),)))
        assert await store.seq_of(CONV, "k9") is None  # knowledge is not a turn

    async def test_message_round_trip_is_exact(self, backend: Backend) -> None:
        store = backend.conversations
        original = Message(
            id="x1",
            role="assistant",
            content="héllo\n\x00 wörld 🚀",
            sent_from="Bob",
            send_to=("a", "b"),
            cause_by="TalkAction",
            created_at=datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC),
            metadata={"k": [1, 2.5, None, {"n": True}]},
        )
        await store.write(CONV, batch([original]))
        [turn] = await store.read_turns(CONV, 1, 1)
        assert turn.message == original

    async def test_summary_commit_moves_window_and_keeps_raw_turns(self, backend: Backend) -> None:
        store = backend.conversations
        await store.write(CONV, batch(msgs(10)))
        version = await store.commit_summary(CONV, summary="S1", upto=6, expected_upto=0, tokens=60)
        state = await store.load(CONV, window_turns=100, knowledge_items=0)
        assert state.meta.summary == "S1" and state.meta.summary_upto == 6 and state.meta.version == version
        assert [t.seq for t in state.window] == [7, 8, 9, 10]
        assert state.meta.window_tokens == 40
        assert len(await store.read_turns(CONV, 1, 100)) == 10  # nothing destroyed
        await store.commit_summary(CONV, summary="S2", upto=6, expected_upto=6, tokens=0)  # no new turns
        assert (await store.load(CONV, window_turns=1, knowledge_items=0)).meta.window_tokens == 40
        assert [t.seq for t in await store.read_turns(CONV, 3, 2)] == [3, 4]

    async def test_turns_at_reads_the_seqs_named(self, backend: Backend) -> None:
        store = backend.conversations
        assert await store.turns_at(CONV, [1, 2]) == []
        await store.write(CONV, batch(msgs(10)))
        await store.hide_turns(CONV, [4])
        turns = await store.turns_at(CONV, [7, 0, -1, 4, 11, 2])
        assert [(t.seq, t.hidden) for t in turns] == [(7, False), (4, True), (2, False)]
        assert turns == [t for s in (7, 4, 2) for t in await store.read_turns(CONV, s, 1)]

    async def test_summary_commit_conflicts(self, backend: Backend) -> None:
        store = backend.conversations
        await store.write(CONV, batch(msgs(10)))
        await store.commit_summary(CONV, summary="first", upto=4, expected_upto=0, tokens=40)
        with pytest.raises(ConflictError):
            await store.commit_summary(CONV, summary="stale", upto=8, expected_upto=0, tokens=80)
        with pytest.raises(ConflictError):
            await store.commit_summary(CONV, summary="too far", upto=11, expected_upto=4, tokens=10)
        with pytest.raises(ConflictError):
            await store.commit_summary(
                Conversation(user_id="x", chat_id="y"), summary="s", upto=0, expected_upto=0, tokens=0
            )
        state = await store.load(CONV, window_turns=100, knowledge_items=0)
        assert state.meta.summary == "first" and state.meta.summary_upto == 4

    async def test_appends_after_a_summary_read_stay_in_the_window(self, backend: Backend) -> None:
        store = backend.conversations
        await store.write(CONV, batch(msgs(4)))
        read = await store.read_turns(CONV, 1, 100)  # a summarizer read 4 turns ...
        await store.write(CONV, batch(msgs(2, start=4)))  # ... another writer appends meanwhile ...
        await store.commit_summary(CONV, summary="s", upto=read[-1].seq, expected_upto=0, tokens=40)
        state = await store.load(CONV, window_turns=100, knowledge_items=0)
        assert [t.message.id for t in state.window] == ["m4", "m5"]

    async def test_last_talk_set_kept_and_cleared(self, backend: Backend) -> None:
        store = backend.conversations
        await store.write(CONV, WriteBatch(set_last_talk=True, last_talk="pending question"))
        await store.write(CONV, batch(msgs(1)))  # unrelated write keeps it
        assert (
            await store.load(CONV, window_turns=1, knowledge_items=0)
        ).meta.last_talk == "pending question"
        await store.write(CONV, WriteBatch(set_last_talk=True, last_talk=None))
        assert (await store.load(CONV, window_turns=1, knowledge_items=0)).meta.last_talk is None

    async def test_knowledge_is_idempotent_and_capped_on_load(self, backend: Backend) -> None:
        store = backend.conversations
        facts = [Message(id=f"k{i}", content=f"fact {i}") for i in range(5)]
        await store.write(CONV, WriteBatch(knowledge=tuple(facts)))
        result = await store.write(CONV, WriteBatch(knowledge=tuple(facts[:2])))
        assert result.added == 0
        state = await store.load(CONV, window_turns=0, knowledge_items=3)
        assert [k.content for k in state.knowledge] == ["fact 2", "fact 3", "fact 4"]
        assert (await store.load(CONV, window_turns=0, knowledge_items=0)).knowledge == ()

    async def test_same_id_as_turn_and_knowledge_does_not_collide(self, backend: Backend) -> None:
        store = backend.conversations
        await store.write(
            CONV,
            WriteBatch(
                turns=((Message(id="same", content="turn"), 1),),
                knowledge=(Message(id="same", content="fact"),),
            ),
        )
        state = await store.load(CONV, window_turns=10, knowledge_items=10)
        assert [t.message.content for t in state.window] == ["turn"] and [
            k.content for k in state.knowledge
        ] == ["fact"]

    async def test_title_and_delete(self, backend: Backend) -> None:
        store = backend.conversations
        with pytest.raises(ConflictError):
            await store.set_title(CONV, "no conversation yet")
        await store.write(CONV, batch(msgs(1)))
        await store.set_title(CONV, "Trip to Oslo")
        assert (await store.load(CONV, window_turns=1, knowledge_items=0)).meta.title == "Trip to Oslo"
        assert await store.delete(CONV)
        assert not (await store.load(CONV, window_turns=1, knowledge_items=0)).exists
        assert not await store.delete(CONV)

    async def test_hostile_ids_never_collide(self, backend: Backend) -> None:
        store = backend.conversations
        ids: list[str | bytes] = [*HOSTILE, b"\xff\xfe\x00 not utf-8", "a", "b" * 10_001]
        pairs = [(u, c) for u in ids[:8] for c in ids] + [("a:b", "c"), ("a", "b:c")]
        for n, (user, chat) in enumerate(pairs):
            await store.write(
                Conversation(user_id=user, chat_id=chat), batch([Message(id="m", content=str(n))])
            )
        for n, (user, chat) in enumerate(pairs):
            turns = await store.read_turns(Conversation(user_id=user, chat_id=chat), 1, 10)
            assert [t.message.content for t in turns] == [str(n)], (user, chat)

    async def test_hidden_turns_stay_stored_but_leave_the_window(self, backend: Backend) -> None:
        store = backend.conversations
        await store.write(CONV, batch(msgs(5)))
        await store.hide_turns(CONV, [4, 5])
        await store.hide_turns(CONV, [5])  # hiding twice changes nothing more
        state = await store.load(CONV, window_turns=10, knowledge_items=0)
        assert [t.seq for t in state.window] == [1, 2, 3] and state.meta.window_tokens == 30
        turns = await store.read_turns(CONV, 1, 10)
        assert [(t.seq, t.hidden) for t in turns] == [
            (1, False),
            (2, False),
            (3, False),
            (4, True),
            (5, True),
        ]
        with pytest.raises(ConflictError):
            await store.hide_turns(CONV, [9])
        with pytest.raises(ConflictError):
            await store.hide_turns(Conversation(user_id="nobody", chat_id="x"), [1])

    async def test_knowledge_pages(self, backend: Backend) -> None:
        store = backend.conversations
        facts = tuple(Message(id=f"k{i}", content=f"fact {i}") for i in range(5))
        await store.write(CONV, WriteBatch(knowledge=facts))
        assert [k.content for k in await store.read_knowledge(CONV, 2, 2)] == ["fact 1", "fact 2"]
        assert await store.read_knowledge(CONV, 9, 2) == []

    async def test_export_import_round_trip_is_exact(self, backend: Backend) -> None:
        store = backend.conversations
        from brain.memory.transfer import export_conversation, import_conversation, parse_export

        source = Conversation(user_id=b"\xffbin", chat_id="chat:1")
        await store.write(
            source,
            batch(
                msgs(7), knowledge=(Message(id="k", content="fact"),), set_last_talk=True, last_talk="pending"
            ),
        )
        await store.commit_summary(source, summary="S", upto=3, expected_upto=0, tokens=30)
        await store.hide_turns(source, [6])
        await store.set_title(source, "Title")
        first = await export_conversation(store, source)
        assert len(first.turns) == 7 and first.turns[5].hidden and first.last_talk == "pending"
        await store.delete(source)
        await import_conversation(store, parse_export(first.model_dump_json()))
        second = await export_conversation(store, source)
        assert second == first
        assert (await store.load(source, window_turns=10, knowledge_items=10)).meta.window_tokens == 30
        with pytest.raises(ConflictError, match="already has a conversation"):
            await import_conversation(store, first)

    async def test_list_chats_finds_exactly_one_users_chats(self, backend: Backend) -> None:
        store = backend.conversations
        pairs: list[tuple[str, str | bytes]] = [
            ("alice", "c1"),
            ("alice", b"\xffraw"),
            ("alice:x", "y"),
            ("alicex", "c"),
            ("bob", "c1"),
        ]
        for user, chat in pairs:
            await store.write(Conversation(user, chat), batch(msgs(1)))
        assert sorted(map(repr, await store.list_chats("alice"))) == sorted(map(repr, ["c1", b"\xffraw"]))
        assert await store.list_chats("alice:x") == ["y"]
        assert await store.list_chats("nobody") == []
        await store.delete(Conversation("alice", "c1"))
        assert await store.list_chats("alice") == [b"\xffraw"]

    async def test_load_can_save_the_pending_text_in_the_same_call(self, backend: Backend) -> None:
        store = backend.conversations
        conv = Conversation("pending-user", "c")
        state = await store.load(conv, window_turns=5, knowledge_items=5, pending="你好, are you there?")
        assert state.exists and state.meta.last_talk == "你好, are you there?" and state.meta.turn_count == 0
        await store.write(conv, batch(msgs(2), set_last_talk=True, last_talk=None))
        again = await store.load(conv, window_turns=5, knowledge_items=5, pending="next")
        assert (
            again.meta.last_talk == "next"
            and len(again.window) == 2
            and again.meta.version > state.meta.version
        )
        assert (await store.load(conv, window_turns=5, knowledge_items=5)).meta.last_talk == "next"

    async def test_a_writes_usage_joins_the_chats_usage_rows_and_dies_with_the_chat(
        self, backend: Backend
    ) -> None:
        store, conv = backend.conversations, Conversation("usage-user", "用户-chat")
        spent = (ModelUsage(model="m1", calls=2, prompt_tokens=30, completion_tokens=5),)
        await store.write(conv, batch(msgs(2), calls=2, spent=spent))
        await store.write(conv, batch(msgs(2, start=2), spent=spent))
        await backend.usage.add(conv.user_id, conv.chat_id, "m2", Usage(prompt_tokens=7, completion_tokens=1))
        rows = [
            (r.chat_id, r.model, r.calls, r.prompt_tokens) for r in await backend.usage.rows("usage-user")
        ]
        assert rows == [("用户-chat", "m1", 4, 60), ("用户-chat", "m2", 1, 7)]
        assert await store.delete(conv)
        assert await backend.usage.rows("usage-user") == []
