"""MemGPT keeps every step of a turn: tool calls with their arguments, inner thoughts and results are stored
with the turn, given back to the model in later turns (a call leaves the window with its results), found by
conversation search, and never part of the reply."""

from __future__ import annotations

from typing import Any

import redis.asyncio as aioredis

from actions.base import Persona
from actions.talk import render_talk
from brain import InMemoryStore
from brain.llm.protocol import ChatMessage
from brain.llm.tokens import Tokenizer
from brain.memory.steps import RESULT, STEP, as_chat, kept_steps
from brain.message import Message
from brain.testing import ScriptedLLM, tool_calls
from roles.tiered import TieredAssistant
from tests.support.prompts import search_results
from tests.support.runtime import make_runtime, split_options


def tiered(llm: ScriptedLLM, client: aioredis.Redis, **kw: Any) -> TieredAssistant:
    runtime, options = split_options({"store": InMemoryStore(), **kw})
    return TieredAssistant(make_runtime(llm, client=client, **runtime), **options)


def say(text: str) -> object:
    return tool_calls(("send_message", {"message": text}))


async def test_every_step_is_stored_given_back_and_searchable(redis_client: aioredis.Redis) -> None:
    thinking = tool_calls(
        ("core_memory_append", {"label": "human", "content": "Name: Ann", "request_heartbeat": True}),
        content="She told me her name; I should remember it.",
    )
    llm = ScriptedLLM(
        [
            thinking,
            say("Nice to meet you, Ann!"),
            tool_calls(("conversation_search", {"query": "Name: Ann", "request_heartbeat": True})),
            say("You told me your name earlier."),
        ]
    )
    agent = tiered(llm, redis_client)
    assert await agent.chat("u", "c", "I am Ann") == "Nice to meet you, Ann!"  # the reply: no step in it
    turns = (await agent.export_chat("u", "c")).turns
    assert [(t.message.role, t.message.cause_by) for t in turns] == [
        ("user", ""),
        ("assistant", STEP),
        ("tool", RESULT),
        ("assistant", "TalkAction"),
    ]
    step, result = turns[1].message, turns[2].message
    assert step.content.startswith("She told me her name; I should remember it.\n→ core_memory_append(")
    assert step.metadata["tool_calls"][0]["name"] == "core_memory_append"
    assert result.metadata["tool_call_id"] == "call_0" and result.content.startswith("core_memory_append → ")
    assert await agent.chat("u", "c", "What do you know about me?") == "You told me your name earlier."
    later = llm.calls[
        2
    ].messages  # the next turn's first call: the step as the model made it, then its result
    calls = [m for m in later if m.tool_calls]
    assert calls and calls[0].tool_calls[0].name == "core_memory_append"
    assert calls[0].content == "She told me her name; I should remember it."
    assert later[later.index(calls[0]) + 1].role == "tool"
    assert later[later.index(calls[0]) + 1].tool_call_id == calls[0].tool_calls[0].id
    found = search_results(llm.calls[3].messages)[-1]
    assert any("→ core_memory_append(" in r["text"] for r in found["results"])  # conversation_search sees it


def test_a_call_leaves_the_window_with_its_results() -> None:
    trail = tool_calls(("archival_memory_search", {"query": "x" * 400}), content="looking").as_message()
    steps = kept_steps(
        [trail, ChatMessage(role="tool", tool_call_id="call_0", content="nothing")], sent_from="A"
    )
    history = [Message(content="hi"), *steps, Message(role="assistant", content="ok")]
    tokenizer = Tokenizer.for_model("gpt-4o-mini")
    costs = [tokenizer.count_turn(m.content) for m in history]
    small = render_talk(
        persona=Persona(), text="next", tokenizer=tokenizer, history_budget=costs[-1] + costs[-2] + 1,
        history=history, history_tokens=costs,
    )  # fmt: skip
    assert [m.role for m in small] == ["system", "assistant", "user"]  # the result went with its call
    whole = render_talk(
        persona=Persona(), text="next", tokenizer=tokenizer, history_budget=10_000, history=history,
        history_tokens=costs,
    )  # fmt: skip
    assert [m.role for m in whole] == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert whole[2] == as_chat(steps[0]) and whole[2].tool_calls[0].name == "archival_memory_search"


def test_send_message_is_the_answer_not_a_step() -> None:
    reply = tool_calls(("send_message", {"message": "Hello"})).as_message()
    assert kept_steps([reply, ChatMessage(role="tool", tool_call_id="call_0", content="sent")], sent_from="A",
                      hidden=frozenset({"send_message"})) == []  # fmt: skip
    with_ids = kept_steps(
        [tool_calls(("archival_memory_insert", {"content": "x"})).as_message()], sent_from="A", ids="m1"
    )
    assert [m.id for m in with_ids] == ["m1:step0"]


async def test_retry_and_pop_take_an_exchange_with_its_steps(redis_client: aioredis.Redis) -> None:
    insert = tool_calls(
        ("archival_memory_insert", {"content": "Ann flies Friday", "request_heartbeat": True})
    )
    llm = ScriptedLLM([insert, say("Saved."), say("Saved again.")])
    agent = tiered(llm, redis_client)
    await agent.chat("u", "c", "Remember my flight")
    retried = "".join([piece async for piece in agent.retry_stream("u", "c")])
    assert retried == "Saved again."
    turns = (await agent.export_chat("u", "c")).turns
    shown = [(t.message.role, t.hidden) for t in turns]
    assert shown == [("user", True), ("assistant", True), ("tool", True), ("assistant", True),
                     ("user", False), ("assistant", False)]  # fmt: skip
    taken = await agent.take_back_exchanges("u", "c", 1)
    assert taken.exchanges == 1 and len(taken.turns) == 2
