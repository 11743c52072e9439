"""Storage scenarios run through the real assistants (`roles.Assistant`, `roles.tiered.TieredAssistant`) with
scripted models, for `benchmarks/storage.py`: the store-level write path checked against the assistant's, a
user's fixed cost, what an expired tiered chat leaves behind, and how long the fact queue grows when the model
never answers extraction with JSON. Every scenario uses its own key prefix on a client the caller owns."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from benchmarks.common.chat_text import Exchange
from brain import Settings, local_runtime
from brain.backends.redis import RedisBackend, RedisClient
from brain.backends.redis.stats import FamilyCost, storage_costs
from brain.keys import fact_dead_letters_key, fact_queue_key
from brain.llm.protocol import Completion
from brain.runtime import Runtime
from brain.testing import Reply, ScriptedLLM, tool_calls
from roles import Assistant
from roles.fact_worker import FactWorker
from roles.tiered import TieredAssistant

__all__ = ["QueueGrowth", "assistant_costs", "expired_leftovers", "fixed_user_costs", "queue_growth"]

GARBAGE = "Sorry, I cannot help with that. <html>not JSON</html>"


def _runtime(client: RedisClient, prefix: str, answers: ScriptedLLM, **memory: Any) -> Runtime:
    settings = Settings.model_validate(
        {"llm": {"context_window": 128_000}, "memory": memory, "redis": {"key_prefix": prefix}}
    )
    backend = RedisBackend.for_settings(client, settings)
    memory_llm = ScriptedLLM([GARBAGE] * 100_000)
    return local_runtime(answers, settings=settings, backend=backend, memory_llm=memory_llm)


def _say(text: str) -> Completion:
    return tool_calls(("send_message", {"message": text}))


async def assistant_costs(
    client: RedisClient, prefix: str, pairs: Sequence[Exchange], *, tiered: bool
) -> list[FamilyCost]:
    """The bytes per family of one user's chat after `pairs` went through a real assistant (brain or tiered
    mode, facts off), every key under `prefix`."""
    replies: list[Reply] = [_say(a.content) if tiered else a.content for _, a in pairs]
    runtime = _runtime(client, prefix, ScriptedLLM(replies), facts={"enabled": False})
    agent = TieredAssistant(runtime) if tiered else Assistant(runtime)
    for question, _ in pairs:
        await agent.chat("storage-user", "chat", question.content)
    assert runtime.backend is not None
    return await storage_costs(runtime.backend)  # type: ignore[arg-type]


async def fixed_user_costs(client: RedisClient, prefix: str) -> list[FamilyCost]:
    """The keys of a user with one chat holding one short exchange (brain mode, default settings)."""
    runtime = _runtime(client, prefix, ScriptedLLM(["Hello! How can I help?"]))
    await Assistant(runtime).chat("fixed-user", "chat", "Hi there")
    assert runtime.backend is not None
    return await storage_costs(runtime.backend, "fixed-user")  # type: ignore[arg-type]


async def expired_leftovers(
    client: RedisClient, prefix: str, pairs: Sequence[Exchange], ttl: int = 2
) -> tuple[list[str], list[FamilyCost]]:
    """A tiered chat with `memory.ttl_seconds = ttl` (facts off): `pairs` through a `TieredAssistant`, the
    TTL left to pass; the user's keys still present (`RedisBackend.user_leftovers`) and their bytes per
    family."""
    answers = ScriptedLLM([_say(a.content) for _, a in pairs])
    runtime = _runtime(client, prefix, answers, ttl_seconds=ttl, facts={"enabled": False})
    agent = TieredAssistant(runtime)
    for question, _ in pairs:
        await agent.chat("expiring-user", "chat", question.content)
    await asyncio.sleep(ttl + 1.0)
    backend = runtime.backend
    assert isinstance(backend, RedisBackend)
    return await backend.user_leftovers("expiring-user"), await storage_costs(backend, "expiring-user")


class QueueGrowth:
    """What the fact queue held while a scripted model answered every extraction with non-JSON."""

    def __init__(self) -> None:
        self.lengths: list[int] = []  # XLEN after each round
        self.pending: list[int] = []  # entries read but not acknowledged, after each round
        self.dead: list[int] = []  # dead letters after each round
        self.calls = 0  # extraction calls made
        self.queue_bytes = 0  # MEMORY USAGE of the stream at the end
        self.dead_bytes = 0  # of the dead letters hash at the end


async def queue_growth(
    client: RedisClient, prefix: str, pairs: Sequence[Exchange], *, users: int, reclaim_seconds: float
) -> QueueGrowth:
    """`users` users chat in rounds (one exchange each per round, `pairs` cycled) with facts on (default fact
    settings but `reclaim_seconds`), and one fact worker runs once after each round (`FactWorker.run_once`,
    holding entries as the in-process worker does); the memory model never returns JSON."""
    answers = ScriptedLLM([a.content for _, a in pairs] * users)
    runtime = _runtime(client, prefix, answers, facts={"enabled": True, "reclaim_seconds": reclaim_seconds})
    agent, worker, growth = Assistant(runtime), FactWorker(runtime, name="storage-bench"), QueueGrowth()
    queue, dead = fact_queue_key(prefix), fact_dead_letters_key(prefix)
    for question, _ in pairs:
        for user in range(users):
            await agent.chat(f"queue-user-{user}", "chat", question.content)
        report = await worker.run_once(block_ms=None, hold=True)
        growth.calls += report.calls
        growth.lengths.append(int(await client.xlen(queue)))
        info = await client.xpending(queue, "facts") if growth.lengths[-1] else {"pending": 0}
        growth.pending.append(int(info["pending"]))
        growth.dead.append(int(await client.hlen(dead)))
    for key in (queue, dead):
        size = int(await client.execute_command("MEMORY", "USAGE", key, "SAMPLES", "0") or 0)
        if key == queue:
            growth.queue_bytes = size
        else:
            growth.dead_bytes = size
    return growth
