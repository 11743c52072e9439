"""Reliability on real servers (redis-server and Valkey): concurrency, crashes, failing LLMs."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from actions.summarizer import Summarizer
from brain import BrainMemory, ConflictError, LLMError, LLMSettings, Message, OpenAILLM, RedisMemoryStore
from brain.backends.redis.client import TranslatingRedis
from brain.errors import StoreError
from brain.testing import ScriptedCall, ScriptedLLM
from tests.support.openai_server import Chat, Fault, Malformed, ScriptedOpenAIServer, Slow
from tests.support.servers import RedisServerProcess, valkey_binary


async def test_twenty_concurrent_writers_lose_and_duplicate_nothing(redis_url: str) -> None:
    async def writer(w: int) -> None:
        client = TranslatingRedis.from_url(redis_url)  # its own pool, like another process
        store = RedisMemoryStore(client)
        memory = await BrainMemory.loads(store, "shared-user", "shared-chat")
        for i in range(100):
            message = Message(id=f"w{w}-{i}", content=f"writer {w} turn {i}")
            memory.add_talk(message)
            await memory.dumps()
            if i % 10 == 0:  # a client retrying a write it is unsure of
                again = await BrainMemory.loads(store, "shared-user", "shared-chat")
                again.add_talk(message)
                await again.dumps()
        await client.aclose()

    await asyncio.gather(*(writer(w) for w in range(20)))
    client = TranslatingRedis.from_url(redis_url)
    memory = await BrainMemory.loads(RedisMemoryStore(client), "shared-user", "shared-chat")
    turns = await memory.read_history(1, 10_000)
    ids = [t.message.id for t in turns]
    assert len(turns) == 2_000 and len(set(ids)) == 2_000
    assert [t.seq for t in turns] == list(range(1, 2_001))  # one server-assigned order
    for w in range(20):  # each writer's turns are in its own order
        mine = [int(i.split("-")[1]) for i in ids if i.startswith(f"w{w}-")]
        assert mine == list(range(100))
    assert memory.turn_count == 2_000
    await client.aclose()


@pytest.mark.parametrize("server", ["redis", "valkey"])
async def test_server_killed_mid_run_keeps_every_acknowledged_turn(server: str, tmp_path: Path) -> None:
    process = RedisServerProcess(tmp_path / server, binary=None if server == "redis" else valkey_binary())
    process.start()
    client = TranslatingRedis.from_url(
        process.url,
        socket_timeout=2,
        socket_connect_timeout=1,
        retry=Retry(ExponentialBackoff(cap=0.2, base=0.02), 3),
        retry_on_error=[RedisConnectionError, RedisTimeoutError],
    )
    store = RedisMemoryStore(client)
    memory = await BrainMemory.loads(store, "u", "crash")
    acknowledged: list[str] = []
    refused: list[str] = []

    async def restart_later() -> None:
        await asyncio.sleep(0.3)
        process.kill()
        await asyncio.sleep(1.0)
        process.start()

    restarter = asyncio.create_task(restart_later())
    for i in range(300):
        message = Message(id=f"t{i}", content=f"turn {i}")
        memory.add_talk(message)
        try:
            await memory.dumps()
            acknowledged.append(message.id)
        except StoreError:
            refused.append(message.id)  # still pending in memory: the next dumps retries it
        await asyncio.sleep(0.005)
    await restarter
    await memory.dumps()  # the client recovered by itself: pending turns go through now
    assert refused, "the crash should have refused some writes"
    stored = [t.message.id for t in await memory.read_history(1, 1_000)]
    assert set(acknowledged) <= set(stored)
    assert sorted(stored, key=lambda x: int(x[1:])) == [f"t{i}" for i in range(300)]
    assert len(stored) == len(set(stored)) == 300
    await client.aclose()
    process.stop()


FAILURES = {
    "http-500": [Fault(500)] * 2,
    "timeout": [Slow(1.0, Chat("late"))],  # llm.timeout is the whole call's: no retry after it
    "empty": [Chat("")],
    "garbage": [Malformed()],
    "over-long": [Chat("word " * 3_000)],
}


@pytest.mark.parametrize("failure", list(FAILURES))
async def test_llm_failing_during_summarize_changes_nothing(
    failure: str, redis_url: str, openai_server: ScriptedOpenAIServer
) -> None:
    client = TranslatingRedis.from_url(redis_url)
    store = RedisMemoryStore(client)
    memory = await BrainMemory.loads(store, "u", "c")
    for i in range(8):
        memory.add_talk(Message(content=f"fact number {i}"))
    memory.set_last_talk("the pending question")
    await memory.dumps()
    await memory.set_history_summary("Earlier: Ann likes tea.")
    memory.add_talk(Message(content="one more fact"))
    await memory.dumps()
    before = (await BrainMemory.loads(store, "u", "c")).model_dump()
    openai_server.script(*FAILURES[failure])
    settings = LLMSettings(
        base_url=openai_server.url, timeout=0.3 if failure == "timeout" else 5, max_retries=1
    )
    async with OpenAILLM.from_settings(settings) as llm:
        with pytest.raises(LLMError):
            await memory.summarize(Summarizer(llm))
    after = await BrainMemory.loads(store, "u", "c")
    assert after.model_dump() == before
    assert after.historical_summary == "Earlier: Ann likes tea." and after.last_talk == "the pending question"
    assert [m.content for m in after.history] == ["one more fact"]
    assert memory.historical_summary == "Earlier: Ann likes tea." and len(memory.history) == 1
    await client.aclose()


async def test_append_during_summarize_is_kept(redis_url: str) -> None:
    client = TranslatingRedis.from_url(redis_url)
    store = RedisMemoryStore(client)
    memory = await BrainMemory.loads(store, "u", "c")
    for i in range(10):
        memory.add_talk(Message(content=f"turn {i}"))
    await memory.dumps()
    other = await BrainMemory.loads(store, "u", "c")

    async def append_while_summarizing(call: ScriptedCall) -> str:
        other.add_talk(Message(id="late", content="appended during the summary"))  # another process
        await other.dumps()
        return "summary of the first ten"

    await memory.summarize(Summarizer(ScriptedLLM([append_while_summarizing])))
    fresh = await BrainMemory.loads(store, "u", "c")
    assert fresh.historical_summary == "summary of the first ten" and fresh.summary_upto == 10
    assert [m.id for m in fresh.history] == ["late"]
    await client.aclose()


async def test_concurrent_summaries_one_wins_the_other_changes_nothing(redis_url: str) -> None:
    client = TranslatingRedis.from_url(redis_url)
    store = RedisMemoryStore(client)
    first = await BrainMemory.loads(store, "u", "c")
    for i in range(10):
        first.add_talk(Message(content=f"turn {i}"))
    await first.dumps()
    second = await BrainMemory.loads(store, "u", "c")
    assert await first.summarize(Summarizer(ScriptedLLM(["winner"]))) == "winner"
    with pytest.raises(ConflictError):
        await second.summarize(Summarizer(ScriptedLLM(["loser"])))
    assert second.historical_summary == "" and len(second.history) == 10
    assert (await BrainMemory.loads(store, "u", "c")).historical_summary == "winner"
    await client.aclose()
