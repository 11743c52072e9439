"""LLM calls and prompt tokens of BrainMemory.summarize, with scripted models (no network, no GPU).

- first: the first summarize of a 10 / 100 / 1,000 / 5,000-turn conversation, with a model that obeys
  the word limit it is given;
- steady: 20 more turns, summarize again (rolling: old summary + new turns only);
- runaway: a model that ignores every limit (echoes its input and more), 1,000 turns: calls stay at the cap.
Turns are seeded synthetic chat of 8 to 60 words. Prints a table, then one JSON line.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from actions.summarizer import Summarizer
from brain import BrainMemory, InMemoryStore, MemorySettings, Message
from brain.testing import ScriptedLLM, echo_everything, obey_word_limit

SIZES = [10, 100, 1_000, 5_000]
WORDS = [
    "trip",
    "Oslo",
    "May",
    "hotel",
    "budget",
    "train",
    "museum",
    "rain",
    "jacket",
    "dinner",
    "vegetarian",
    "Ann",
    "Bob",
    "meeting",
    "Tuesday",
    "report",
    "deadline",
    "invoice",
    "numbers",
    "project",
    "plan",
    "risk",
    "client",
    "email",
    "draft",
    "review",
    "weekend",
    "hike",
]


def turn(rng: random.Random, i: int) -> Message:
    words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 60)))
    return Message(role="user" if i % 2 == 0 else "assistant", content=f"{words}.")


async def first_and_steady(n: int, settings: MemorySettings) -> tuple[dict[str, int], dict[str, int]]:
    rng = random.Random(n)
    memory = await BrainMemory.loads(InMemoryStore(), "u", "c", settings=settings)
    for i in range(n):
        memory.add_talk(turn(rng, i)) if i % 2 == 0 else memory.add_answer(turn(rng, i))
    llm = ScriptedLLM([obey_word_limit] * settings.summarize_max_calls * 2)
    await memory.summarize(Summarizer.from_settings(llm, memory.tokenizer, settings), max_words=200)
    first = llm.usage.totals()
    for i in range(n, n + 20):
        memory.add_talk(turn(rng, i)) if i % 2 == 0 else memory.add_answer(turn(rng, i))
    await memory.summarize(Summarizer.from_settings(llm, memory.tokenizer, settings), max_words=200)
    steady = llm.usage.totals() - first
    return (
        {"calls": first.calls, "prompt_tokens": first.prompt_tokens},
        {"calls": steady.calls, "prompt_tokens": steady.prompt_tokens},
    )


async def runaway(settings: MemorySettings) -> int:
    rng = random.Random(7)
    memory = await BrainMemory.loads(InMemoryStore(), "u", "c", settings=settings)
    for i in range(1_000):
        memory.add_talk(turn(rng, i))
    llm = ScriptedLLM([echo_everything] * 1_000)
    await memory.summarize(Summarizer.from_settings(llm, memory.tokenizer, settings), max_words=200)
    assert memory.last_summary_stats is not None and memory.last_summary_stats.truncated
    return llm.usage.totals().calls


async def main() -> None:
    settings = MemorySettings()
    first: dict[str, dict[str, int]] = {}
    steady: dict[str, int] = {}
    for n in SIZES:
        first[str(n)], steady_n = await first_and_steady(n, settings)
        if n == 1_000:
            steady = steady_n
    runaway_calls = await runaway(settings)
    cap = settings.summarize_max_calls
    print(
        f"caps: {cap} calls, {settings.summarize_max_prompt_tokens} prompt tokens per summarize; "
        f"window {settings.window_tokens} tokens"
    )
    print(f"{'turns':>6} | {'calls':>5} | {'prompt tokens':>13}")
    for n in SIZES:
        print(f"{n:>6} | {first[str(n)]['calls']:>5} | {first[str(n)]['prompt_tokens']:>13}")
    print(
        f"steady state (1,000 turns + 20): {steady['calls']} calls, {steady['prompt_tokens']} prompt tokens"
    )
    print(f"runaway model, 1,000 turns: {runaway_calls} calls (cap {cap})")
    print(json.dumps({"first": first, "steady": steady, "runaway_calls": runaway_calls, "cap": cap}))


if __name__ == "__main__":
    asyncio.run(main())
