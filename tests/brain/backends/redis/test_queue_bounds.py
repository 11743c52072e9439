"""The fact queue is bounded: past `max_len` entries each chat waits as one coalesced record (its highest
turn) and moves into the stream as room frees up; past that many waiting chats a push is dropped and
counted; dead letters past their cap go oldest first, counted. Real Redis and Valkey."""

from __future__ import annotations

import redis.asyncio as aioredis

from brain.backends.redis import RedisBackend
from brain.backends.redis.queue import RedisFactQueue
from brain.backends.redis.stats import storage_report
from brain.keys import fact_overflow_key
from brain.settings import Settings


def bounded(client: aioredis.Redis, max_len: int = 4, dead_letters_max: int = 1_000) -> RedisFactQueue:
    return RedisFactQueue(client, prefix="qb", max_len=max_len, dead_letters_max=dead_letters_max)


async def drained(queue: RedisFactQueue) -> dict[tuple[str | bytes, str | bytes], int]:
    """Read and acknowledge everything, as workers do, until nothing is left: each chat's highest `upto`."""
    seen: dict[tuple[str | bytes, str | bytes], int] = {}
    for _ in range(100):
        entries = await queue.read("w", 3, None)
        if not entries:
            return seen
        for e in entries:
            seen[(e.user_id, e.chat_id)] = max(seen.get((e.user_id, e.chat_id), 0), e.upto)
        await queue.done([e.id for e in entries])
    raise AssertionError("the queue never drained")


async def test_a_full_queue_holds_max_len_entries_and_each_chat_waits_coalesced(
    redis_client: aioredis.Redis,
) -> None:
    queue = bounded(redis_client)
    for upto in range(1, 101):  # a load run: 100 turns in 3 chats, no worker
        await queue.push("ann", f"c{upto % 3}", upto)
    counters = await queue.counters()
    assert (counters.backlog, counters.overflow) == (4, 3)  # without the bound: 100 entries
    assert (counters.deferred, counters.dropped) == (96, 0)
    # every chat's last turn reaches a worker: nothing is lost
    assert await drained(queue) == {("ann", "c0"): 99, ("ann", "c1"): 100, ("ann", "c2"): 98}
    after = await queue.counters()
    assert (after.backlog, after.overflow, after.deferred) == (0, 0, 96)


async def test_a_chats_record_keeps_its_highest_turn(redis_client: aioredis.Redis) -> None:
    queue = bounded(redis_client, max_len=2)
    await queue.push("ann", "full", 1)
    await queue.push("ann", "full 2", 1)
    await queue.push("ann", "c", 7)
    await queue.push("ann", "c", 5)  # a late, lower push does not go back
    await queue.push(b"\xff\x00", "c 2", 3)  # ids of any bytes, spaces too
    assert await redis_client.hlen(fact_overflow_key("qb")) == 2
    assert await drained(queue) == {
        ("ann", "full"): 1,
        ("ann", "full 2"): 1,
        ("ann", "c"): 7,
        (b"\xff\x00", "c 2"): 3,
    }


async def test_past_the_waiting_chats_bound_a_push_is_dropped_and_counted(
    redis_client: aioredis.Redis,
) -> None:
    queue = bounded(redis_client, max_len=2)
    for n in range(6):
        await queue.push("bob", f"c{n}", 1)
    await queue.push("bob", "c3", 2)  # a waiting chat still takes its newer turn
    counters = await queue.counters()
    assert (counters.backlog, counters.overflow, counters.deferred, counters.dropped) == (2, 2, 3, 2)
    assert await drained(queue) == {("bob", "c0"): 1, ("bob", "c1"): 1, ("bob", "c2"): 1, ("bob", "c3"): 2}


async def test_erasure_drops_the_users_waiting_chats(redis_client: aioredis.Redis) -> None:
    queue = bounded(redis_client, max_len=3)  # keep/c, gone/a and gone/b queued; gone/c and keep/d wait
    await queue.push("keep", "c", 1)
    for chat in ("a", "b", "c"):
        await queue.push("gone", chat, 1)
    await queue.push("keep", "d", 1)
    assert await queue.drop("gone", "a") == 1
    assert await queue.drop("gone") == 2
    assert await drained(queue) == {("keep", "c"): 1, ("keep", "d"): 1}


async def test_dead_letters_past_the_cap_go_oldest_first_counted(redis_client: aioredis.Redis) -> None:
    queue = bounded(redis_client, max_len=100, dead_letters_max=3)
    for n in range(5):
        await queue.push("cat", f"c{n}", n + 1)
    entries = await queue.read("w", 10, None)
    for entry in entries:
        await queue.park([entry], "not JSON", 3)
    counters = await queue.counters()
    assert (counters.dead, counters.dead_trimmed, counters.backlog) == (3, 2, 0)  # without the cap: 5
    assert [d.chat_id for d in await queue.parked()] == ["c2", "c3", "c4"]


async def test_requeue_respects_the_bound_and_keeps_a_letter_that_does_not_fit(
    redis_client: aioredis.Redis,
) -> None:
    queue = bounded(redis_client, max_len=1)
    await queue.push("dan", "a", 1)
    [entry] = await queue.read("w", 10, None)
    letter = await queue.park([entry], "not JSON", 3)
    await queue.push("dan", "b", 2)
    await queue.push("dan", "c", 3)  # one entry, one waiting chat: both bounds reached
    assert await queue.requeue([letter.id]) == 0  # it stays a letter
    assert (await queue.dead(), (await queue.counters()).dropped) == (1, 0)
    assert await drained(queue) == {("dan", "b"): 2, ("dan", "c"): 3}
    assert await queue.requeue([letter.id]) == 1
    assert await drained(queue) == {("dan", "a"): 1}


async def test_the_backend_takes_its_bounds_from_the_settings_and_reports_them(
    redis_client: aioredis.Redis,
) -> None:
    backend = RedisBackend(redis_client, prefix="qb", queue_max_len=2, dead_letters_max=9)
    for upto in range(4):
        await backend.queue.push("eve", "c", upto)
    report = await storage_report(backend)
    assert report.queue.model_dump() == {
        "backlog": 2,
        "pending": 0,
        "overflow": 1,
        "dead": 0,
        "deferred": 2,
        "dropped": 0,
        "dead_trimmed": 0,
        "max_len": 2,
        "dead_letters_max": 9,
    }
    queue_family = next(f for f in report.families if f.family == "queue")
    assert queue_family.keys == 3  # the stream, the waiting chats, the counters
    assert report.keys == sum(f.keys for f in report.families)


def test_the_backend_takes_the_bounds_from_the_settings(redis_client: aioredis.Redis) -> None:
    settings = Settings.model_validate(
        {"memory": {"facts": {"queue_max_len": 7, "dead_letters_max": 3, "audit_max_events": 50}}}
    )
    backend = RedisBackend.for_settings(redis_client, settings)
    bounds = backend.queue.max_len, backend.queue.dead_letters_max, backend.facts.audit_max_events
    assert bounds == (7, 3, 50)


async def test_a_turns_write_queues_its_chat_in_the_same_call_as_a_push_would(
    redis_client: aioredis.Redis,
) -> None:
    from brain import BrainMemory, Message

    backend = RedisBackend(redis_client, prefix="wq", queue_max_len=1)
    for chat in ("c", "d", "d"):  # the stream holds one entry: "d" waits in the overflow, coalesced
        memory = await BrainMemory.loads(backend.conversations, "ann", chat)
        memory.add_talk(Message(content=f"hi {chat}"))
        assert await memory.dumps(queue_facts=True) and memory.facts_queued
    counters = await backend.queue.counters()
    assert (counters.backlog, counters.overflow, counters.deferred) == (1, 1, 2)
    assert await drained(backend.queue) == {("ann", "c"): 1, ("ann", "d"): 2}
    await redis_client.set(backend.queue.key, "not a stream")  # the push fails: the write stands
    memory.add_talk(Message(content="again"))
    assert await memory.dumps(queue_facts=True) and not memory.facts_queued
    memory = await BrainMemory.loads(backend.conversations, "ann", "d")
    assert [m.content for m in memory.history] == ["hi d", "hi d", "again"] and memory.turn_count == 3
