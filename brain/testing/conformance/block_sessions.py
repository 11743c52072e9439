"""Conformance suite of block sessions: `BlockSessionStoreConformance` (`Backend.block_session`). Subclass it
in a test module and override its `backend` fixture; the suite needs pytest-asyncio in auto mode."""

from __future__ import annotations

import asyncio
from fnmatch import fnmatchcase

import pytest

from brain.errors import InputError
from brain.keys import user_patterns
from brain.llm.protocol import ChatMessage, ToolCall
from brain.storage import Backend, Record
from brain.testing.conformance.base import BackendSuite
from brain.testing.conformance.blocks import ODD_IDS

__all__ = ["BlockSessionStoreConformance"]


def _rec(role: str, content: str, tokens: int = 1) -> Record:
    return Record(message=ChatMessage.model_validate({"role": role, "content": content}), tokens=tokens)


def _turns(*roles: str) -> list[Record]:
    return [_rec(role, f"{role} {i} 消息 🧠", tokens=i + 1) for i, role in enumerate(roles)]


class BlockSessionStoreConformance(BackendSuite):
    """One session's history FIFO, archive and state: compare-and-move flushes, atomic claims and trims,
    sessions isolated from each other. Override the `backend` fixture: a `Backend` whose `prefix` no other
    test uses (or an empty one)."""

    async def test_append_then_active_oldest_first(self, backend: Backend) -> None:
        session = backend.block_session("bs-append", "chat")
        records = _turns("user", "assistant", "user")
        await session.append(records[:2])
        await session.append(records[2:])
        active, raws = await session.active()
        assert active == records
        assert len(raws) == 3 and all(isinstance(raw, bytes) for raw in raws)

    async def test_empty_session(self, backend: Backend) -> None:
        session = backend.block_session("bs-empty", "chat")
        await session.append([])
        assert await session.active() == ([], [])
        assert await session.archived(0) == []
        assert await session.archived_count() == 0
        assert await session.get_state("anything") is None
        assert await session.flush(b"", 1) is None
        assert await session.drop() == 0

    async def test_records_round_trip_exactly(self, backend: Backend) -> None:
        session = backend.block_session("bs-round-trip", "chat")
        call = ToolCall(id="c1", name="core_memory_append", arguments='{"text": "喜欢 🍵"}')
        records = [
            Record(message=ChatMessage(role="assistant", tool_calls=(call,)), tokens=7, reasoning="想 🤔"),
            Record(message=ChatMessage(role="tool", content='"ok"\n\\', tool_call_id="c1"), tokens=2),
        ]
        await session.append(records)
        assert (await session.active())[0] == records

    async def test_flush_moves_the_oldest(self, backend: Backend) -> None:
        session = backend.block_session("bs-flush", "chat")
        records = _turns("user", "assistant", "user", "assistant", "user")
        await session.append(records)
        assert await session.flush((await session.active())[1][0], 2) == 2
        active, raws = await session.active()
        assert active == records[2:]
        assert await session.flush(raws[0], 2) == 4
        assert await session.archived(0) == records[:4]
        assert (await session.active())[0] == records[4:]
        assert await session.archived_count() == 4

    async def test_flush_with_a_stale_head_moves_nothing(self, backend: Backend) -> None:
        session = backend.block_session("bs-stale", "chat")
        records = _turns("user", "assistant", "user")
        await session.append(records)
        head = (await session.active())[1][0]
        assert await session.flush(head, 1) == 1
        assert await session.flush(head, 1) is None
        assert await session.flush(b"not a record", 1) is None
        assert (await session.active())[0] == records[1:]
        assert await session.archived_count() == 1

    async def test_flush_of_more_than_held_moves_all(self, backend: Backend) -> None:
        session = backend.block_session("bs-flush-all", "chat")
        records = _turns("user", "assistant")
        await session.append(records)
        assert await session.flush((await session.active())[1][0], 10) == 2
        assert await session.active() == ([], [])
        assert await session.archived(0) == records

    async def test_concurrent_flushes_with_one_head_move_once(self, backend: Backend) -> None:
        session = backend.block_session("bs-flush-race", "chat")
        records = _turns("user", "assistant", "user", "assistant")
        await session.append(records)
        head = (await session.active())[1][0]
        results = await asyncio.gather(*(session.flush(head, 2) for _ in range(10)))
        assert sorted(results, key=lambda r: r is None) == [2] + [None] * 9
        assert await session.archived(0) == records[:2]
        assert (await session.active())[0] == records[2:]

    async def test_archived_ranges_are_inclusive(self, backend: Backend) -> None:
        session = backend.block_session("bs-ranges", "chat")
        records = _turns(*["user", "assistant"] * 3)
        await session.append(records)
        await session.flush((await session.active())[1][0], 6)
        assert await session.archived(0) == records
        assert await session.archived(2, 3) == records[2:4]
        assert await session.archived(0, 0) == records[:1]
        assert await session.archived(-2) == records[4:]
        assert await session.archived(-100, 1) == records[:2]
        assert await session.archived(4, 100) == records[4:]
        assert await session.archived(6) == []
        assert await session.archived(3, 1) == []

    async def test_state_fields_hold_json(self, backend: Backend) -> None:
        session = backend.block_session("bs-state", "chat")
        values = {
            "system": ["你好 🧠", {"nested": [1, 2.5, None, True]}],
            "count": 3,
            "ratio": 0.25,
            "flag": False,
            "text": 'quote " and \\ and \n',
            "nothing": None,
        }
        for field, value in values.items():
            await session.set_state(field, value)
        assert {f: await session.get_state(f) for f in values} == values
        await session.set_state("count", {"now": "a dict"})
        assert await session.get_state("count") == {"now": "a dict"}
        assert await session.get_state("unset") is None

    async def test_claim_moves_a_counter_once(self, backend: Backend) -> None:
        session = backend.block_session("bs-claim", "chat")
        assert await session.claim("upto", 0, 4) is True  # unset counts as 0
        assert await session.claim("upto", 0, 9) is False
        assert await session.claim("upto", 4, 6) is True
        assert await session.get_state("upto") == 6
        await session.set_state("other", 10)
        assert await session.claim("other", 10, 11) is True
        assert await session.get_state("other") == 11

    async def test_concurrent_claims_one_wins(self, backend: Backend) -> None:
        session = backend.block_session("bs-claim-race", "chat")
        results = await asyncio.gather(*(session.claim("turn", 0, n) for n in range(1, 21)))
        assert results.count(True) == 1
        assert await session.get_state("turn") == results.index(True) + 1

    async def test_drop_tail_removes_exchanges(self, backend: Backend) -> None:
        session = backend.block_session("bs-drop-tail", "chat")
        records = _turns("assistant", "user", "assistant", "user", "assistant", "tool", "assistant")
        await session.append(records)
        assert await session.drop_tail(1) == 4  # back to and including the last user message
        assert (await session.active())[0] == records[:3]
        assert await session.drop_tail(5) == 2  # fewer exchanges: back to the oldest user message
        assert (await session.active())[0] == records[:1]
        assert await session.drop_tail(1) == 0  # no user message left
        assert (await session.active())[0] == records[:1]

    async def test_drop_tail_of_several_exchanges(self, backend: Backend) -> None:
        session = backend.block_session("bs-drop-tail-2", "chat")
        records = _turns("user", "assistant", "user", "assistant", "user", "assistant")
        await session.append(records)
        assert await session.drop_tail(2) == 4
        assert (await session.active())[0] == records[:2]
        assert await session.drop_tail(1) == 2
        assert await session.active() == ([], [])

    async def test_replace_answer_only_replaces_an_answer(self, backend: Backend) -> None:
        session = backend.block_session("bs-replace", "chat")
        new = _rec("assistant", "better 答案 🧠", tokens=9)
        assert await session.replace_answer(new) is False
        records = _turns("user", "assistant")
        await session.append(records)
        assert await session.replace_answer(new) is True
        assert (await session.active())[0] == [records[0], new]
        await session.append(_turns("user"))
        assert await session.replace_answer(_rec("assistant", "x")) is False
        assert (await session.active())[0][1] == new

    async def test_drop_counts_what_existed(self, backend: Backend) -> None:
        session = backend.block_session("bs-drop", "chat")
        await session.append(_turns("user", "assistant"))
        assert await session.drop() == 1
        await session.append(_turns("user", "assistant"))
        await session.flush((await session.active())[1][0], 1)
        await session.set_state("k", 1)
        assert await session.drop() == 3
        assert await session.active() == ([], [])
        assert (await session.archived_count(), await session.get_state("k")) == (0, None)
        assert await session.drop() == 0

    async def test_sessions_are_isolated(self, backend: Backend) -> None:
        ids = [("bs-iso-a", "c1"), ("bs-iso-a", "c2"), ("bs-iso-b", "c1"), *((i, i) for i in ODD_IDS)]
        sessions = [backend.block_session(user, chat) for user, chat in ids]
        for i, session in enumerate(sessions):
            await session.append([_rec("user", f"s{i}")])
            await session.set_state("who", i)
        assert await sessions[1].drop() == 2
        for i, session in enumerate(sessions):
            active = [r.message.content for r in (await session.active())[0]]
            assert active == ([] if i == 1 else [f"s{i}"])
            assert await session.get_state("who") == (None if i == 1 else i)

    async def test_str_and_bytes_ids_are_one_session(self, backend: Backend) -> None:
        records = _turns("user")
        await backend.block_session("bs-same", "chat-同").append(records)
        again = backend.block_session(b"bs-same", "chat-同".encode())
        assert (await again.active())[0] == records
        assert again.vectors_base == backend.block_session("bs-same", "chat-同").vectors_base

    async def test_vectors_base_is_the_sessions_own(self, backend: Backend) -> None:
        bases = {backend.block_session(u, c).vectors_base for u in ("bs-vec-a", "bs-vec-b") for c in "xy"}
        assert len(bases) == 4
        base = backend.block_session("bs-vec-a", "x").vectors_base
        assert any(fnmatchcase(base, p) for p in user_patterns(backend.prefix, "bs-vec-a"))
        assert not any(fnmatchcase(base, p) for p in user_patterns(backend.prefix, "bs-vec-b"))

    async def test_empty_ids_are_input_errors(self, backend: Backend) -> None:
        for user, chat in (("", "chat"), ("bs-empty-id", b"")):
            with pytest.raises(InputError):
                await backend.block_session(user, chat).append(_turns("user"))

    async def test_emptied_session_leaves_no_data(self, backend: Backend) -> None:
        session = backend.block_session("bs-leftovers", "chat")
        await session.append(_turns("user", "assistant"))
        assert await backend.user_leftovers("bs-leftovers") != []
        assert await session.drop_tail(1) == 2
        assert await backend.user_leftovers("bs-leftovers") == []
