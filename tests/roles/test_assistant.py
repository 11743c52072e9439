"""The Assistant against a scripted model and the in-memory store."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from brain import InMemoryStore, InputError, LLMError, MemorySettings
from brain.testing import ScriptedCall, ScriptedLLM, tool_calls
from roles.assistant import Assistant
from roles.skills import SkillDeclaration, Skills, check_arguments
from tests.support.prompts import memory_items
from tests.support.runtime import make_runtime, split_options

WEATHER = SkillDeclaration(
    name="get_weather",
    description="Weather for a city",
    entry="tests.roles.sample_skills:get_weather",
    parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
ADD = SkillDeclaration(
    name="add",
    description="Add two integers",
    entry="tests.roles.sample_skills:add",
    parameters={
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
)
BROKEN = SkillDeclaration(name="broken", description="Always fails", entry="tests.roles.sample_skills:broken")


def assistant(llm: ScriptedLLM, store: InMemoryStore | None = None, **kw: Any) -> Assistant:
    runtime, options = split_options(kw)
    return Assistant(make_runtime(llm, store=store or InMemoryStore(), **runtime), **options)


async def test_one_call_per_turn_and_memory_across_instances() -> None:
    store = InMemoryStore()
    llm = ScriptedLLM(["Nice to meet you, Ann.", "You are Ann."])
    assert await assistant(llm, store).chat("u1", "c1", "My name is Ann.") == "Nice to meet you, Ann."
    again = assistant(llm, store)  # a new process, same store
    assert await again.chat("u1", "c1", "What is my name?") == "You are Ann."
    assert len(llm.calls) == 2
    second = llm.calls[1].messages
    assert [m.role for m in second] == ["system", "user", "assistant", "user"]
    assert second[1].content == "My name is Ann." and second[-1].content == "What is my name?"
    assert sum(m.content == "What is my name?" for m in second) == 1  # the user text once
    assert "You are Lily, an assistant." in (second[0].content or "")
    memory = await again.memory_of("u1", "c1")
    assert [m.role for m in memory.history] == ["user", "assistant", "user", "assistant"]
    assert memory.last_talk is None


async def test_knowledge_and_summary_are_labelled_system_context() -> None:
    store = InMemoryStore()
    a = assistant(ScriptedLLM(["ok"]), store)
    memory = await a.memory_of("u", "c")
    from brain import Message

    memory.add_knowledge(Message(content="Ann is vegetarian."))
    await memory.dumps()
    await memory.set_history_summary("Ann plans a trip to Oslo.")
    await a.chat("u", "c", "Suggest dinner.")
    messages = a.llm.calls[0].messages  # type: ignore[attr-defined]
    assert [m.role for m in messages] == ["system", "user"]  # memory is in the one system message
    assert memory_items(messages) == [
        ("knowledge", ' source="user turn or API write"', "Ann is vegetarian."),
        (
            "conversation summary",
            ' source="derived from user turns and assistant turns" trust="lower"',
            "Ann plans a trip to Oslo.",
        ),
    ]


async def test_failed_llm_call_leaves_memory_and_last_talk() -> None:
    store = InMemoryStore()
    llm = ScriptedLLM([LLMError("HTTP 500"), "Recovered answer"])
    a = assistant(llm, store)
    with pytest.raises(LLMError):
        await a.chat("u", "c", "Hello?")
    memory = await a.memory_of("u", "c")
    assert memory.history == [] and memory.last_talk == "Hello?"
    assert await a.pending("u", "c") == "Hello?"
    retried = "".join([p async for p in a.retry_stream("u", "c")])
    assert retried == "Recovered answer"  # retrying the turn works
    memory = await a.memory_of("u", "c")
    assert [m.content for m in memory.history] == ["Hello?", "Recovered answer"] and memory.last_talk is None


async def test_skill_called_through_a_tool_call() -> None:
    llm = ScriptedLLM(
        [tool_calls(("get_weather", {"city": "Oslo"}), ("add", {"a": 2, "b": 3})), "21 °C and 5."]
    )
    a = assistant(llm, skills=Skills.load([WEATHER, ADD]))
    assert await a.chat("u", "c", "Weather in Oslo, and 2+3?") == "21 °C and 5."
    first, second = llm.calls
    assert [t.name for t in first.tools] == ["get_weather", "add"]
    results = [m for m in second.messages if m.role == "tool"]
    assert [r.tool_call_id for r in results] == ["call_0", "call_1"]
    assert json.loads(results[0].content or "") == {"city": "Oslo", "forecast": "sunny", "celsius": 21}
    assert results[1].content == "5"


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (("broken", {}), "error: broken failed: RuntimeError: the weather service is down"),
        (("teleport", {}), "error: there is no skill named 'teleport'; available: get_weather, broken"),
        (("get_weather", {"town": "Oslo"}), "error: get_weather: missing required argument(s): city"),
        (("get_weather", {"city": 7}), "error: get_weather: argument 'city' must be of type string"),
    ],
)
async def test_tool_errors_are_shown_to_the_model(call: tuple[str, dict[str, object]], expected: str) -> None:
    llm = ScriptedLLM([tool_calls(call), "Sorry, that did not work."])
    a = assistant(llm, skills=Skills.load([WEATHER, BROKEN]))
    assert await a.chat("u", "c", "do it") == "Sorry, that did not work."
    assert [m.content for m in llm.calls[1].messages if m.role == "tool"] == [expected]


async def test_tool_steps_are_capped() -> None:
    llm = ScriptedLLM([tool_calls(("add", {"a": 1, "b": 1}))] * 2 + ["final"])
    a = assistant(llm, skills=Skills.load([ADD]), memory_settings=MemorySettings(max_tool_steps=2))
    assert await a.chat("u", "c", "loop") == "final"
    assert [bool(c.tools) for c in llm.calls] == [True, True, False]  # the last call must answer


def test_unknown_entry_point_is_a_config_error() -> None:
    from brain import ConfigError

    bad = SkillDeclaration(name="x", description="x", entry="tests.roles.sample_skills:nope")
    with pytest.raises(ConfigError, match=r"skills\[0\]\.entry: cannot import"):
        Skills.load([bad])


def test_argument_checks() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "additionalProperties": False}
    assert check_arguments(schema, {"n": 1}) is None
    assert check_arguments(schema, {"n": True}) == "argument 'n' must be of type integer"
    assert check_arguments(schema, {"m": 1}) == "unknown argument 'm'"
    assert check_arguments(schema, [1]) == "arguments must be a JSON object"


async def test_summarizes_only_when_the_budget_says_so() -> None:
    settings = MemorySettings(summarize_share=0.5, keep_recent_share=0.25, prompt_history_share=0.4)
    replies = [f"answer {i}" for i in range(40)]
    llm = ScriptedLLM(replies)
    memory_llm = ScriptedLLM(["SUMMARY"] * 10)
    a = assistant(llm, memory_settings=settings, context_window=600, memory_llm=memory_llm)
    for i in range(40):
        await a.chat("u", "c", f"Message number {i} with a few extra words to take up tokens.")
    assert len(llm.calls) == 40  # one call per turn
    assert 1 <= len(memory_llm.calls) <= 10  # summaries now and then, not every turn
    memory = await a.memory_of("u", "c")
    assert memory.historical_summary == "SUMMARY" and memory.window_tokens <= 300
    for call in llm.calls:
        history_tokens = sum(
            a.tokenizer.count(m.content or "") + 4
            for m in call.messages[1:-1]
            if m.role in {"user", "assistant"}
        )
        assert history_tokens <= 240  # prompt_history_share of the window


def keep_markers(call: ScriptedCall) -> str:
    """A scripted summarizer that keeps every marker `T<n>` of its input (a faithful model)."""
    return "Said: " + " ".join(dict.fromkeys(re.findall(r"T\d+", call.messages[-1].content or "")))


async def test_every_earlier_turn_stays_in_view_verbatim_or_in_the_summary() -> None:
    settings = MemorySettings(window_max_turns=10, keep_recent_share=0.5)
    llm = ScriptedLLM([f"ok A{i}" for i in range(60)])
    memory_llm = ScriptedLLM([keep_markers] * 60)
    a = assistant(llm, memory_settings=settings, memory_llm=memory_llm)
    for i in range(60):
        await a.chat("u", "c", f"note T{i}")
    for i, call in enumerate(llm.calls):
        prompt = " ".join(m.content or "" for m in call.messages)
        missing = [j for j in range(i) if not re.search(rf"\bT{j}\b", prompt)]
        assert not missing, f"turn {i}: earlier turns {missing} are out of view"
        assert len([m for m in call.messages if m.role in {"user", "assistant"}]) <= 11
    # each summary folds the oldest 6 of 11 turns: about one every 3 turns, never every turn
    assert 15 <= len(memory_llm.calls) <= 25


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("   ", "empty"),
        ("", "empty"),
        (None, "must be text"),
        (b"bytes", "must be text"),
        ("bad \udc80 surrogate", "lone surrogate"),
        ("x" * 2_000, "memory.max_message_bytes = 1,000 bytes"),
        ("好" * 400, "is 1,200 bytes"),
    ],
)
async def test_bad_input_is_refused_before_any_call_or_write(text: Any, message: str) -> None:
    store = InMemoryStore()
    llm = ScriptedLLM()  # any LLM call fails: the script is empty
    a = assistant(llm, store, memory_settings=MemorySettings(max_message_bytes=1_000))
    with pytest.raises(InputError, match=message):
        await a.chat("u", "c", text)
    with pytest.raises(InputError):
        await a.chat("", "c", "hello")
    assert llm.calls == [] and await store.list_chats("u") == [] and a.busy_chats == 0


async def test_each_mode_builds_from_settings(redis_server_url: str, tmp_path: Any) -> None:
    from brain import Settings
    from roles.modes import BlocksMode, BrainMode, TieredMode
    from roles.tiered import TieredAssistant

    for mode, cls, expected in [
        ("brain", Assistant, BrainMode),
        ("tiered", Assistant, TieredMode),  # the setting picks the strategy, nothing registers itself
        ("blocks", Assistant, BlocksMode),
        ("brain", TieredAssistant, TieredMode),  # the tiered convenience class is tiered whatever it says
    ]:
        settings = Settings.model_validate(
            {"home": str(tmp_path), "redis": {"url": redis_server_url}, "memory": {"mode": mode}}
        )
        async with cls.from_settings(settings, name="Mo") as built:
            assert type(built) is cls and type(built.mode) is expected and built.name == "Mo"
            assert built.runtime.tiers is not None and built.store is built.runtime.store
