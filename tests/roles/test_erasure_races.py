"""Erased stays erased: work in flight for a user (a streaming answer, a fact extraction waiting on its
model) when the user or the chat is erased writes nothing back, whichever finishes first."""

from __future__ import annotations

import asyncio
import json

import pytest
import redis.asyncio as aioredis

from brain import MemorySettings
from brain.errors import ErasedError
from brain.keys import erasure_key
from brain.settings import FactSettings
from brain.testing import ScriptedCall, ScriptedLLM
from roles.assistant import Assistant
from roles.fact_worker import FactWorker
from tests.support.runtime import make_runtime

FACTS_ON = MemorySettings(facts=FactSettings(enabled=True, reclaim_seconds=0.2, batch_turns=50))
MARK = "zqmark"


async def _everything(client: aioredis.Redis) -> dict[bytes, bytes]:
    """Every key with all it holds, as bytes (strings, hashes, lists, sets, sorted sets, streams)."""
    found: dict[bytes, bytes] = {}
    async for key in client.scan_iter(match="*"):
        kind = (await client.type(key)).decode()
        if kind == "string":
            value = repr(await client.get(key))
        elif kind == "hash":
            value = repr(await client.hgetall(key))
        elif kind == "list":
            value = repr(await client.lrange(key, 0, -1))
        elif kind == "set":
            value = repr(await client.smembers(key))
        elif kind == "zset":
            value = repr(await client.zrange(key, 0, -1, withscores=True))
        else:
            value = repr(await client.xrange(key))
        found[key] = value.encode()
    return found


async def _until(condition: object, what: str) -> None:
    for _ in range(500):
        if callable(condition) and condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


def _gated(gate: asyncio.Event, reply: str) -> object:
    async def answer(call: ScriptedCall) -> str:
        await gate.wait()
        return reply

    return answer


@pytest.mark.parametrize("scope", ["user", "chat"])
async def test_an_answer_streaming_while_erased_writes_nothing_back(
    scope: str, redis_client: aioredis.Redis
) -> None:
    gate = asyncio.Event()
    llm = ScriptedLLM([_gated(gate, f"Noted {MARK}."), "ok"])
    runtime = make_runtime(llm, client=redis_client, memory_settings=FACTS_ON)
    agent = Assistant(runtime)
    turn = asyncio.create_task(agent.chat("alice", "c", f"my secret is {MARK}"))
    await _until(lambda: len(llm.calls) == 1, "the model to be asked")
    report = await (agent.forget_user("alice") if scope == "user" else agent.forget("alice", "c"))
    assert report.remaining == () and report.chats == 1
    gate.set()
    with pytest.raises(ErasedError):
        await turn
    stored = await _everything(redis_client)
    assert not [k for k, v in stored.items() if MARK.encode() in v or MARK.encode() in k]
    assert set(stored) <= {erasure_key("brain", "alice").encode(), b"brain:{queue}:facts"}
    assert await agent.chat("alice", "c", "hello again") == "ok"  # new work after the erasure is kept
    assert len((await agent.memory_of("alice", "c")).history) == 2


async def test_a_fact_extraction_in_flight_while_erased_writes_nothing(redis_client: aioredis.Redis) -> None:
    gate = asyncio.Event()
    facts = json.dumps({"facts": [{"text": f"Secret is {MARK}", "category": "misc"}]})
    memory_llm = ScriptedLLM([_gated(gate, facts)])
    runtime = make_runtime(
        ScriptedLLM(["Noted."]), client=redis_client, memory_settings=FACTS_ON, memory_llm=memory_llm
    )
    agent = Assistant(runtime)
    await agent.chat("alice", "c", f"my secret is {MARK}")
    batch = asyncio.create_task(FactWorker(runtime).run_once(block_ms=None))
    await _until(lambda: len(memory_llm.calls) == 1, "the extraction to be asked")
    assert (await agent.forget_user("alice")).remaining == ()
    gate.set()
    report = await batch
    assert report.failed == 0  # dropped, not left to be retried
    assert runtime.tiers is not None
    assert await runtime.tiers.facts.all("alice") == []
    stored = await _everything(redis_client)
    assert not [k for k, v in stored.items() if MARK.encode() in v]
    assert await runtime.tiers.fact_queue.pending() == 0


async def test_a_users_erasure_deletes_their_api_keys(redis_client: aioredis.Redis) -> None:
    runtime = make_runtime(ScriptedLLM(["ok"]), client=redis_client)
    assert runtime.backend is not None
    keys = runtime.backend.api_keys
    _, secret = await keys.create("alice", agent="a")
    _, other = await keys.create("bob")
    await Assistant(runtime).chat("alice", "c", "hi")
    report = await Assistant(runtime).forget_user("alice")
    assert report.api_keys == 1 and report.unreachable
    assert await keys.verify(secret) is None and await keys.list("alice") == []
    assert await keys.verify(other) is not None
