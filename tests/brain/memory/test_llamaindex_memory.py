"""LlamaIndex's `Memory` API on block memory, on real Redis and Valkey: `from_defaults`, the awaitable and the
blocking forms, messages over the history's budget flushed to the blocks, and seed 002 (a financial
advisor's conversation in Chinese: token_limit 500, chat_history_token_ratio 0.1, a static block and a fact
extraction block, inserted in the system message) replayed with our names."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
import redis.asyncio as aioredis

from actions.fact_block import FactBlock
from actions.memory_section import render_block_memory
from brain import ConfigError, InputError, local_runtime
from brain.backends.redis import RedisBackend
from brain.backends.redis.client import connect
from brain.llm.protocol import ChatMessage
from brain.memory.blocks import BlockMemory, StaticBlock
from brain.memory.blocks.blocking import run_blocking
from brain.memory.blocks.budget import message_tokens, oversize_count
from brain.runtime import Runtime
from brain.settings import RedisSettings
from brain.testing import ScriptedCall, ScriptedLLM

ADVISOR = "你是一位专业、谨慎的理财顾问。回答要简洁,给出具体建议,并提示投资风险。"

# Seed 002: each answer of the advisor is longer than the history's 50 tokens (500 x 0.1).
CONVERSATION = [
    (
        "你好,我叫王磊,今年35岁,在上海做软件工程师。",
        "王先生您好!很高兴为您提供理财建议。为了给您合适的方案,请告诉我您的月收入、现有存款、"
        "投资经验,以及未来几年有没有大额支出计划,比如买房、买车或者子女教育。",
    ),
    (
        "我月收入三万元,存款大约五十万,之前只买过银行定期存款。",
        "明白了。您的收入稳定,存款也比较充足。建议先留出六个月的生活费,大约十万元,作为应急资金,"
        "放在货币基金里随用随取。剩下的钱可以根据您的风险偏好和目标来配置。",
    ),
    (
        "我的风险承受能力比较保守,最多只能接受百分之十的亏损。",
        "好的,保守型的配置应该以稳健为主:大部分资金可以放在国债、银行理财和纯债基金,"
        "小部分配置宽基指数基金,并设置止损线,把整体回撤控制在百分之十以内。",
    ),
    (
        "另外,我打算五年内在杭州买房,首付大概需要一百万。",
        "五年后需要一百万首付,现有五十万还差五十万。按您每月结余计算,每月定投约八千元,"
        "再加上稳健理财的收益,五年内基本可以凑齐。买房的钱不宜投入波动大的股票类资产。",
    ),
]
FACTS = [
    ["用户名叫王磊,今年35岁。", "用户在上海做软件工程师。"],
    ["用户月收入三万元。", "用户存款约五十万元,之前只买过银行定期存款。"],
    ["用户风险偏好保守,最多接受10%的亏损。"],
    ["用户计划五年内在杭州买房,首付约需一百万元。"],
]


def extraction(facts: list[str], said: str) -> Callable[[ScriptedCall], str]:
    """The memory model's reply to one extraction: `facts`, after checking the flushed exchange is `said`."""

    def reply(call: ScriptedCall) -> str:
        assert said in call.prompt_text and "KNOWN FACTS" in call.prompt_text
        return json.dumps({"facts": facts}, ensure_ascii=False)

    return reply


def advisor_memory(runtime: Runtime, llm: ScriptedLLM, session: str = "wang-advisor") -> BlockMemory:
    return BlockMemory.from_defaults(
        session_id=session,
        user_id="wang",
        runtime=runtime,
        render=render_block_memory,
        token_limit=500,
        chat_history_token_ratio=0.1,
        memory_blocks=[
            StaticBlock(ADVISOR, name="advisor"),
            FactBlock(llm, runtime.tokenizer, max_facts=20),
        ],
        insert_method="system",
    )


async def test_seed_002_the_advisor_sees_the_extracted_facts_in_the_system_message(
    redis_client: aioredis.Redis,
) -> None:
    llm = ScriptedLLM([extraction(facts, user) for facts, (user, _) in zip(FACTS, CONVERSATION, strict=True)])
    runtime = local_runtime(llm, backend=RedisBackend(redis_client))
    memory = advisor_memory(runtime, llm)
    assert memory.settings.history_limit == 50 and memory.settings.flush_size == 50
    for i, (user, answer) in enumerate(CONVERSATION):
        assert message_tokens(runtime.tokenizer, ChatMessage(role="assistant", content=answer)) > 50
        await memory.aput(ChatMessage(role="user", content=user))
        await memory.aput(ChatMessage(role="assistant", content=answer))  # over budget: flushed, not refused
        assert len(llm.calls) == i + 1  # one extraction per exchange, each exchange read once
        assert [m.role for m in await memory.aget()] == ["system"]  # the exchange went to the blocks
    llm.assert_consumed()

    prompt = await memory.aget("根据我的情况,这五十万应该怎么配置?")
    system = prompt[0].content or ""
    assert prompt[0].role == "system" and len(prompt) == 1
    assert ADVISOR in system and '<item kind="advisor block"' in system
    assert '<item kind="facts block"' in system
    for fact in (f for facts in FACTS for f in facts):
        assert f"- {fact}" in system
    assert system.index("<memory>") < system.index("王磊") < system.index("</memory>")
    assert sum(message_tokens(runtime.tokenizer, m) for m in prompt) <= 500
    everything = await memory.aget_all()
    assert [m.content for m in everything] == [text for pair in CONVERSATION for text in pair]

    again = advisor_memory(runtime, ScriptedLLM())  # a restart: the facts are in Redis, not in the block
    assert (await again.aget())[0].content == (await memory.aget())[0].content
    assert await again.areset() >= 1
    assert await again.aget_all() == []
    assert "王磊" not in ((await again.aget())[0].content or "")  # the facts went too; the static block stays


async def test_a_message_over_the_history_budget_goes_to_the_blocks_with_what_came_before(
    redis_client: aioredis.Redis,
) -> None:
    llm = ScriptedLLM([extraction(["用户想了解基金定投。"], "基金定投")])
    runtime = local_runtime(llm, backend=RedisBackend(redis_client))
    memory = advisor_memory(runtime, llm, session="long")
    await memory.aput(ChatMessage(role="user", content="你好"))
    await memory.aput(ChatMessage(role="system", content="今天是2025年6月1日。"))
    long_question = "请详细介绍一下基金定投:" + "它的原理、优缺点、适合什么样的人、应该怎么选择基金?" * 3
    await memory.aput_messages([ChatMessage(role="user", content=long_question)])
    prompt = await memory.aget()
    assert [m.role for m in prompt] == ["system"]  # both user messages flushed, in order
    system = prompt[0].content or ""
    assert system.startswith("今天是2025年6月1日。")  # system messages are never flushed
    assert "- 用户想了解基金定投。" in system
    await memory.aput(ChatMessage(role="user", content="谢谢"))
    assert [m.content for m in await memory.aget()][-1] == "谢谢"  # what fits stays in the history
    said = ["今天是2025年6月1日。", "你好", long_question, "谢谢"]
    assert [m.content for m in await memory.aget_all()] == said


def test_which_messages_a_message_over_budget_takes_along() -> None:
    assert oversize_count(["user", "assistant"], [10, 10], threshold=15) == 0
    assert oversize_count(["user", "assistant", "user"], [10, 20, 10], threshold=15) == 2
    assert oversize_count(["user", "assistant", "tool", "assistant"], [20, 5, 5, 5], threshold=15) == 4
    assert oversize_count(["user", "assistant", "user", "assistant"], [20, 5, 5, 5], threshold=15) == 2


def test_the_blocking_forms_keep_one_loop_for_the_redis_client(redis_url: str) -> None:
    client = connect(redis_url, RedisSettings())
    try:
        memory = BlockMemory.from_defaults(
            "sync",
            runtime=local_runtime(ScriptedLLM(), backend=RedisBackend(client)),
            render=render_block_memory,
            memory_blocks=[StaticBlock(ADVISOR)],
        )
        for i in range(3):  # a new loop per call would break the client's pool on the second call
            memory.put(ChatMessage(role="user", content=f"第{i}个问题"))
            memory.put_messages([ChatMessage(role="assistant", content="好的")])
        prompt = memory.get("还有吗?")
        assert ADVISOR in (prompt[0].content or "") and prompt[-1].content == "好的"
        assert len(memory.get_all()) == 6
        assert memory.reset() >= 1 and memory.get_all() == []
    finally:
        run_blocking(client.aclose, name="close", instead="client.aclose()")


async def test_the_blocking_forms_refuse_a_running_loop(redis_client: aioredis.Redis) -> None:
    llm = ScriptedLLM()
    memory = advisor_memory(local_runtime(llm, backend=RedisBackend(redis_client)), llm, session="inside")
    with pytest.raises(RuntimeError, match=r"BlockMemory\.put\(\) blocks.*await memory\.aput\("):
        memory.put(ChatMessage(role="user", content="你好"))
    with pytest.raises(RuntimeError, match=r"await memory\.aget\("):
        memory.get()
    assert await memory.aget_all() == []


async def test_from_defaults_checks_its_settings_and_ids(redis_client: aioredis.Redis) -> None:
    llm = ScriptedLLM()
    runtime = local_runtime(llm, backend=RedisBackend(redis_client))
    with pytest.raises(ConfigError, match="token_limit"):
        BlockMemory.from_defaults(runtime=runtime, render=render_block_memory, token_limit=50)
    with pytest.raises(ConfigError, match="token_flush_size"):
        BlockMemory.from_defaults(runtime=runtime, render=render_block_memory, token_flush_size=40_000)
    with pytest.raises(InputError, match="session_id"):
        BlockMemory.from_defaults("a/b", runtime=runtime, render=render_block_memory)
    with pytest.raises(ConfigError, match="backend"):
        BlockMemory.from_defaults(runtime=local_runtime(llm), render=render_block_memory)
    one, other = (BlockMemory.from_defaults(runtime=runtime, render=render_block_memory) for _ in range(2))
    assert one.session.vectors_base != other.session.vectors_base  # a new session id each
    assert one.settings.token_limit == 30_000 and one.settings.flush_size == 3_000  # LlamaIndex's defaults

    memory = BlockMemory.from_defaults(
        "u",
        runtime=runtime,
        render=render_block_memory,
        token_limit=500,
        memory_blocks=[StaticBlock(ADVISOR)],
        insert_method="user",
    )
    await memory.aput(ChatMessage(role="user", content="你好"))
    prompt = await memory.aget()
    assert len(prompt) == 1 and prompt[0].role == "user"
    assert ADVISOR in (prompt[0].content or "") and (prompt[0].content or "").endswith("你好")
