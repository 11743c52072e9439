"""A model that answers fact extraction badly: tolerated when the JSON is only dressed up, tried a bounded
number of times when it is not JSON at all, then parked as a dead letter that can be re-queued and that
erasure removes; the logs name no user, chat or reply."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest
import redis.asyncio as aioredis

from brain import MemorySettings
from brain.errors import LLMError
from brain.keys import log_tag
from brain.runtime import Runtime
from brain.settings import FactSettings
from brain.storage.queue import FactQueue
from brain.testing import ScriptedLLM
from roles.assistant import Assistant
from roles.fact_worker import FactWorker
from tests.support.runtime import make_runtime

GARBAGE = "Sorry, I cannot do that. <html>the user said they like 猫</html>"


def facts_on(max_attempts: int = 3) -> MemorySettings:
    return MemorySettings(
        facts=FactSettings(enabled=True, reclaim_seconds=0.2, batch_turns=50, max_attempts=max_attempts)
    )


def extracted(*texts: str) -> str:
    return json.dumps({"facts": [{"text": t, "category": "preferences"} for t in texts]})


def runtime_with(client: aioredis.Redis, memory_llm: ScriptedLLM, max_attempts: int = 3) -> Runtime:
    answers = ScriptedLLM([f"ok {i}" for i in range(5)])
    return make_runtime(answers, client=client, memory_settings=facts_on(max_attempts), memory_llm=memory_llm)


def queue_of(runtime: Runtime) -> FactQueue:
    assert runtime.tiers is not None
    return runtime.tiers.fact_queue


async def retried(worker: FactWorker) -> tuple[int, int, int]:
    """(calls, failed, parked) of a run once the failed entries can be reclaimed."""
    await asyncio.sleep(0.25)  # past reclaim_seconds
    report = await worker.run_once(block_ms=None)
    return report.calls, report.failed, report.parked


async def test_a_fenced_reply_with_a_trailing_comma_is_applied_in_one_call(
    redis_client: aioredis.Redis,
) -> None:
    fenced = 'Here you go:\n```json\n{"facts": [{"text": "Likes jazz", "category": "preferences",},]}\n```'
    memory_llm = ScriptedLLM([fenced])
    runtime = runtime_with(redis_client, memory_llm)
    await Assistant(runtime).chat("fa", "c", "I like jazz")
    report = await FactWorker(runtime).run_once(block_ms=None)
    assert (report.calls, report.failed, report.parked, report.turns) == (1, 0, 0, 2)
    assert runtime.tiers is not None
    assert [f.text for f in await runtime.tiers.facts.all("fa")] == ["Likes jazz"]
    queue = queue_of(runtime)
    assert (await queue.pending(), await queue.backlog(), await queue.dead()) == (0, 0, 0)
    memory_llm.assert_consumed()


async def test_a_garbage_reply_costs_max_attempts_calls_then_is_parked_and_can_be_requeued(
    redis_client: aioredis.Redis,
) -> None:
    memory_llm = ScriptedLLM([GARBAGE] * 3)  # a fourth call would fail the test: the script runs out
    runtime = runtime_with(redis_client, memory_llm)
    await Assistant(runtime).chat("gb", "c", "I like cats")
    worker, queue = FactWorker(runtime), queue_of(runtime)
    first = await worker.run_once(block_ms=None)
    assert (first.calls, first.failed, first.parked) == (1, 1, 0)
    assert await retried(worker) == (1, 1, 0)
    assert await retried(worker) == (1, 0, 1)
    assert len(memory_llm.calls) == 3
    (letter,) = await queue.parked()
    assert (letter.user_id, letter.chat_id, letter.upto, letter.attempts) == ("gb", "c", 2, 3)
    assert "no JSON in the reply: 'Sorry, I cannot do that. <html>the user said they like 猫" in letter.reason
    assert (await queue.pending(), await queue.backlog(), await queue.dead()) == (0, 0, 1)
    assert await retried(worker) == (0, 0, 0)  # parked: nobody asks the model again

    memory_llm.add(extracted("Likes cats"))
    assert await queue.requeue([letter.id]) == 1
    report = await worker.run_once(block_ms=None)
    assert (report.calls, report.failed, report.parked, report.turns) == (1, 0, 0, 2)
    assert runtime.tiers is not None
    assert [f.text for f in await runtime.tiers.facts.all("gb")] == ["Likes cats"]
    assert (await queue.pending(), await queue.backlog(), await queue.dead()) == (0, 0, 0)
    memory_llm.assert_consumed()


async def test_failures_to_reach_the_model_are_not_counted_and_success_forgets_the_tries(
    redis_client: aioredis.Redis,
) -> None:
    unreachable = LLMError("scripted: cannot reach the LLM endpoint (retries spent)")
    memory_llm = ScriptedLLM([GARBAGE, unreachable, unreachable, unreachable, extracted("Runs"), GARBAGE])
    runtime = runtime_with(redis_client, memory_llm, max_attempts=2)
    assistant, worker, queue = Assistant(runtime), FactWorker(runtime), queue_of(runtime)
    await assistant.chat("tr", "c", "I run")
    assert (await worker.run_once(block_ms=None)).failed == 1  # malformed: try 1 of 2
    for _ in range(3):
        assert (await retried(worker))[1:] == (1, 0)  # unreachable: not a try, however often
    assert len(memory_llm.calls) == 4
    assert await retried(worker) == (1, 0, 0)
    await assistant.chat("tr", "c", "I also swim")
    assert (await worker.run_once(block_ms=None)).failed == 1  # try 1 again, not 2: nothing parked
    assert await queue.dead() == 0
    memory_llm.assert_consumed()


async def test_erasure_removes_dead_letters(redis_client: aioredis.Redis) -> None:
    memory_llm = ScriptedLLM([GARBAGE] * 3)
    runtime = runtime_with(redis_client, memory_llm, max_attempts=1)
    assistant, worker, queue = Assistant(runtime), FactWorker(runtime), queue_of(runtime)
    for user, chat in (("er", "c1"), ("er", "c2"), ("kept", "c1")):
        await assistant.chat(user, chat, "my secret words")
    assert (await worker.run_once(block_ms=None)).parked == 3
    assert (await assistant.forget("er", "c1")).queued == 1
    assert sorted((d.user_id, d.chat_id) for d in await queue.parked()) == [("er", "c2"), ("kept", "c1")]
    assert (await assistant.forget_user("er")).queued == 1
    assert [(d.user_id, d.chat_id) for d in await queue.parked()] == [("kept", "c1")]


async def test_logs_name_neither_the_user_nor_the_chat_nor_the_reply(
    redis_client: aioredis.Redis, caplog: pytest.LogCaptureFixture
) -> None:
    memory_llm = ScriptedLLM([GARBAGE, LLMError("scripted: HTTP 500 from the LLM endpoint")])
    runtime = runtime_with(redis_client, memory_llm, max_attempts=1)
    await Assistant(runtime).chat("alice-secret", "chat-secret", "I like cats")
    await Assistant(runtime).chat("bob-secret", "chat-secret", "I like dogs")
    with caplog.at_level(logging.INFO, logger="brain.facts"):
        report = await FactWorker(runtime).run_once(block_ms=None)
    assert (report.parked, report.failed) == (1, 1)
    logged = caplog.text
    assert "secret" not in logged and "Sorry" not in logged and "猫" not in logged
    assert "HTTP 500" not in logged
    tags = {log_tag("alice-secret", "chat-secret"), log_tag("bob-secret", "chat-secret")}
    assert all(tag in logged for tag in tags)
    assert "parked as" in logged and "LLMError" in logged
