"""Conformance suite of the fact queue (`Backend.queue`): `FactQueueConformance`. Subclass it in a test
module and override its `backend` fixture; the suite needs pytest-asyncio in auto mode."""

from __future__ import annotations

import asyncio
import time

import pytest

from brain.errors import ErasedError, InputError
from brain.keys import chat_bases, user_bases
from brain.storage import Backend, QueueEntry
from brain.storage.fence import holding
from brain.storage.queue import REASON_CHARS
from brain.testing.conformance.base import BackendSuite, id_order

__all__ = ["FactQueueConformance"]


def _mine(entries: list[QueueEntry], *users: str | bytes) -> list[tuple[str | bytes, str | bytes, int]]:
    return [(e.user_id, e.chat_id, e.upto) for e in entries if e.user_id in users]


async def _taken(backend: Backend, user: str | bytes, chat: str | bytes, *uptos: int) -> list[QueueEntry]:
    """The entries pushed for `uptos`, read by a worker."""
    for upto in uptos:
        await backend.queue.push(user, chat, upto)
    return [e for e in await backend.queue.read("w1", 100, None) if e.user_id == user and e.chat_id == chat]


class FactQueueConformance(BackendSuite):
    """Entries delivered once, in push order; pending ones reclaimed when idle; `done` and `drop` remove
    them; a chat's tries counted, its entries parked as a dead letter and re-queued. Override the `backend`
    fixture with a fresh queue for each test: a `Backend` whose `prefix` no other test uses (or an empty
    one)."""

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

    async def test_tries_are_counted_per_chat_until_forgotten(self, backend: Backend) -> None:
        queue = backend.queue
        assert [await queue.tried("q-tries", "c1") for _ in range(3)] == [1, 2, 3]
        assert await queue.tried("q-tries", "c2") == 1
        assert await queue.tried(b"q-tries", b"c2") == 2  # str and bytes ids are one
        await queue.untried("q-tries", "c1")
        await queue.untried("q-tries", "never-tried")
        assert await queue.tried("q-tries", "c1") == 1
        assert await queue.tried("q-tries-other", "c1") == 1

    async def test_park_sets_a_chats_entries_aside_with_its_reason(self, backend: Backend) -> None:
        queue = backend.queue
        entries = await _taken(backend, "q-park", "chat", 4, 2, 6)
        await queue.tried("q-park", "chat")
        before = time.time()
        letter = await queue.park(entries, "expected a JSON object, got 'I am not JSON'", 3)
        assert (letter.user_id, letter.chat_id, letter.upto, letter.attempts) == ("q-park", "chat", 6, 3)
        assert letter.id == max((e.id for e in entries), key=id_order)
        assert letter.reason == "expected a JSON object, got 'I am not JSON'"
        assert before - 1 <= letter.at <= time.time() + 1
        assert (await queue.pending(), await queue.backlog(), await queue.dead()) == (0, 0, 1)
        assert await queue.parked() == [letter]
        assert await queue.reclaim("w2", 0, 10) == []
        assert await queue.tried("q-park", "chat") == 1  # parking forgot the chat's tries

    async def test_park_takes_one_chats_entries(self, backend: Backend) -> None:
        mine = await _taken(backend, "q-park-one", "c1", 1)
        other = await _taken(backend, "q-park-one", "c2", 1)
        with pytest.raises(InputError):
            await backend.queue.park([], "why", 1)
        with pytest.raises(InputError):
            await backend.queue.park(mine + other, "why", 1)
        assert (await backend.queue.pending(), await backend.queue.dead()) == (2, 0)

    async def test_a_reason_is_bounded_and_free_of_lone_surrogates(self, backend: Backend) -> None:
        entries = await _taken(backend, "q-reason", "chat", 1)
        await backend.queue.park(entries, "\ud800 猫 " + "x" * 5_000, 1)
        (letter,) = await backend.queue.parked()
        assert letter.reason.startswith("\ufffd 猫 x") and len(letter.reason) == REASON_CHARS
        letter.reason.encode()  # storable and printable anywhere

    async def test_dead_letters_keep_their_ids_as_given(self, backend: Backend) -> None:
        for user in ("q-用户 🧠", b"\xff\xfe-q-bytes", "q-long-" + "x" * 5_000):
            entries = await _taken(backend, user, user, 7)
            await backend.queue.park(entries, "why", 2)
            (letter,) = await backend.queue.parked(user_id=user)
            assert (letter.user_id, letter.chat_id, letter.upto) == (user, user, 7)

    async def test_parked_lists_oldest_first_at_most_limit_by_user(self, backend: Backend) -> None:
        parked = []
        for user, chat in (("q-list-a", "c1"), ("q-list-b", "c1"), ("q-list-a", "c2")):
            parked.append(await backend.queue.park(await _taken(backend, user, chat, 1), "why", 1))
            await asyncio.sleep(0.01)
        assert await backend.queue.parked() == parked
        assert await backend.queue.parked(limit=2) == parked[:2]
        assert await backend.queue.parked(user_id="q-list-a") == [parked[0], parked[2]]
        assert await backend.queue.parked(user_id="q-list-none") == []
        assert await backend.queue.dead() == 3

    async def test_requeue_queues_a_letter_again_once(self, backend: Backend) -> None:
        queue = backend.queue
        first = await queue.park(await _taken(backend, "q-requeue", "c1", 3, 5), "why", 3)
        second = await queue.park(await _taken(backend, "q-requeue", "c2", 8), "why", 3)
        assert await queue.requeue(["no-such-id", first.id, first.id]) == 1
        assert await queue.requeue([first.id]) == 0
        assert await queue.parked() == [second]
        assert _mine(await queue.read("w2", 10, None), "q-requeue") == [("q-requeue", "c1", 5)]
        assert await queue.requeue() == 1
        assert (await queue.dead(), await queue.backlog()) == (0, 2)
        assert _mine(await queue.read("w2", 10, None), "q-requeue") == [("q-requeue", "c2", 8)]
        assert await queue.requeue() == 0

    async def test_drop_takes_dead_letters_and_tries_too(self, backend: Backend) -> None:
        queue = backend.queue
        for user, chat in (("q-drop-dead", "c1"), ("q-drop-dead", "c2"), ("q-drop-kept", "c1")):
            await queue.park(await _taken(backend, user, chat, 1), "what the user said", 3)
            await queue.tried(user, chat)
        await queue.push("q-drop-dead", "c1", 2)
        assert await queue.drop("q-drop-dead", "c1") == 2  # the entry and the dead letter
        assert [(d.user_id, d.chat_id) for d in await queue.parked()] == [
            ("q-drop-dead", "c2"),
            ("q-drop-kept", "c1"),
        ]
        assert await queue.tried("q-drop-dead", "c1") == 1
        assert await queue.drop("q-drop-dead") == 1
        assert [d.user_id for d in await queue.parked()] == ["q-drop-kept"]
        assert await queue.tried("q-drop-dead", "c1") == 1  # forgotten again with the whole user
        assert await queue.tried("q-drop-dead", "c2") == 1
        assert await queue.tried("q-drop-kept", "c1") == 2

    @pytest.mark.parametrize("whole_user", [True, False])
    async def test_a_park_begun_before_an_erasure_keeps_nothing(
        self, backend: Backend, whole_user: bool
    ) -> None:
        user, chat = "q-erased", "chat"
        entries = await _taken(backend, user, chat, 1)
        ticket = await backend.erasure.ticket(user, chat)
        chats = None if whole_user else [chat]
        epoch = await backend.erasure.begin(user, chats)
        await backend.erasure.fence(
            user, [*user_bases(backend.prefix, user), *chat_bases(backend.prefix, user, chat)], chats, epoch
        )
        with holding(ticket):
            with pytest.raises(ErasedError):
                await backend.queue.park(entries, "the user's words", 3)
            with pytest.raises(ErasedError):
                await backend.queue.tried(user, chat)
        assert await backend.queue.parked(user_id=user) == []
        with holding(await backend.erasure.ticket(user, chat)):  # work begun after the erasure writes
            assert (await backend.queue.park(entries, "why", 1)).user_id == user
            assert await backend.queue.tried(user, chat) == 1
        with holding(await backend.erasure.ticket("q-erased-other", chat)):  # another user's ticket: not ours
            assert await backend.queue.tried(user, "c2") == 1
