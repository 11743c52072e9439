"""Framework overhead of an Assistant conversation: 500 turns, zero-latency scripted model, local Redis.

Per turn: wall time of `Assistant.chat` minus the time spent inside the model; LLM calls per turn including
summarization; prompt tokens of each answer call (median and max once the history has outgrown the prompt
budget, i.e. after the first summary). Context window 8,192 tokens, default memory policy. Prints a table,
then one JSON line.
"""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import sys
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


from benchmarks.common.servers import local_redis
from brain import Settings, local_runtime
from brain.backends.redis import RedisBackend
from brain.backends.redis.client import TranslatingRedis
from brain.llm.protocol import ChatMessage, Completion, TextDelta
from brain.llm.usage import UsageLedger
from brain.testing import ScriptedCall, ScriptedLLM, obey_word_limit
from roles import Assistant

TURNS = 500
WORDS = "trip Oslo hotel museum train rain jacket dinner budget plan weekend hike fjord coffee map".split(" ")


class TimedLLM:
    """Delegates to a scripted model and adds up the time spent inside it."""

    def __init__(self, inner: ScriptedLLM) -> None:
        self.inner, self.seconds = inner, 0.0

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def usage(self) -> UsageLedger:
        return self.inner.usage

    async def complete(self, messages: Sequence[ChatMessage], **kw: Any) -> Completion:
        started = time.perf_counter()
        try:
            return await self.inner.complete(messages, **kw)
        finally:
            self.seconds += time.perf_counter() - started

    async def stream(
        self, messages: Sequence[ChatMessage], **kw: Any
    ) -> AsyncIterator[TextDelta | Completion]:
        started = time.perf_counter()
        events = [e async for e in self.inner.stream(messages, **kw)]
        self.seconds += time.perf_counter() - started
        for event in events:
            yield event

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return await self.inner.embed(texts)

    async def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        return await self.inner.rerank(query, documents)


def reply(call: ScriptedCall) -> str:
    if "condense conversation transcripts" in (call.messages[0].content or ""):
        return obey_word_limit(call)
    rng = random.Random(len(call.messages))
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(30, 60))) + "."


async def main() -> None:
    rng = random.Random(42)
    llm = TimedLLM(ScriptedLLM([reply] * (TURNS * 3)))
    overhead, prompt_tokens, summarized_from = [], [], None
    with local_redis() as (url, server):
        client = TranslatingRedis.from_url(url)
        settings = Settings.model_validate({"llm": {"context_window": 8_192}})
        assistant = Assistant(
            local_runtime(llm, settings=settings, backend=RedisBackend.for_settings(client, settings))
        )  # type: ignore[arg-type]
        for turn in range(TURNS):
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(15, 40))) + "?"
            calls_before, model_before = len(llm.inner.calls), llm.seconds
            started = time.perf_counter()
            await assistant.chat("bench", "overhead", text)
            wall = time.perf_counter() - started
            overhead.append((wall - (llm.seconds - model_before)) * 1000)
            new_calls = llm.inner.calls[calls_before:]
            prompt_tokens.append(next(c.prompt_tokens for c in new_calls if c.kind == "stream"))
            if summarized_from is None and any(c.kind == "chat" for c in new_calls):
                summarized_from = turn
        await client.aclose()
    calls = len(llm.inner.calls)
    steady = prompt_tokens[summarized_from or 0 :]
    p50, p99 = statistics.median(overhead), statistics.quantiles(overhead, n=100)[98]
    median, peak = statistics.median(steady), max(steady)
    print(f"server: {server}; {TURNS} turns, context window 8192 tokens")
    print(f"framework overhead per turn: p50 {p50:.2f} ms, p99 {p99:.2f} ms")
    print(f"LLM calls: {calls} ({calls - TURNS} summarization) = {calls / TURNS:.3f} per turn")
    print(
        f"answer prompt tokens from turn {summarized_from} on: median {median:.0f}, max {peak}, "
        f"max/median {peak / median:.2f}; all turns: median {statistics.median(prompt_tokens):.0f}"
    )
    print(
        json.dumps(
            {
                "overhead_p50_ms": round(p50, 3),
                "overhead_p99_ms": round(p99, 3),
                "calls_per_turn": round(calls / TURNS, 3),
                "prompt_tokens_median": median,
                "prompt_tokens_max": peak,
                "max_over_median": round(peak / median, 3),
                "budget_exceeded_from_turn": summarized_from,
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
