"""Block memory on real Redis and Valkey: the FIFO, flushes into blocks, budgets, restarts, tenants."""

from __future__ import annotations

import json

import pytest
import redis.asyncio as aioredis

from actions.fact_block import FactBlock
from actions.memory_section import render_block_memory
from brain.backends.redis import RedisBackend
from brain.errors import InputError, LLMError
from brain.llm.protocol import ChatMessage, ToolCall
from brain.llm.tokens import OFFLINE_ENCODING, Tokenizer
from brain.memory.blocks import BlockMemory, StaticBlock, VectorBlock
from brain.memory.blocks.budget import message_tokens
from brain.settings import BlockSettings
from brain.testing import ScriptedCall, ScriptedLLM
from tests.support.stores import redis_tiers

TOKENIZER = Tokenizer.for_model("", OFFLINE_ENCODING)
SMALL = BlockSettings(token_limit=400, chat_history_token_ratio=0.5, token_flush_size=60)


def facts_reply(*facts: str) -> str:
    return json.dumps({"facts": list(facts)})


def memory(client: aioredis.Redis, user: str, *blocks: object, chat: str = "c") -> BlockMemory:
    return BlockMemory(
        RedisBackend(client).block_session(user, chat),
        settings=SMALL,
        blocks=blocks,
        tokenizer=TOKENIZER,  # type: ignore[arg-type]
        render=render_block_memory,
    )


def exchange(i: int) -> list[ChatMessage]:
    call = ToolCall(id=f"call{i}", name="lookup", arguments=json.dumps({"q": f"item {i}"}))
    return [
        ChatMessage(role="user", content=f"question {i} about topic {i}"),
        ChatMessage(role="assistant", tool_calls=(call,)),
        ChatMessage(role="tool", tool_call_id=f"call{i}", content=f"result {i} " * 8),
        ChatMessage(role="assistant", content=f"answer {i}"),
    ]


async def test_the_history_stays_in_budget_and_flushed_messages_are_archived(
    redis_client: aioredis.Redis,
) -> None:
    m = memory(redis_client, "ann", StaticBlock("Always answer kindly.", priority=0))
    await m.aput(ChatMessage(role="system", content="You are Lily."))
    for i in range(30):
        await m.aput_messages(exchange(i))
        prompt = await m.aget("next?", system="Persona.")
        assert prompt[0].role == "system" and "Persona." in (prompt[0].content or "")
        assert "Always answer kindly." in (prompt[0].content or "")  # priority 0: always there
        assert any(p.content == "You are Lily." for p in prompt)  # a system message is never flushed
        history = [p for p in prompt if p.role != "system"]
        assert history[0].role == "user"  # never an orphan assistant or tool message first
        assert sum(message_tokens(TOKENIZER, p) for p in prompt) <= SMALL.token_limit
    everything = await m.aget_all()
    assert len(everything) == 1 + 30 * 4  # nothing is deleted by a flush
    again = memory(redis_client, "ann", StaticBlock("Always answer kindly.", priority=0))  # a restart
    assert await again.aget() == await m.aget()


async def test_flushed_messages_become_facts_in_one_call_per_flush(redis_client: aioredis.Redis) -> None:
    llm = ScriptedLLM([facts_reply("Ann lives in Oslo"), facts_reply("Ann is allergic to nuts")] * 10)
    m = memory(redis_client, "ann", FactBlock(llm, TOKENIZER))
    await m.aput_messages(
        [ChatMessage(role="user", content="I live in Oslo"), ChatMessage(role="assistant", content="ok")]
    )
    assert llm.calls == []  # nothing flushed yet: no call
    for i in range(12):
        await m.aput_messages(exchange(i))
    assert 1 <= len(llm.calls) <= 12  # one extraction per flush (at least 60 tokens), not per message
    assert "I live in Oslo" in llm.calls[0].prompt_text
    flushed = len(await m.session.archived(0))
    seen = " ".join(c.messages[1].content or "" for c in llm.calls)
    assert all(seen.count(f"question {i} ") == 1 for i in range(flushed // 4 - 1))  # each read once
    prompt = await m.aget("what do you know?")
    system = prompt[0].content or ""
    assert "- Ann lives in Oslo" in system and '<item kind="facts block"' in system
    assert system.count("\n<memory>\n") == 1 and system.endswith("\n</memory>")


async def test_a_bad_condense_never_empties_the_facts(redis_client: aioredis.Redis) -> None:
    def condense_to_nothing(call: ScriptedCall) -> str:
        assert "at most 3 facts" in (call.messages[0].content or "")
        return facts_reply()

    llm = ScriptedLLM([facts_reply("f1", "f2", "f3"), facts_reply("f4"), condense_to_nothing])
    block = FactBlock(llm, TOKENIZER, max_facts=3)
    session = RedisBackend(redis_client).block_session("bo", "c")
    await block.aput(session, [_record("one")])
    await block.aput(session, [_record("two")])
    assert await block.facts(session) == ["f1", "f2", "f3", "f4"]  # kept as it was, over the limit
    good = ScriptedLLM([facts_reply("f5"), facts_reply("f1 and f2", "f3", "f4 and f5")])
    await FactBlock(good, TOKENIZER, max_facts=3).aput(session, [_record("three")])
    assert await block.facts(session) == ["f1 and f2", "f3", "f4 and f5"]


async def test_a_failing_block_reads_the_flushed_messages_again_later(redis_client: aioredis.Redis) -> None:
    llm = ScriptedLLM([LLMError("HTTP 500"), facts_reply("Cy plays chess")])
    m = memory(redis_client, "cy", FactBlock(llm, TOKENIZER))
    i = 0
    while not await m.session.archived_count():  # until the first flush
        await m.aput_messages(exchange(i))
        i += 1
    assert len(llm.calls) == 1  # failed, logged, the mark rolled back
    await m.feed_blocks()
    assert len(llm.calls) == 2 and "question 0" in llm.calls[1].prompt_text
    assert "Cy plays chess" in ((await m.aget())[0].content or "")


async def test_one_vector_block_serves_many_sessions_without_leaks(redis_client: aioredis.Redis) -> None:
    shared = VectorBlock(redis_tiers(redis_client).index, TOKENIZER, top_k=3)
    ann, bo = memory(redis_client, "ann", shared), memory(redis_client, "bo", shared)
    await ann.aput_messages([ChatMessage(role="user", content="my locker code is 4417 " * 10)])
    for i in range(8):
        await ann.aput_messages(exchange(i))
        await bo.aput_messages(exchange(i))
    assert "4417" in ((await ann.aget("what is my locker code?"))[0].content or "")
    assert "4417" not in str(await bo.aget("what is my locker code?"))


async def test_a_message_over_the_history_budget_is_archived(redis_client: aioredis.Redis) -> None:
    m = memory(redis_client, "di")
    said = [ChatMessage(role="user", content="ok"), ChatMessage(role="user", content="x " * 400)]
    await m.aput_messages(said)
    assert await m.aget_all() == said
    assert (await m.session.active())[0] == [] and await m.session.archived_count() == 2
    with pytest.raises(InputError, match="expected a ChatMessage"):
        await m.aput("hello")  # type: ignore[arg-type]


def _record(text: str) -> object:
    from brain.memory.blocks import Record

    return Record(message=ChatMessage(role="user", content=text), tokens=5)


async def test_an_answer_is_replaced_only_while_it_ends_the_history(redis_client: aioredis.Redis) -> None:
    m = memory(redis_client, "rae")
    assert not await m.replace_answer("nothing to replace")  # empty history
    await m.aput_messages(exchange(0))
    assert await m.replace_answer("a better answer 0")
    assert [x.content for x in await m.aget_all()][-1] == "a better answer 0"
    await m.aput(ChatMessage(role="user", content="and then?"))
    assert not await m.replace_answer("not an answer's place")  # the history ends with a question
    assert [x.content for x in await m.aget_all()][-2:] == ["a better answer 0", "and then?"]
