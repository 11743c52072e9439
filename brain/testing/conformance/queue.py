"""Conformance suite of the fact queue (`Backend.queue`): `FactQueueConformance`. Subclass it in a test
module and override its `backend` fixture; the suite needs pytest-asyncio in auto mode."""

from __future__ import annotations

import asyncio
import time

import pytest

from brain.errors import InputError
from brain.storage import Backend, QueueEntry
from brain.testing.conformance.base import BackendSuite, id_order

__all__ = ["FactQueueConformance"]


def _mine(entries: list[QueueEntry], *users: str | bytes) -> list[tuple[str | bytes, str | bytes, int]]:
    return [(e.user_id, e.chat_id, e.upto) for e in entries if e.user_id in users]


class FactQueueConformance(BackendSuite):
    """Entries delivered once, in push order; pending ones reclaimed when idle; `done` and `drop` remove
    them. Override the `backend` fixture with a fresh queue for each test: a `Backend` whose `prefix` no
    other test uses (or an empty one)."""

    async def test_read_returns_pushed_entries_in_order(self, backend: Backend) -> None:
        for upto in (3, 5, 9):
            await backend.queue.push("q-order", "chat", upto)
        entries = await backend.queue.read("w1", 10, None)
        assert _mine(entries, "q-order") == [
            ("q-order", "chat", 3),
            ("q-order", "chat", 5),
            ("q-order", "chat", 9),
        ]
        assert [id_order(e.id) for e in entries] == sorted({id_order(e.id) for e in entries})

    async def test_each_entry_is_read_once(self, backend: Backend) -> None:
        await backend.queue.push("q-once", "chat", 1)
        assert _mine(await backend.queue.read("w1", 10, None), "q-once") == [("q-once", "chat", 1)]
        assert await backend.queue.read("w1", 10, None) == []
        assert await backend.queue.read("w2", 10, None) == []

    async def test_read_takes_at_most_count(self, backend: Backend) -> None:
        for upto in range(5):
            await backend.queue.push("q-count", "chat", upto)
        first = await backend.queue.read("w1", 2, None)
        rest = await backend.queue.read("w2", 10, None)
        assert [e.upto for e in first] == [0, 1]
        assert [e.upto for e in rest] == [2, 3, 4]

    async def test_read_waits_for_a_push(self, backend: Backend) -> None:
        reader = asyncio.create_task(backend.queue.read("w1", 10, 5_000))
        await asyncio.sleep(0.05)
        assert not reader.done()
        started = time.monotonic()
        await backend.queue.push("q-wait", "chat", 7)
        entries = await asyncio.wait_for(reader, 5)
        assert _mine(entries, "q-wait") == [("q-wait", "chat", 7)]
        assert time.monotonic() - started < 2

    async def test_read_wait_ends_empty(self, backend: Backend) -> None:
        started = time.monotonic()
        assert await backend.queue.read("w1", 10, 150) == []
        assert time.monotonic() - started >= 0.1
        started = time.monotonic()
        assert await backend.queue.read("w1", 10, None) == []
        assert time.monotonic() - started < 0.1

    async def test_concurrent_readers_share_the_work(self, backend: Backend) -> None:
        for upto in range(12):
            await backend.queue.push("q-share", "chat", upto)
        batches = await asyncio.gather(*(backend.queue.read(f"w{i}", 3, None) for i in range(6)))
        ids = [e.id for batch in batches for e in batch]
        assert len(ids) == len(set(ids)) == 12
        assert sorted(e.upto for batch in batches for e in batch) == list(range(12))

    async def test_concurrent_pushes_get_distinct_ordered_ids(self, backend: Backend) -> None:
        await asyncio.gather(*(backend.queue.push("q-burst", "chat", n) for n in range(100)))
        entries = await backend.queue.read("w1", 1_000, None)
        assert len({e.id for e in entries}) == 100
        assert [id_order(e.id) for e in entries] == sorted(id_order(e.id) for e in entries)
        assert sorted(e.upto for e in entries) == list(range(100))

    async def test_pending_and_backlog(self, backend: Backend) -> None:
        for upto in range(3):
            await backend.queue.push("q-counts", "chat", upto)
        assert (await backend.queue.pending(), await backend.queue.backlog()) == (0, 3)
        read = await backend.queue.read("w1", 2, None)
        assert (await backend.queue.pending(), await backend.queue.backlog()) == (2, 3)
        assert await backend.queue.done([read[0].id]) == 1
        assert (await backend.queue.pending(), await backend.queue.backlog()) == (1, 2)

    async def test_done_counts_what_it_dropped(self, backend: Backend) -> None:
        await backend.queue.push("q-done", "chat", 1)
        await backend.queue.push("q-done", "chat", 2)
        first, second = await backend.queue.read("w1", 10, None)
        assert await backend.queue.done([]) == 0
        assert await backend.queue.done([first.id, first.id]) == 1
        assert await backend.queue.done([first.id]) == 0
        assert await backend.queue.done([second.id, first.id]) == 1
        assert (await backend.queue.pending(), await backend.queue.backlog()) == (0, 0)

    async def test_reclaimed_entries_are_done_by_their_new_owner(self, backend: Backend) -> None:
        for upto in (1, 2):
            await backend.queue.push("q-new-owner", "chat", upto)
        await backend.queue.read("dead", 10, None)
        taken = await backend.queue.reclaim("w2", 0, 10)
        assert [e.upto for e in taken] == [1, 2]
        assert await backend.queue.done([e.id for e in taken]) == 2
        assert (await backend.queue.pending(), await backend.queue.backlog()) == (0, 0)
        assert await backend.queue.reclaim("w3", 0, 10) == []

    async def test_reclaim_takes_idle_entries(self, backend: Backend) -> None:
        await backend.queue.push("q-reclaim", "chat", 1)
        (entry,) = await backend.queue.read("dead", 10, None)
        assert await backend.queue.reclaim("w2", 60_000, 10) == []
        await asyncio.sleep(0.25)
        assert await backend.queue.reclaim("w2", 150, 10) == [entry]
        assert await backend.queue.reclaim("w3", 150, 10) == []  # just taken: not idle
        assert await backend.queue.pending() == 1
        assert await backend.queue.read("w3", 10, None) == []

    async def test_reclaim_takes_at_most_count_oldest_first(self, backend: Backend) -> None:
        for upto in range(4):
            await backend.queue.push("q-reclaim-count", "chat", upto)
        read = await backend.queue.read("dead", 10, None)
        assert await backend.queue.reclaim("w2", 0, 3) == read[:3]
        assert await backend.queue.reclaim("w3", 0, 10) == read

    async def test_reclaim_skips_done_entries(self, backend: Backend) -> None:
        await backend.queue.push("q-reclaim-done", "chat", 1)
        await backend.queue.push("q-reclaim-done", "chat", 2)
        first, second = await backend.queue.read("dead", 10, None)
        await backend.queue.done([first.id])
        assert await backend.queue.reclaim("w2", 0, 10) == [second]

    async def test_drop_a_users_entries_read_or_not(self, backend: Backend) -> None:
        await backend.queue.push("q-drop-a", "c1", 1)
        await backend.queue.push("q-drop-b", "c1", 2)
        await backend.queue.read("w1", 2, None)
        await backend.queue.push("q-drop-a", "c2", 3)
        assert await backend.queue.drop("q-drop-a") == 2
        assert await backend.queue.drop("q-drop-a") == 0
        assert (await backend.queue.pending(), await backend.queue.backlog()) == (1, 1)
        assert _mine(await backend.queue.reclaim("w2", 0, 10), "q-drop-a", "q-drop-b") == [
            ("q-drop-b", "c1", 2)
        ]

    async def test_drop_one_chat(self, backend: Backend) -> None:
        for chat in ("c1", "c2", "c1"):
            await backend.queue.push("q-drop-chat", chat, 1)
        await backend.queue.push("q-drop-chat-other", "c1", 1)
        assert await backend.queue.drop("q-drop-chat", "c1") == 2
        entries = await backend.queue.read("w1", 10, None)
        assert _mine(entries, "q-drop-chat", "q-drop-chat-other") == [
            ("q-drop-chat", "c2", 1),
            ("q-drop-chat-other", "c1", 1),
        ]

    async def test_ids_come_back_as_given(self, backend: Backend) -> None:
        users: list[str | bytes] = ["q-用户 🧠", b"\xff\xfe-q-bytes", "q-long-" + "x" * 5_000]
        for user in users:
            await backend.queue.push(user, user, 2**40)
        await backend.queue.push(b"q-utf8-bytes", "chat-😀".encode(), -1)
        entries = await backend.queue.read("w1", 10, None)
        assert _mine(entries, *users, "q-utf8-bytes") == [
            *((user, user, 2**40) for user in users),
            ("q-utf8-bytes", "chat-😀", -1),
        ]

    async def test_str_and_bytes_ids_are_one(self, backend: Backend) -> None:
        await backend.queue.push("q-same", "chat", 1)
        await backend.queue.push(b"q-same", b"chat", 2)
        assert await backend.queue.drop(b"q-same", "chat") == 2

    async def test_empty_ids_are_input_errors(self, backend: Backend) -> None:
        with pytest.raises(InputError):
            await backend.queue.push("", "chat", 1)
        with pytest.raises(InputError):
            await backend.queue.push("q-empty", b"", 1)
        with pytest.raises(InputError):
            await backend.queue.drop("")
        assert await backend.queue.backlog() == 0
