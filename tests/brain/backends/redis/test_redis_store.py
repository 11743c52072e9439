"""What only the Redis store must show: one round trip per operation, TTL, corruption, size, versions."""

from __future__ import annotations

import re
from typing import Any

import pytest
import redis.asyncio as aioredis

from brain import BrainMemory, InputError, MemorySettings, Message, RedisMemoryStore, StoreError
from brain.backends.redis.client import TranslatingRedis
from brain.storage.conversation import Conversation, WriteBatch

CONV = Conversation(user_id="alice", chat_id="c1")


async def test_append_and_load_are_one_round_trip_each(
    redis_client: aioredis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = RedisMemoryStore(redis_client, prefix="t")
    for chunk in range(10):  # 2,000 turns of history
        turns = tuple((Message(id=f"{chunk}-{i}", content="x"), 1) for i in range(200))
        await store.write(CONV, WriteBatch(turns=turns))
    await BrainMemory.loads(store, "alice", "c1")  # scripts are loaded once per server
    sent: list[str] = []
    original = redis_client.execute_command

    async def counting(*args: Any, **kwargs: Any) -> Any:
        sent.append(str(args[0]))
        return await original(*args, **kwargs)

    monkeypatch.setattr(redis_client, "execute_command", counting)
    memory = await BrainMemory.loads(store, "alice", "c1")
    memory.add_talk(Message(content="question"))
    memory.add_answer(Message(content="answer"))
    await memory.dumps()
    assert sent == ["EVALSHA", "EVALSHA"]  # one round trip to load, one to append both turns
    assert len(memory.history) == 40 + 2  # the window (window_max_turns), not the 2,000 stored turns


async def test_ttl_is_optional_and_refreshed_on_read_and_write(redis_client: aioredis.Redis) -> None:
    durable = RedisMemoryStore(redis_client, prefix="d")
    await durable.write(CONV, WriteBatch(turns=((Message(content="x"), 1),)))
    assert [await redis_client.ttl(k) for k in durable.keys(CONV).all[:3]] == [-1, -1, -1]
    expiring = RedisMemoryStore(redis_client, prefix="e", ttl_seconds=500)
    await expiring.write(CONV, WriteBatch(turns=((Message(content="x"), 1),)))
    keys = expiring.keys(CONV)
    assert 490 < await redis_client.ttl(keys.meta) <= 500
    for key in keys.all[:3]:
        await redis_client.expire(key, 20)
    await expiring.load(CONV, window_turns=5, knowledge_items=5)
    assert all(490 < t <= 500 for t in [await redis_client.ttl(k) for k in keys.all[:3]])
    for key in keys.all[:3]:
        await redis_client.expire(key, 20)
    await expiring.read_turns(CONV, 1, 5)
    assert all(490 < t <= 500 for t in [await redis_client.ttl(k) for k in keys.all[:3]])


async def test_corrupt_turn_is_a_clear_error_and_left_in_place(redis_client: aioredis.Redis) -> None:
    store = RedisMemoryStore(redis_client, prefix="t")
    await store.write(CONV, WriteBatch(turns=tuple((Message(id=str(i), content="ok"), 1) for i in range(3))))
    keys = store.keys(CONV)
    await redis_client.lset(keys.turns, 1, b"{not json")
    with pytest.raises(
        StoreError, match=rf"corrupt record in {re.escape(keys.turns)} at index 1.*left as it is"
    ):
        await BrainMemory.loads(store, "alice", "c1")
    with pytest.raises(StoreError, match="at index 1"):
        await store.read_turns(CONV, 1, 3)
    assert await redis_client.lindex(keys.turns, 1) == b"{not json"
    await redis_client.lset(keys.turns, 1, b'{"v": 1, "tok": 1, "msg": {"content": 5}}')
    with pytest.raises(StoreError, match=r"at index 1: msg.content: Input should be a valid string"):
        await store.read_turns(CONV, 1, 3)


async def test_corrupt_meta_is_a_clear_error(redis_client: aioredis.Redis) -> None:
    store = RedisMemoryStore(redis_client, prefix="t")
    await store.write(CONV, WriteBatch(turns=((Message(content="x"), 1),)))
    keys = store.keys(CONV)
    await redis_client.hset(keys.meta, "summary_upto", "many")
    with pytest.raises(
        StoreError, match=rf"corrupt record in {re.escape(keys.meta)}: summary_upto is not a number"
    ):
        await store.load(CONV, window_turns=5, knowledge_items=5)
    assert await redis_client.hget(keys.meta, "summary_upto") == b"many"


async def test_future_schema_version_is_refused_and_untouched(redis_client: aioredis.Redis) -> None:
    store = RedisMemoryStore(redis_client, prefix="t")
    await store.write(CONV, WriteBatch(turns=((Message(content="x"), 1),)))
    keys = store.keys(CONV)
    await redis_client.hset(keys.meta, "v", 99)
    with pytest.raises(StoreError, match=r"schema version 99.*upgrade"):
        await store.load(CONV, window_turns=5, knowledge_items=5)
    with pytest.raises(StoreError, match=r"schema version 99.*upgrade"):
        await store.write(CONV, WriteBatch(turns=((Message(content="y"), 1),)))
    assert await redis_client.llen(keys.turns) == 1
    await redis_client.hset(keys.meta, "v", 1)
    await redis_client.rpush(keys.turns, b'{"v": 7, "tok": 1, "msg": {"content": "from the future"}}')
    with pytest.raises(StoreError, match="index 1 has schema version 7"):
        await store.read_turns(CONV, 1, 5)


async def test_one_megabyte_message_round_trips_or_is_refused(redis_client: aioredis.Redis) -> None:
    store = RedisMemoryStore(redis_client, prefix="t")
    big = "ü" * 500_000  # 1,000,000 bytes of UTF-8
    memory = await BrainMemory.loads(store, "alice", "c1")
    memory.add_talk(Message(id="big", content=big))
    await memory.dumps()
    [turn] = await store.read_turns(CONV, 1, 1)
    assert turn.message.content == big
    small = MemorySettings(max_message_bytes=100_000)
    memory = await BrainMemory.loads(store, "alice", "c2", settings=small)
    with pytest.raises(InputError, match=r"is 1000000 bytes; memory\.max_message_bytes is 100000"):
        memory.add_talk(Message(content=big))
    assert not memory.is_dirty and memory.history == []
    limited = RedisMemoryStore(redis_client, prefix="t", max_message_bytes=100_000)
    with pytest.raises(InputError, match="max_message_bytes"):
        await limited.write(
            Conversation(user_id="alice", chat_id="c3"), WriteBatch(turns=((Message(content=big), 1),))
        )
    assert await redis_client.exists(*limited.keys(Conversation(user_id="alice", chat_id="c3")).all) == 0


async def test_redis_down_on_read_is_an_error_never_an_empty_memory() -> None:
    from tests.support.servers import free_port

    client = TranslatingRedis.from_url(f"redis://127.0.0.1:{free_port()}/0", socket_connect_timeout=1)
    store = RedisMemoryStore(client)
    with pytest.raises(StoreError, match="Redis EVALSHA failed: ConnectionError"):
        await BrainMemory.loads(store, "alice", "c1")
    await client.aclose()
