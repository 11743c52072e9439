"""refine_memory as the design card says: a follow-up that points back at the conversation is checked and
rewritten self-contained by one memory-model call; the answer sees both, memory search uses the rewrite."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from brain import InMemoryStore, MemorySettings
from brain.storage.facts import Fact
from brain.testing import ScriptedCall, ScriptedLLM, obey_word_limit
from roles.assistant import Assistant
from tests.support.runtime import make_runtime

OSLO = "I am flying to Oslo next Friday."


def related(rewritten: str) -> str:
    return json.dumps({"related": True, "rewritten": rewritten})


def assistant(llm: ScriptedLLM, memory_llm: ScriptedLLM | None = None, **settings: Any) -> Assistant:
    runtime = make_runtime(
        llm, store=InMemoryStore(), memory_llm=memory_llm, memory_settings=MemorySettings(**settings)
    )
    return Assistant(runtime)


def asked(call: ScriptedCall) -> str:
    return call.messages[-1].content or ""


async def test_a_follow_up_is_rewritten_once_and_answered_with_both() -> None:
    talk, memory = (
        ScriptedLLM(["Great, Oslo!", "Booked."]),
        ScriptedLLM([related("Book hotels in Oslo for me")]),
    )
    a = assistant(talk, memory)
    await a.chat("u", "c", OSLO)
    assert await a.chat("u", "c", "Book hotels there for me") == "Booked."
    [relate] = memory.calls  # one extra call, on the memory model, for the follow-up only
    assert relate.json_schema is not None and relate.json_schema.name == "relate_and_rewrite"
    assert "User: I am flying to Oslo next Friday." in asked(relate) and "Book hotels there for me" in asked(
        relate
    )
    final = asked(talk.calls[-1])
    assert final.startswith("Book hotels there for me")  # the user's words, once
    assert final.count("Book hotels there for me") == 1 and "Book hotels in Oslo for me" in final
    stored = await a.memory_of("u", "c")
    assert [m.content for m in stored.history] == [
        OSLO,
        "Great, Oslo!",
        "Book hotels there for me",
        "Booked.",
    ]


async def test_memory_search_uses_the_rewrite() -> None:
    talk, memory = ScriptedLLM(["Noted.", "Done."]), ScriptedLLM([related("Book hotels in Oslo for me")])
    a = assistant(talk, memory)
    searched: list[str] = []

    async def recalled_facts(
        user_id: str | bytes, text: str, chat_id: str | bytes | None = None
    ) -> list[Fact]:
        searched.append(text)
        return []

    a.engine.recalled_facts = recalled_facts  # type: ignore[method-assign]
    await a.chat("u", "c", OSLO)
    await a.chat("u", "c", "Book hotels there for me")
    assert searched == [OSLO, "Book hotels in Oslo for me"]


@pytest.mark.parametrize(
    "text",
    ["What is the boiling point of water?", "Recommend a novel about the sea.", "水的沸点是多少度？"],
)
async def test_no_call_when_nothing_points_back(text: str) -> None:
    talk, memory = ScriptedLLM(["Great, Oslo!", "100 °C."]), ScriptedLLM([])
    a = assistant(talk, memory)
    await a.chat("u", "c", OSLO)
    await a.chat("u", "c", text)
    assert memory.calls == []  # a scripted call would have run out: none was made


async def test_a_chinese_follow_up_is_rewritten() -> None:
    talk = ScriptedLLM(["好的，奥斯陆！", "已预订。"])
    memory = ScriptedLLM([related("帮我在奥斯陆订酒店")])
    a = assistant(talk, memory)
    await a.chat("u", "c", "我下周五飞奥斯陆。")
    await a.chat("u", "c", "帮我在那里订酒店")
    assert len(memory.calls) == 1 and "帮我在奥斯陆订酒店" in asked(talk.calls[-1])


async def test_unrelated_answer_leaves_the_text_as_written() -> None:
    talk = ScriptedLLM(["Great, Oslo!", "It depends."])
    memory = ScriptedLLM([json.dumps({"related": False, "rewritten": None})])
    a = assistant(talk, memory)
    await a.chat("u", "c", OSLO)
    await a.chat("u", "c", "Is it worth learning Rust?")
    assert len(memory.calls) == 1 and asked(talk.calls[-1]) == "Is it worth learning Rust?"


async def test_a_broken_rewrite_does_not_fail_the_turn(caplog: pytest.LogCaptureFixture) -> None:
    talk, memory = ScriptedLLM(["Great, Oslo!", "Booked."]), ScriptedLLM(["sure thing!"])
    a = assistant(talk, memory)
    await a.chat("u", "c", OSLO)
    with caplog.at_level(logging.WARNING, "brain.assistant"):
        assert await a.chat("u", "c", "Book hotels there for me") == "Booked."
    assert "rewriting a follow-up failed" in caplog.text
    assert asked(talk.calls[-1]) == "Book hotels there for me"


async def test_the_setting_turns_it_off() -> None:
    talk, memory = ScriptedLLM(["Great, Oslo!", "Booked."]), ScriptedLLM([])
    a = assistant(talk, memory, rewrite_followups=False)
    await a.chat("u", "c", OSLO)
    await a.chat("u", "c", "Book hotels there for me")
    assert memory.calls == [] and asked(talk.calls[-1]) == "Book hotels there for me"


async def test_the_first_message_of_a_chat_is_never_checked() -> None:
    talk, memory = ScriptedLLM(["Which one?"]), ScriptedLLM([])
    await assistant(talk, memory).chat("u", "c", "Book it for me")
    assert memory.calls == []


def summary_calls(llm: ScriptedLLM) -> list[ScriptedCall]:
    return [c for c in llm.calls if "condense conversation transcripts" in (c.messages[0].content or "")]


async def test_summaries_keep_the_conversation_language_on_the_reply_path() -> None:
    talk = ScriptedLLM(["好的。", "明白。", "收到。"])
    memory = ScriptedLLM([obey_word_limit])
    a = assistant(talk, memory, window_max_turns=2, keep_recent_share=0.0)
    for text in ("我喜欢绿茶。", "我住在杭州。", "我养了一只猫。"):
        await a.chat("u", "c", text)
    [call] = summary_calls(memory)
    assert "same language as the transcript" in (call.messages[0].content or "")
    assert "我喜欢绿茶" in asked(call)


async def test_summarize_now_keeps_the_conversation_language() -> None:
    talk, memory = ScriptedLLM(["好的。"]), ScriptedLLM([obey_word_limit])
    a = assistant(talk, memory)
    await a.chat("u", "c", "我喜欢绿茶。")
    assert await a.summarize_now("u", "c")
    [call] = summary_calls(memory)
    assert "same language as the transcript" in (call.messages[0].content or "")
