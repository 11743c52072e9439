"""A turn whose prompt overflows the model's context window: the chat is summarized and the answer asked for
once more; a second overflow (or nothing to summarize) ends the turn with the question still pending."""

from __future__ import annotations

import json

import pytest

from brain import LLMSettings, MemorySettings, OpenAILLM
from brain.errors import ContextOverflowError
from brain.llm.protocol import LLM
from brain.testing import ScriptedLLM
from roles import Assistant
from tests.support.openai_server import Chat, Fault, ScriptedOpenAIServer
from tests.support.runtime import make_runtime

OPENAI_WORDS = (
    "This model's maximum context length is 8192 tokens. However, your messages resulted in 9001 tokens. "
    "Please reduce the length of the messages."
)
QUESTION = "Which museum should I see first?"


def assistant(llm: LLM, summaries: ScriptedLLM, **memory: object) -> Assistant:
    """Windows of 8 turns (4 kept verbatim when summarizing), no follow-up rewrites."""
    settings = MemorySettings.model_validate({"rewrite_followups": False, "window_max_turns": 8, **memory})
    return Assistant(make_runtime(llm, memory_settings=settings, memory_llm=summaries))


async def chatted(agent: Assistant, turns: int, words: int = 5) -> None:
    for i in range(turns):
        await agent.chat("ann", "c", f"Note {i}: " + " ".join(f"w{i}x{j}" for j in range(words)))


async def test_an_overflow_summarizes_the_chat_and_asks_once_more() -> None:
    answers = ScriptedLLM(["Noted 0.", "Noted 1.", "Noted 2."])
    answers.add(ContextOverflowError("too long"), "The Louvre.")
    summaries = ScriptedLLM(["Ann took a first note."])
    agent = assistant(answers, summaries)
    await chatted(agent, 3)
    assert await agent.chat("ann", "c", QUESTION) == "The Louvre."
    answers.assert_consumed()
    summaries.assert_consumed()
    retried = answers.calls[-1].prompt_text
    assert "Ann took a first note." in retried and "Note 0" not in retried and "Note 2" in retried
    memory = await agent.memory_of("ann", "c")
    assert memory.last_talk is None and memory.history[-1].content == "The Louvre."
    assert memory.historical_summary == "Ann took a first note."


async def test_the_window_the_endpoint_names_decides_what_stays_verbatim() -> None:
    """128k assumed, 2,000 named: the turns kept are those that fit the named window's share."""
    overflow = ContextOverflowError("maximum context length is 2000 tokens", limit=2_000)
    answers = ScriptedLLM(["Noted 0.", "Noted 1.", "Noted 2.", "Noted 3.", overflow, "The Louvre."])
    summaries = ScriptedLLM(["Ann took long notes."])
    agent = assistant(answers, summaries, window_max_turns=40)
    await chatted(agent, 4, words=150)  # ~600 tokens: all of it fits 128k, not 2,000 x 0.4 x 0.5
    assert await agent.chat("ann", "c", QUESTION) == "The Louvre."
    assert "Ann took long notes." in answers.calls[-1].prompt_text
    summaries.assert_consumed()


async def test_a_second_overflow_ends_the_turn_with_the_question_pending() -> None:
    answers = ScriptedLLM(["Noted 0.", "Noted 1.", "Noted 2."])
    answers.add(ContextOverflowError("too long"), ContextOverflowError("still too long"))
    summaries = ScriptedLLM(["Ann took a first note."])
    agent = assistant(answers, summaries)
    await chatted(agent, 3)
    with pytest.raises(ContextOverflowError, match=r"even with the chat summarized.*still too long"):
        await agent.chat("ann", "c", QUESTION)
    assert (await agent.memory_of("ann", "c")).last_talk == QUESTION
    answers.add("The Louvre.")
    assert "".join([p async for p in agent.retry_stream("ann", "c")]) == "The Louvre."
    assert (await agent.memory_of("ann", "c")).history[-2].content == QUESTION


async def test_with_nothing_to_summarize_the_turn_ends_at_once() -> None:
    answers, summaries = ScriptedLLM([ContextOverflowError("too long")]), ScriptedLLM()
    agent = assistant(answers, summaries)
    with pytest.raises(ContextOverflowError, match="summarizing the chat freed no room"):
        await agent.chat("ann", "c", QUESTION)
    assert len(answers.calls) == 1 and summaries.calls == []
    assert (await agent.memory_of("ann", "c")).last_talk == QUESTION


async def test_openais_overflow_through_the_real_client_is_summarized_and_answered(
    openai_server: ScriptedOpenAIServer,
) -> None:
    openai_server.script(Chat("Noted 0."), Chat("Noted 1."), Chat("Noted 2."))
    openai_server.script(Fault(400, message=OPENAI_WORDS), Chat("The Louvre."))
    settings = LLMSettings(base_url=openai_server.url, api_key="sk-test", max_retries=2)
    summaries = ScriptedLLM(["Ann took a first note."])
    async with OpenAILLM.from_settings(settings) as llm:
        agent = assistant(llm, summaries)
        await chatted(agent, 3)
        assert await agent.chat("ann", "c", QUESTION) == "The Louvre."
    refused, answered = openai_server.chat_requests()[-2:]
    assert "Note 0" in json.dumps(refused.body["messages"])
    sent = json.dumps(answered.body["messages"])
    assert "Ann took a first note." in sent and "Note 0" not in sent
    assert len(openai_server.chat_requests()) == 5  # the refused prompt was not retried as it was
