"""One Assistant, many users at once: no cross-talk, bounded locks, erasure that reaches every tier."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aioredis

from brain import InMemoryStore, MemorySettings
from brain.keys import erasure_key, user_patterns
from brain.memory.erasure import user_keys
from brain.search.index import IndexedDoc
from brain.testing import ScriptedCall, ScriptedLLM, tool_calls
from roles.assistant import Assistant
from roles.modes import TieredMode
from roles.tiered import TieredAssistant
from tests.support.prompts import search_results
from tests.support.runtime import make_runtime


async def echo(call: ScriptedCall) -> str:
    await asyncio.sleep(0)  # let the other chats run in between
    return f"echo: {call.messages[-1].content}"


@pytest.mark.parametrize("backend", ["memory", "redis"])
async def test_concurrent_users_never_see_each_other(backend: str, redis_client: aioredis.Redis) -> None:
    users, turns = 60, 5
    llm = ScriptedLLM([echo] * (users * turns))
    store = InMemoryStore() if backend == "memory" else None
    a = Assistant(make_runtime(llm, store=store, client=redis_client if store is None else None))

    async def user(u: int) -> list[str]:
        return [await a.chat(f"user-{u}", "c", f"marker-{u}-turn-{t}") for t in range(turns)]

    replies = await asyncio.gather(*(user(u) for u in range(users)))
    for u, got in enumerate(replies):
        assert got == [f"echo: marker-{u}-turn-{t}" for t in range(turns)]
        memory = await a.memory_of(f"user-{u}", "c")
        assert all(f"marker-{u}-" in m.content for m in memory.history) and len(memory.history) == 2 * turns
    assert a.busy_chats == 0  # the lock table holds only chats in use


async def test_three_users_one_chat_id() -> None:
    llm = ScriptedLLM([echo] * 3)
    a = Assistant(make_runtime(llm))
    got = await asyncio.gather(*(a.chat(u, "c", f"I am {u}") for u in ("alice", "bob", "carol")))
    assert got == ["echo: I am alice", "echo: I am bob", "echo: I am carol"]


async def test_turns_of_one_chat_run_one_at_a_time() -> None:
    llm = ScriptedLLM([echo] * 20)
    a = Assistant(make_runtime(llm))
    await asyncio.gather(*(a.chat("u", "c", f"line {i}") for i in range(10)))
    memory = await a.memory_of("u", "c")
    roles = [m.role for m in memory.history]
    assert roles == ["user", "assistant"] * 10  # never two questions in a row
    for question, answer in zip(memory.history[::2], memory.history[1::2], strict=True):
        assert answer.content == f"echo: {question.content}"


def say(text: str) -> object:
    return tool_calls(("send_message", {"message": text}))


async def test_forget_reaches_recall_and_new_turns_are_indexed_again(redis_client: aioredis.Redis) -> None:
    llm = ScriptedLLM(
        [
            say("Noted: PIN 4321."),
            tool_calls(("conversation_search", {"query": "PIN", "request_heartbeat": True})),
            say("I know of no PIN."),
            say("Have a good flight."),
            tool_calls(("conversation_search", {"query": "Lisbon", "request_heartbeat": True})),
            say("You said Lisbon."),
        ]
    )
    agent = TieredAssistant(make_runtime(llm, store=InMemoryStore(), client=redis_client))
    await agent.chat("u", "c", "My bank PIN is 4321")
    report = await agent.forget("u", "c")
    assert report.chats == 1 and report.recall_entries == 2
    await agent.chat("u", "c", "What is my PIN?")
    found = search_results(llm.calls[2].messages)[-1]
    assert found["total"] == 0  # the forgotten turns are not in recall memory
    await agent.chat("u", "c", "I am flying to Lisbon")
    await agent.chat("u", "c", "Where am I flying?")
    found = search_results(llm.calls[-1].messages)[-1]
    assert "User: I am flying to Lisbon" in [r["text"] for r in found["results"]]  # indexing goes on


@pytest.mark.parametrize("mode", ["brain", "tiered"])
async def test_forget_user_erases_every_tier(mode: str, redis_client: aioredis.Redis) -> None:
    replies: list[object] = [say("ok") if mode == "tiered" else "ok" for _ in range(6)]
    runtime = make_runtime(
        ScriptedLLM(replies),
        client=redis_client,
        memory_settings=MemorySettings(mode=mode),  # type: ignore[arg-type]
    )
    agent = Assistant.for_runtime(runtime)
    assert isinstance(agent.mode, TieredMode) == (mode == "tiered")
    for user, chat in (("alice", "c1"), ("alice", "c2"), ("alice:c1", "x"), ("bob", "c1")):
        await agent.chat(user, chat, f"hello from {user}/{chat}")
    assert runtime.tiers is not None
    await runtime.tiers.archival("alice").add(IndexedDoc(id="p", text="alice passport 2031"), None)
    await agent.add_knowledge("alice", "c1", "alice is vegetarian")
    before = await user_keys(runtime.tiers, "alice")
    assert before and not [k for k in before if "alice" in k.split("}")[0]]  # ids are encoded in keys
    report = await agent.forget_user("alice")
    assert report.chats == 2 and report.archival_passages == 1 and report.remaining == ()
    assert report.recall_entries == (4 if mode == "tiered" else 0)
    assert report.core_blocks == 0  # no edit: alice's blocks were the defaults, never copied
    assert await user_keys(runtime.tiers, "alice") == []
    assert await runtime.store.list_chats("alice") == []
    for user in ("bob", "alice:c1"):  # other tenants, even with look-alike ids, keep everything
        assert await user_keys(runtime.tiers, user)
        assert len((await agent.memory_of(user, "c1" if user == "bob" else "x")).history) == 2
    assert len(user_patterns("brain", "alice")) == 8  # the cold archive marker too


async def test_each_chat_keeps_its_own_usage(redis_client: aioredis.Redis) -> None:
    llm = ScriptedLLM([echo] * 6)
    a = Assistant(make_runtime(llm, client=redis_client))
    await asyncio.gather(
        a.chat("u1", "c", "one"), a.chat("u2", "c", "two words here"), a.chat("u1", "c", "three")
    )
    first, second = await a.memory_of("u1", "c"), await a.memory_of("u2", "c")
    assert (first.calls, second.calls) == (2, 1)
    by_call = {c.messages[-1].content: c.prompt_tokens for c in llm.calls}
    assert first.usage.prompt_tokens == by_call["one"] + by_call["three"]
    assert second.usage.prompt_tokens == by_call["two words here"] and second.usage.completion_tokens > 0
    await a.forget("u1", "c")
    assert (await a.memory_of("u1", "c")).calls == 0  # usage goes with the chat


async def test_erasure_reaches_recall_left_under_the_old_namespace(redis_client: aioredis.Redis) -> None:
    runtime = make_runtime(ScriptedLLM(["ok"]), client=redis_client)
    assert runtime.tiers is not None
    old = runtime.tiers.legacy_recall("alice", "c")
    await old.add(IndexedDoc(id="t1", text="User: my bank PIN is 4321"), None)
    agent = Assistant(runtime)
    await agent.chat("alice", "c", "hello")
    report = await agent.forget_user("alice")
    assert report.recall_entries == 1 and report.remaining == () and report.queued == 1
    queue = runtime.tiers.fact_queue
    assert await old.count() == 0 and await queue.backlog() == 0  # not even a queue entry naming alice
    left = sorted([k async for k in redis_client.scan_iter(match="*")])
    record = erasure_key("brain", "alice").encode()
    assert left == sorted([queue.key.encode(), record])  # and the content-free erasure record
    assert set((await redis_client.hgetall(record)).keys()) == {b"n", b"*"}
    assert all(v.isdigit() for v in (await redis_client.hgetall(record)).values())


async def test_erasure_drops_only_the_erased_users_queue_entries(redis_client: aioredis.Redis) -> None:
    runtime = make_runtime(ScriptedLLM(), client=redis_client)
    assert runtime.tiers is not None
    queue = runtime.tiers.fact_queue
    for user, chat in [("ann", "a"), ("ann", "b"), ("用户", "c"), ("annex", "a")]:
        await queue.push(user, chat, 2)
    await queue.read("w1", 10, None)  # read by a worker, not acknowledged: dropped all the same
    agent = Assistant(runtime)
    assert (await agent.forget("ann", "a")).queued == 1
    assert (await agent.forget_user("ann")).queued == 1
    assert (await agent.forget_user("用户")).queued == 1
    assert await queue.backlog() == 1 and await queue.pending() == 1  # annex's entry, still its worker's
