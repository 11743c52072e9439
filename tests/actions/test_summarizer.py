"""The capped summarizer: windows in tokens, bounded calls and tokens, shrink-or-stop, rolling summaries."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st

from actions.summarizer import FLOOR_WORDS, Summarizer, fit_lines, pack_windows, window_words
from brain import BrainMemory, InMemoryStore, MemorySettings, Message
from brain.llm.tokens import OFFLINE_ENCODING, Tokenizer
from brain.testing import ScriptedCall, ScriptedLLM, echo_everything, obey_word_limit

TOK = Tokenizer.for_model("", OFFLINE_ENCODING)


def transcript(n: int, words: int = 30) -> list[str]:
    return [
        f"{'User' if i % 2 == 0 else 'Assistant'}: turn {i} " + " ".join(f"w{i}x{j}" for j in range(words))
        for i in range(n)
    ]


@given(st.lists(st.integers(min_value=1, max_value=500), min_size=1, max_size=60), st.integers(100, 2000))
def test_pack_windows_keeps_order_and_fits(counts: list[int], window: int) -> None:
    lines = [str(i) for i in range(len(counts))]
    windows = pack_windows(lines, counts, window)
    assert [x for w in windows for x in w] == lines
    for w in windows:
        assert len(w) == 1 or sum(counts[int(x)] for x in w) <= window


def test_window_words_has_a_useful_floor() -> None:
    assert window_words(1, 200) == 400
    assert window_words(8, 200) == 50
    assert window_words(5_000, 800) == FLOOR_WORDS  # MetaGPT asked for "less than 1 word" here


def test_fit_lines_cuts_long_lines_to_a_common_length_keeping_labels() -> None:
    lines = ["User: short", "Assistant: " + "long " * 500, "User: " + "medium " * 50]
    counts = [TOK.count(x) for x in lines]
    fitted = fit_lines(lines, counts, 200, TOK)
    assert sum(TOK.count(x) for x in fitted) <= 200 + 3
    assert fitted[0] == "User: short" and fitted[1].startswith("Assistant: long") and fitted[1].endswith("…")
    assert fit_lines(lines, counts, 10_000, TOK) == lines


async def test_small_text_is_one_call() -> None:
    llm = ScriptedLLM([obey_word_limit])
    summary, stats = await Summarizer(llm, TOK).summarize(transcript(10), 200)
    assert stats.calls == 1 and not stats.truncated and summary
    assert "at most 200 words" in (llm.calls[0].messages[0].content or "")
    assert "User: turn 0" in llm.calls[0].prompt_text  # speaker labels reach the model


async def test_large_text_is_map_reduce_within_caps() -> None:
    llm = ScriptedLLM([obey_word_limit] * 20)
    summarizer = Summarizer(llm, TOK, window_tokens=2_000, max_calls=20, max_prompt_tokens=40_000)
    summary, stats = await summarizer.summarize(transcript(1_000), 200)
    assert 2 < stats.calls <= 20 and stats.rounds >= 2 and not stats.truncated
    assert llm.usage.totals().prompt_tokens <= 40_000
    asked = [c.messages[0].content or "" for c in llm.calls[:-1]]
    assert all(f"at most {window_words(stats.calls - 1, 200)} words" in a for a in asked)
    assert stats.precompressed  # 1,000 turns of ~45 tokens exceed the prompt budget: lines were cut first
    assert len(summary.split()) < 200


async def test_runaway_model_stops_at_the_cap_with_deterministic_truncation() -> None:
    llm = ScriptedLLM([echo_everything] * 100)
    summarizer = Summarizer(llm, TOK, window_tokens=1_000, max_calls=8, max_prompt_tokens=40_000)
    summary, stats = await summarizer.summarize(transcript(300), 100)
    assert stats.calls <= 8 and stats.truncated
    assert TOK.count(summary) <= 134
    assert summary  # the newest text survives


async def test_windows_run_concurrently_but_bounded() -> None:
    running = peak = 0

    async def slow(call: ScriptedCall) -> str:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.01)
        running -= 1
        return obey_word_limit(call)

    llm = ScriptedLLM([slow] * 20)
    await Summarizer(llm, TOK, window_tokens=1_000, concurrency=3).summarize(transcript(200), 200)
    assert peak == 3 and llm.remaining < 20


async def test_memory_summarize_is_rolling_and_keeps_raw_turns() -> None:
    store = InMemoryStore()
    memory = await BrainMemory.loads(store, "u", "c", settings=MemorySettings(window_tokens=100_000))
    assert (
        await memory.summarize(Summarizer(ScriptedLLM())) == ""
    )  # empty memory: no call, no error (MetaGPT raised)
    for i in range(30):
        memory.add_talk(Message(content=f"old fact {i}"))
    llm = ScriptedLLM(["SUMMARY ONE", "SUMMARY TWO"])
    assert await memory.summarize(Summarizer(llm)) == "SUMMARY ONE"
    assert memory.history == [] and memory.summary_upto == 30 and memory.window_tokens == 0
    for i in range(20):
        memory.add_talk(Message(content=f"new fact {i}"))
    assert await memory.summarize(Summarizer(llm)) == "SUMMARY TWO"
    second = llm.calls[1].prompt_text
    assert "Summary so far: SUMMARY ONE" in second and "new fact 19" in second and "old fact" not in second
    again = await BrainMemory.loads(store, "u", "c")
    assert again.historical_summary == "SUMMARY TWO" and again.history == []
    assert len(await again.read_history(1, 1_000)) == 50  # raw turns are all still there


async def test_limit_returns_small_text_without_a_call() -> None:
    memory = await BrainMemory.loads(InMemoryStore(), "u", "c")
    memory.add_talk(Message(content="short"))
    assert await memory.summarize(Summarizer(ScriptedLLM()), limit=1_000) == "User: short"
    assert memory.historical_summary == ""


@pytest.mark.parametrize("n_turns", [10, 1_000])
async def test_memory_summarize_respects_caps(n_turns: int) -> None:
    memory = await BrainMemory.loads(InMemoryStore(), "u", "c")
    for line in transcript(n_turns):
        memory.add_talk(Message(content=line))
    llm = ScriptedLLM([obey_word_limit] * 20)
    await memory.summarize(Summarizer(llm))
    assert llm.usage.totals().calls <= 20 and llm.usage.totals().prompt_tokens <= 40_000
    assert memory.last_summary_stats is not None and memory.summary_upto == n_turns


async def test_keep_recent_leaves_the_newest_turns_unsummarized() -> None:
    memory = await BrainMemory.loads(InMemoryStore(), "u", "c")
    for i in range(10):
        memory.add_talk(Message(content=f"turn {i}"))
    per_turn = memory.tokenizer.count("turn 0") + 4
    llm = ScriptedLLM(["S"])
    await memory.summarize(Summarizer(llm), keep_recent=3 * per_turn)
    assert memory.summary_upto == 7 and [m.content for m in memory.history] == ["turn 7", "turn 8", "turn 9"]
    assert "turn 6" in llm.calls[0].prompt_text and "turn 7" not in llm.calls[0].prompt_text
    assert (
        await memory.summarize(Summarizer(ScriptedLLM()), keep_recent=100 * per_turn) == "S"
    )  # nothing old enough: no call
