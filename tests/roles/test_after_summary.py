"""`/retry`, `/rewrite` and `/pop` after a summary: a summary never deletes raw turns, so each acts on the
newest turns not taken back, whether they are still in the window or already folded into the summary."""

from __future__ import annotations

from io import StringIO

from brain import InMemoryStore
from brain.storage.conversation import MemoryStore
from brain.testing import ScriptedLLM
from roles.assistant import Assistant
from roles.cli.session import ChatSession
from tests.support.runtime import make_runtime


def summarized(store: MemoryStore, replies: list[str]) -> tuple[Assistant, ScriptedLLM]:
    llm = ScriptedLLM(["Hello Ann.", "Oslo in May.", *replies])
    return Assistant(make_runtime(llm, store=store, memory_llm=ScriptedLLM(["SUMMARY"] * 3))), llm


async def two_exchanges_then_summary(a: Assistant) -> None:
    await a.chat("u", "c", "Hi, I am Ann.")
    await a.chat("u", "c", "Where do I go?")
    assert await a.summarize_now("u", "c") == "SUMMARY"
    memory = await a.memory_of("u", "c")
    assert memory.history == [] and memory.summary_upto == 4  # every turn is in the summary now


async def visible(a: Assistant) -> list[tuple[int, str, bool]]:
    memory = await a.memory_of("u", "c")
    return [(t.seq, t.message.content, t.hidden) for t in await memory.read_history(1, 100)]


async def test_retry_after_a_summary_answers_the_last_question_again(store: MemoryStore) -> None:
    a, llm = summarized(store, ["Oslo, in May."])
    await two_exchanges_then_summary(a)
    assert "".join([p async for p in a.retry_stream("u", "c")]) == "Oslo, in May."
    assert llm.calls[-1].messages[-1].content == "Where do I go?"  # the last question, asked again
    assert await visible(a) == [
        (1, "Hi, I am Ann.", False),
        (2, "Hello Ann.", False),
        (3, "Where do I go?", True),  # the retried exchange: taken back, still stored
        (4, "Oslo in May.", True),
        (5, "Where do I go?", False),
        (6, "Oslo, in May.", False),
    ]
    memory = await a.memory_of("u", "c")
    assert [m.content for m in memory.history] == ["Where do I go?", "Oslo, in May."]
    assert memory.last_talk is None


async def test_rewrite_after_a_summary_replaces_the_last_answer(store: MemoryStore) -> None:
    a, _ = summarized(store, [])
    await two_exchanges_then_summary(a)
    await a.rewrite("u", "c", "You go to Oslo in May, Ann.")
    assert await visible(a) == [
        (1, "Hi, I am Ann.", False),
        (2, "Hello Ann.", False),
        (3, "Where do I go?", False),
        (4, "Oslo in May.", True),  # the old answer: taken back, still stored
        (5, "You go to Oslo in May, Ann.", False),
    ]
    memory = await a.memory_of("u", "c")
    assert [m.content for m in memory.history] == ["You go to Oslo in May, Ann."]
    await a.rewrite("u", "c", "Oslo!")  # the rewritten answer is now the last one
    assert [(s, h) for s, _, h in await visible(a)][-2:] == [(5, True), (6, False)]


async def test_pop_after_a_summary_takes_back_the_last_turns(store: MemoryStore) -> None:
    a, _ = summarized(store, [])
    await two_exchanges_then_summary(a)
    taken = await a.take_back("u", "c", 1)
    assert [m.content for m in taken] == ["Oslo in May."]
    taken = await a.take_back("u", "c", 2)  # the newest turns not taken back yet
    assert [m.content for m in taken] == ["Hello Ann.", "Where do I go?"]
    assert [h for _, _, h in await visible(a)] == [False, True, True, True]
    memory = await a.memory_of("u", "c")
    assert memory.window_tokens == 0 and memory.summary_upto == 4  # summarized turns cost no window
    assert [m.content for m in await a.take_back("u", "c", 5)] == ["Hi, I am Ann."]
    assert await a.take_back("u", "c", 1) == []


async def test_pop_across_the_summary_and_the_window() -> None:
    store = InMemoryStore()
    a, _ = summarized(store, ["Bring a coat."])
    await two_exchanges_then_summary(a)
    await a.chat("u", "c", "What should I pack?")
    before = await a.memory_of("u", "c")
    assert before.window_tokens > 0
    taken = await a.take_back("u", "c", 3)  # two in the window, one in the summary
    assert [m.content for m in taken] == ["Oslo in May.", "What should I pack?", "Bring a coat."]
    memory = await a.memory_of("u", "c")
    assert memory.history == [] and memory.window_tokens == 0


async def test_slash_commands_after_summarize_act_on_the_right_turn() -> None:
    a, llm = summarized(InMemoryStore(), ["Oslo, in May."])
    out = StringIO()
    session = ChatSession(a, "u", "c", out, confirm=lambda _: True)
    await session.handle("Hi, I am Ann.")
    await session.handle("Where do I go?")
    await session.handle("/summarize")
    await session.handle("/retry")
    assert llm.calls[-1].messages[-1].content == "Where do I go?"
    await session.handle("/summarize")
    await session.handle("/rewrite In May you go to Oslo.")
    await session.handle("/pop")  # the last exchange: its question and the rewritten answer
    await session.handle("/history 10")
    text = out.getvalue()
    assert "summary: SUMMARY" in text and "Oslo, in May." in text
    assert "the last answer was replaced" in text and "took back 2 turn(s)" in text
    assert "error" not in text and "nothing to" not in text
    lines = [line for line in text.splitlines() if line.startswith("#")]
    assert lines == [
        "#1 User: Hi, I am Ann.",
        "#2 Lily: Hello Ann.",
        "#3 User: Where do I go? (taken back)",
        "#4 Lily: Oslo in May. (taken back)",
        "#5 User: Where do I go? (taken back)",
        "#6 Lily: Oslo, in May. (taken back)",
        "#7 Lily: In May you go to Oslo. (taken back)",
    ]
