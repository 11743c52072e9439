"""A summary that keeps failing is tried again after a growing number of turns, not on every turn; a
success, or a prompt that overflows, tries it at once."""

from __future__ import annotations

import logging

import pytest

from brain import InMemoryStore, LLMError, MemorySettings
from brain.message import Message
from brain.testing import ScriptedCall, ScriptedLLM
from roles.assistant import Assistant
from roles.backoff import MAX_WAIT, TurnBackoff
from tests.support.runtime import make_runtime


def test_failures_in_a_row_wait_twice_as_many_exchanges_up_to_a_cap() -> None:
    backoff, key = TurnBackoff(), ("ann", "c1")
    waits = [backoff.failed(key, 10) for _ in range(8)]
    assert waits == [1, 2, 4, 8, 16, 32, MAX_WAIT, MAX_WAIT] and backoff.failures(key) == 8
    assert backoff.waiting(key, 10 + 2 * MAX_WAIT - 1) and not backoff.waiting(key, 10 + 2 * MAX_WAIT)
    assert not backoff.waiting(("ann", "c2"), 0)  # another chat of the same user is not held back
    backoff.succeeded(key)
    assert backoff.failures(key) == 0 and not backoff.waiting(key, 11) and len(backoff) == 0


def test_the_first_failure_is_tried_again_on_the_next_exchange() -> None:
    backoff = TurnBackoff()
    assert backoff.failed("k", 6) == 1
    assert backoff.waiting("k", 7) and not backoff.waiting("k", 8)


def test_the_table_stays_bounded_and_forgets_the_least_recently_failed() -> None:
    backoff = TurnBackoff(size=3)
    for key in ("a", "b", "c", "d"):
        backoff.failed(key, 0)
    backoff.failed("b", 0)  # b failed again: now the most recent
    backoff.failed("e", 0)
    assert len(backoff) == 3 and backoff.failures("a") == backoff.failures("c") == 0
    assert backoff.failures("b") == 2 and backoff.failures("d") == backoff.failures("e") == 1


def over_budget(asked_at: list[int], answers: ScriptedLLM) -> object:
    """A summarizer that always writes far over its word budget, noting at which answer it was asked."""

    def reply(call: ScriptedCall) -> str:
        asked_at.append(len(answers.calls))
        return "word " * 2_000

    return reply


async def test_a_summarizer_that_keeps_failing_is_asked_ever_less_often(
    caplog: pytest.LogCaptureFixture,
) -> None:
    turns = 40
    answers = ScriptedLLM([f"answer {i}" for i in range(turns + 1)])
    asked_at: list[int] = []
    summaries = ScriptedLLM([over_budget(asked_at, answers)] * 6)  # a seventh try runs out of script
    settings = MemorySettings(window_max_turns=4, rewrite_followups=False)
    runtime = make_runtime(answers, store=InMemoryStore(), memory_settings=settings, memory_llm=summaries)
    assistant = Assistant(runtime)
    with caplog.at_level(logging.WARNING, "brain.assistant"):
        for i in range(turns):
            await assistant.chat("ann", "c1", f"note {i}")
    # due from the fourth turn on (six turns stored, the window holds four); then tried after 1, 2, 4, 8,
    # 16 exchanges (counted in answers given before the try)
    assert asked_at == [3, 4, 6, 10, 18, 34]
    assert len(answers.calls) == turns  # every turn was answered, from the window
    assert "(6 in a row); tried again in 32 exchange(s)" in caplog.text
    memory = await assistant.memory_of("ann", "c1")
    assert memory.summary_upto == 0 and memory.turn_count == 2 * turns  # nothing lost, nothing folded

    summaries.add("A short summary of the notes.")  # the model recovers: tried when the wait is over
    answers.add(*(f"later {i}" for i in range(2 * MAX_WAIT)))
    while len(summaries.calls) == 6:
        await assistant.chat("ann", "c1", "one more note")
    memory = await assistant.memory_of("ann", "c1")
    assert len(answers.calls) == 34 + MAX_WAIT + 1
    assert memory.historical_summary == "A short summary of the notes."
    assert assistant.engine.summary_backoff.failures((b"ann", b"c1")) == 0


async def test_a_failed_model_call_backs_off_too_and_each_chat_on_its_own() -> None:
    answers = ScriptedLLM([f"answer {i}" for i in range(24)])
    summaries = ScriptedLLM([LLMError("the memory model is down")] * 24)
    settings = MemorySettings(window_max_turns=4, rewrite_followups=False)
    runtime = make_runtime(answers, store=InMemoryStore(), memory_settings=settings, memory_llm=summaries)
    assistant = Assistant(runtime)
    for i in range(12):
        for chat in ("c1", "c2"):
            await assistant.chat("ann", chat, f"note {i}")
    assert len(summaries.calls) == 2 * 4  # each chat: tried after 1, 2, 4 exchanges (turns 3, 4, 6, 10)


async def test_an_overflowing_prompt_summarizes_even_while_the_chat_waits() -> None:
    answers = ScriptedLLM(["answer"])
    summaries = ScriptedLLM(["A short summary."])
    settings = MemorySettings(window_max_turns=4, keep_recent_share=0.25)
    runtime = make_runtime(answers, store=InMemoryStore(), memory_settings=settings, memory_llm=summaries)
    engine = Assistant(runtime).engine
    memory = await engine.load_memory("ann", "c1")
    for i in range(6):
        memory.add_talk(Message(content=f"note {i}"))
        memory.add_answer(Message(content=f"answer {i}"))
    await memory.dumps()
    key = (b"ann", b"c1")
    engine.summary_backoff.failed(key, memory.turn_count)
    await engine.summarize(memory)  # waiting: not asked
    assert summaries.calls == []
    await engine.summarize(memory, forced=True)
    assert len(summaries.calls) == 1 and memory.historical_summary == "A short summary."
    assert engine.summary_backoff.failures(key) == 0
