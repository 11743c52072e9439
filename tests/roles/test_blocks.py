"""`memory.mode: blocks`: the Assistant with block memory, on real Redis and Valkey."""

from __future__ import annotations

import json

import pytest
import redis.asyncio as aioredis

from brain import ConfigError, InMemoryStore, MemorySettings
from brain.llm.protocol import ChatMessage
from brain.memory.blocks.budget import message_tokens
from brain.memory.erasure import user_keys
from brain.settings import BlockSettings
from brain.testing import ScriptedLLM, tool_calls
from roles import Assistant, BlocksAssistant, BlocksMode
from roles.skills import Skills
from tests.roles.test_assistant import WEATHER
from tests.support.runtime import make_runtime

BLOCKS = MemorySettings(  # a tight limit: the memory section's standing instruction takes ~40 of it
    mode="blocks",
    blocks=BlockSettings(
        token_limit=640, token_flush_size=100, static="The user's name is Ann.", vector_top_k=1
    ),
)


def facts(*texts: str) -> str:
    return json.dumps({"facts": list(texts)})


async def test_every_prompt_fits_the_limit_with_tool_rounds_and_the_blocks_remember(
    redis_client: aioredis.Redis,
) -> None:
    replies: list[object] = []
    for i in range(25):
        replies += [tool_calls(("get_weather", {"city": f"City{i}"})), f"It is sunny in City{i}."]
    llm = ScriptedLLM(replies)  # type: ignore[arg-type]
    memory_llm = ScriptedLLM([facts("Ann's locker code is 4417")] + [facts()] * 40)
    runtime = make_runtime(llm, client=redis_client, memory_settings=BLOCKS, memory_llm=memory_llm)
    assistant = Assistant.for_runtime(runtime, skills=Skills.load([WEATHER]))
    assert isinstance(assistant.mode, BlocksMode)
    assert await assistant.chat("ann", "c", "My locker code is 4417, remember it.") == "It is sunny in City0."
    for i in range(1, 25):
        await assistant.chat("ann", "c", f"What is the weather in City{i}? Tell me in detail please.")
    tokenizer = runtime.tokenizer
    for call in llm.calls:
        assert sum(message_tokens(tokenizer, m) for m in call.messages) <= 640
        assert "The user's name is Ann." in (call.messages[0].content or "")  # priority 0: always there
    last = llm.calls[-1].messages
    assert "4417" in (last[0].content or "")  # flushed long ago, kept by the facts block
    assert any(m.role == "tool" for m in llm.calls[-2].messages)  # a turn's tool round is in its prompt
    history = [m for m in last[1:] if m.role != "system"]
    assert history[0].role == "user"
    assert any(m.tool_calls for m in history[:-2])  # earlier turns' tool calls stay in the history


async def test_retry_and_rewrite_reach_the_blocks_and_forget_erases_them(
    redis_client: aioredis.Redis,
) -> None:
    llm = ScriptedLLM(["first answer", "second answer"])
    runtime = make_runtime(llm, client=redis_client, memory_settings=BLOCKS)
    assistant = BlocksAssistant(runtime)
    await assistant.chat("bo", "c", "hello there")
    again = "".join([p async for p in assistant.retry_stream("bo", "c")])
    assert again == "second answer"
    held = await assistant.block_memory("bo", "c").aget_all()
    assert [m.content for m in held] == ["hello there", "second answer"]
    await assistant.rewrite("bo", "c", "my own answer")
    assert [m.content for m in await assistant.block_memory("bo", "c").aget_all()] == [
        "hello there",
        "my own answer",
    ]
    assert [m.content for m in (await assistant.memory_of("bo", "c")).history] == [
        "hello there",
        "my own answer",
    ]
    assert runtime.tiers is not None and await user_keys(runtime.tiers, "bo")
    await assistant.forget_user("bo")
    assert await user_keys(runtime.tiers, "bo") == []


def test_blocks_mode_needs_redis() -> None:
    runtime = make_runtime(ScriptedLLM([]), store=InMemoryStore(), memory_settings=BLOCKS)
    with pytest.raises(ConfigError, match="keeps its blocks in a backend"):
        Assistant.for_runtime(runtime)


def test_the_prompt_message_type_is_the_gateways() -> None:
    assert ChatMessage(role="tool", tool_call_id="x", content="r").role == "tool"
