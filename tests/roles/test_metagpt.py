"""MetaGPT's call forms, as a MetaGPT user writes them: the Assistant bound to one chat (talk / think / act
/ refine_memory / get_memory / load_memory), BrainMemory standalone with Redis keys and `llm=`, TalkAction,
Context and LLM()."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as aioredis
from pydantic import ValidationError

from brain import InMemoryStore, InputError
from brain.llm.protocol import ChatMessage
from brain.loader import load_settings
from brain.testing import ScriptedLLM, obey_word_limit
from roles.metagpt import (
    LLM,
    Assistant,
    BrainMemory,
    Context,
    Message,
    SkillAction,
    TalkAction,
    any_to_str,
)
from roles.skills import SkillDeclaration, Skills
from tests.support.openai_server import Chat, ScriptedOpenAIServer
from tests.support.prompts import memory_items
from tests.support.runtime import make_runtime

OSLO = "I am flying to Oslo next Friday."


def assistant(llm: ScriptedLLM, **options: Any) -> Assistant:
    return Assistant(make_runtime(llm, store=InMemoryStore()), **options)


async def test_talk_think_act_answers_once_per_talk() -> None:
    llm = ScriptedLLM(
        ["Great, Oslo!", json.dumps({"related": True, "rewritten": "Book hotels in Oslo"}), "Booked."]
    )
    role = assistant(llm, user_id="ann", chat_id="trip")
    answers: list[Message] = []
    for text in (OSLO, "Book hotels there"):
        await role.talk(text)
        while await role.think():
            assert isinstance(role.rc.todo, TalkAction)
            answers.append(await role.act())
            assert role.rc.todo is None
    assert [m.content for m in answers] == ["Great, Oslo!", "Booked."]
    assert all(m.role == "assistant" and m.cause_by == any_to_str(TalkAction) for m in answers)
    assert [m.content for m in role.memory.history] == [OSLO, "Great, Oslo!", "Book hotels there", "Booked."]
    assert role.memory.last_talk is None
    stored = await role.memory_of("ann", "trip")  # appended to memory and saved
    assert [m.content for m in stored.history] == [m.content for m in role.memory.history]


async def test_think_refines_memory_and_sets_the_talk_action() -> None:
    llm = ScriptedLLM(["Great, Oslo!", json.dumps({"related": True, "rewritten": "Book hotels in Oslo"})])
    role = assistant(llm, language="Chinese")
    await role.talk(OSLO)
    assert await role.think()
    await role.act()
    await role.talk("Book hotels there")
    assert await role.think()
    todo = role.rc.todo
    assert isinstance(todo, TalkAction) and todo.i_context == "Book hotels in Oslo"
    assert "Oslo next Friday" in todo.history_summary
    assert not re.search(r"\{\w+\}", todo.prompt) and not re.search(r"\{\w+\}", todo.prompt_gpt4)
    assert role.persona.language == "Chinese"


async def test_think_is_false_with_nothing_pending_and_act_refuses() -> None:
    role = assistant(ScriptedLLM([]))
    assert not await role.think()
    with pytest.raises(InputError, match="talk"):
        await role.act()


async def test_refine_memory_returns_the_text_to_answer() -> None:
    role = assistant(
        ScriptedLLM(["Great, Oslo!", json.dumps({"related": True, "rewritten": "Is Oslo cold?"})])
    )
    await role.talk(OSLO)
    assert await role.refine_memory() == OSLO
    await role.act()  # the text refine_memory took is the one answered
    await role.talk("Is it cold there?")
    assert await role.refine_memory() == "Is Oslo cold?"
    assert await role.refine_memory() is None  # taken: nothing left to answer


async def test_get_memory_load_memory_round_trip() -> None:
    store = InMemoryStore()
    first = Assistant(make_runtime(ScriptedLLM(["Great, Oslo!"]), store=store), user_id="ann", chat_id="trip")
    await first.talk(OSLO)
    while await first.think():
        await first.act()
    saved = first.get_memory()
    assert json.loads(saved)["history"][0]["content"] == OSLO
    second = Assistant(make_runtime(ScriptedLLM(["Yes, Friday."]), store=store))
    second.load_memory(json.loads(saved))  # a dict, as MetaGPT passes it (JSON text works too)
    assert second.home.user_id == "ann" and second.memory.history[0].content == OSLO
    await second.talk("Am I flying on Friday?")
    while await second.think():
        await second.act()
    stored = await second.memory_of("ann", "trip")
    assert [m.content for m in stored.history] == [
        OSLO,
        "Great, Oslo!",
        "Am I flying on Friday?",
        "Yes, Friday.",
    ]
    with pytest.raises(InputError, match="BrainMemory"):
        second.load_memory({"history": [], "llm": "gpt-4"})


async def test_a_skill_action_in_todo_runs_that_skill() -> None:
    add = SkillDeclaration(
        name="add",
        description="Add two integers",
        entry="tests.roles.sample_skills:add",
        parameters={"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}},
    )
    skills = Skills.load([add])
    role = assistant(ScriptedLLM([]), skills=skills)
    await role.talk("add 2 and 3")
    assert await role.think()
    role.rc.todo = SkillAction("add", {"a": 2, "b": 3}, skills=skills)
    message = await role.act()
    assert message.content == "5" and message.cause_by == any_to_str(SkillAction)
    assert [m.content for m in role.memory.history] == ["add 2 and 3", "5"]


# ---------------------------------------------------------------- TalkAction


async def test_talk_action_call_form() -> None:
    ctx = Context(config=load_settings(environ={}), kwargs={"language": "Chinese"})
    ctx.kwargs.agent_description = "a travel agent"
    action = TalkAction(i_context="Where should I stay?", knowledge="Ann likes quiet places.", context=ctx)
    assert "You are a travel agent." in action.prompt and "Chinese" in action.prompt
    assert "None" not in TalkAction(i_context="hi").prompt  # no "You are None."
    llm = ScriptedLLM(["住在老城区。"])
    message = await action.run(llm)
    assert message.role == "assistant" and message.cause_by == "TalkAction" and action.rsp == message
    sent = llm.calls[0].messages
    assert [m.role for m in sent] == ["system", "user"] and sent[-1].content == "Where should I stay?"
    assert "Answer in Chinese" in (sent[0].content or "")
    knowledge = ("knowledge", ' source="user turn or API write"', "Ann likes quiet places.")
    assert memory_items(sent) == [knowledge]
    with pytest.raises(ValidationError):
        TalkAction(i_context="hi", unknown=1)


def test_any_to_str() -> None:
    assert any_to_str(TalkAction) == "TalkAction" == any_to_str(TalkAction(i_context="x"))
    assert any_to_str("UserRequirement") == "UserRequirement"


# ---------------------------------------------------------------- BrainMemory, standalone


@pytest.fixture
async def context(redis_server_url: str, openai_server: ScriptedOpenAIServer) -> AsyncIterator[Context]:
    """The process's default context, on a real redis-server and the loopback model."""
    settings = load_settings(
        environ={
            "BRAIN_REDIS_URL": redis_server_url,
            "OPENAI_BASE_URL": openai_server.url,
            "OPENAI_API_KEY": "sk-t",
        }
    )
    ctx = Context(config=settings)
    previous, Context._default = Context._default, ctx
    async with aioredis.from_url(redis_server_url) as client:
        await client.flushdb()
    yield ctx
    await ctx.aclose()
    Context._default = previous


def test_unknown_fields_are_an_error() -> None:
    with pytest.raises(ValidationError, match="llm"):
        BrainMemory(llm="gpt-4", config={})
    assert (
        BrainMemory.to_int("3", 0) == 3
        and BrainMemory.to_int("x", -1) == -1
        and BrainMemory.to_int(None, 7) == 7
    )


async def test_dumps_and_loads_by_redis_key(context: Context, redis_server_url: str) -> None:
    memory = BrainMemory()
    memory.add_talk(Message(content="我下周五飞奥斯陆。"))
    memory.add_answer(Message(content="好的！"))
    memory.add_knowledge(Message(content="Ann prefers window seats."))
    key = BrainMemory.to_redis_key("brain", "ann", "trip")
    assert await memory.dumps(redis_key=key)
    assert await memory.dumps(redis_key=key)  # nothing new: nothing written twice
    loaded = await BrainMemory.loads(redis_key=key)
    assert (loaded.user_id, loaded.chat_id) == ("ann", "trip")
    assert [m.content for m in loaded.history] == ["我下周五飞奥斯陆。", "好的！"]
    assert loaded.get_knowledge() == "Ann prefers window seats." and loaded.is_history_available
    assert loaded.exists("好的！") and not loaded.exists("nope")
    async with aioredis.from_url(redis_server_url) as client:
        keys = [k async for k in client.scan_iter(match="brain:*")]
        assert keys and [await client.ttl(k) for k in keys] == [-1] * len(keys)  # no silent expiry
    other = await BrainMemory.loads(redis_key="any:key:of:mine")  # any other key: a chat of its own
    assert other.history == [] and other.chat_id == "any:key:of:mine"
    assert (await BrainMemory.loads(redis_key="")).history == []
    with pytest.raises(InputError, match="ttl_seconds"):
        await loaded.dumps(redis_key=key, timeout_sec=1800)
    with pytest.raises(InputError, match="another chat"):
        await loaded.dumps(redis_key=BrainMemory.to_redis_key("brain", "bob", "x"))


async def test_a_loaded_memory_keeps_its_summary_when_dumped_elsewhere(context: Context) -> None:
    memory = BrainMemory(historical_summary="Ann flies to Oslo on Friday.")
    memory.add_talk(Message(content="Which terminal?"))
    await memory.dumps(redis_key="trip-notes")
    loaded = await BrainMemory.loads(redis_key="trip-notes")
    assert loaded.historical_summary == "Ann flies to Oslo on Friday."
    assert [m.content for m in loaded.history] == ["Which terminal?"]


async def test_llm_work_with_llm_argument(context: Context) -> None:
    llm = ScriptedLLM([obey_word_limit, "Oslo trip", "TRUE", "Book hotels in Oslo"])
    memory = BrainMemory()
    for text in (OSLO, "Nice!", "Which hotel is near the station?", "The Thon."):
        memory.add_history(Message(content=text, role="user"))
    await memory.dumps(redis_key="summaries")
    summary = await memory.summarize(llm=llm, max_words=50, keep_language=True)
    assert summary and memory.historical_summary == summary and memory.history == []
    assert "same language" in (llm.calls[0].messages[0].content or "")
    assert await memory.get_title(llm=llm, max_words=5) == "Oslo trip"
    assert await BrainMemory.is_related("Book hotels there", summary, llm)
    assert (
        await BrainMemory.rewrite(sentence="Book hotels there", context=summary, llm=llm)
        == "Book hotels in Oslo"
    )
    assert not await BrainMemory.is_related("What is 2 + 2?", "Ann plays chess.", llm)  # no call: clearly not
    assert (await BrainMemory.loads(redis_key="summaries")).historical_summary == summary


async def test_assistant_from_a_context_and_llm(
    context: Context, openai_server: ScriptedOpenAIServer
) -> None:
    openai_server.script(Chat("你好，安！"), Chat("ok"))
    context.kwargs.language = "Chinese"
    role = Assistant(context=context)  # no runtime: the context's, opened on first use
    assert role.persona.language == "Chinese"
    await role.talk("你好，我是安。")
    while await role.think():
        message = await role.act()
    assert message.content == "你好，安！"
    assert "Answer in Chinese" in openai_server.chat_requests()[0].body["messages"][0]["content"]
    reply = await LLM().complete([ChatMessage(role="user", content="hi")])
    assert reply.content == "ok"
