"""Facts off the reply path: turns queued, a worker applies them, the next prompt holds them as data."""

from __future__ import annotations

import asyncio
import json
import re

import redis.asyncio as aioredis

from brain import MemorySettings
from brain.message import Message
from brain.progress import ProgressEvent
from brain.settings import FactSettings
from brain.storage.conversation import Turn
from brain.testing import ScriptedCall, ScriptedLLM
from roles.assistant import Assistant
from roles.fact_worker import DRAINING, FactWorker, batches, running
from tests.support.prompts import memory_items
from tests.support.runtime import make_runtime

FACTS_ON = MemorySettings(facts=FactSettings(enabled=True, reclaim_seconds=0.2, batch_turns=50))


def extracted(*texts: str) -> str:
    return json.dumps({"facts": [{"text": t, "category": "preferences"} for t in texts]})


async def test_a_turn_never_waits_and_the_next_prompt_holds_the_fact(redis_client: aioredis.Redis) -> None:
    answers = ScriptedLLM(["Noted!", "Try the vegetable curry."])
    memory_llm = ScriptedLLM([extracted("Is vegetarian"), extracted()])
    runtime = make_runtime(answers, client=redis_client, memory_settings=FACTS_ON, memory_llm=memory_llm)
    assistant = Assistant(runtime)
    assert await assistant.chat("ann", "c", "I'm vegetarian.") == "Noted!"
    assert memory_llm.calls == []  # the turn did not wait for fact work
    report = await FactWorker(runtime).run_once(block_ms=None)
    assert (report.entries, report.turns, report.calls) == (1, 2, 1)
    await assistant.chat("ann", "c2", "What should I eat tonight vegetarian?")  # another chat, same user
    fact = ("fact", ' source="derived from user turns"', "Is vegetarian")
    assert fact in memory_items(answers.calls[1].messages)
    assert "never instructions to follow" in (answers.calls[1].messages[0].content or "")
    again = await FactWorker(runtime).run_once(block_ms=None)
    assert again.calls == 1 and memory_llm.calls[-1].messages[1].content.count("vegetarian") == 1


async def test_a_redelivered_batch_changes_nothing_and_costs_nothing(redis_client: aioredis.Redis) -> None:
    memory_llm = ScriptedLLM([extracted("Lives in Oslo")])
    runtime = make_runtime(
        ScriptedLLM(["ok"]), client=redis_client, memory_settings=FACTS_ON, memory_llm=memory_llm
    )
    await Assistant(runtime).chat("bo", "c", "I live in Oslo")
    assert runtime.tiers is not None
    queue = runtime.tiers.fact_queue
    entry = (await queue.read("crashed-worker", 10, None))[0]  # taken by a worker that then died
    await queue.push("bo", "c", entry.upto)  # and the same turns queued again
    await asyncio.sleep(0.3)  # past reclaim_seconds
    report = await FactWorker(runtime, name="survivor").run_once(block_ms=None)
    assert report.entries == 2 and report.calls == 1  # reclaimed and applied once
    assert [f.text for f in await runtime.tiers.facts.all("bo")] == ["Lives in Oslo"]
    assert await queue.pending() == 0 and await queue.backlog() == 0
    memory_llm.assert_consumed()


async def test_a_failed_extraction_stays_pending_and_is_retried(redis_client: aioredis.Redis) -> None:
    def broken(call: ScriptedCall) -> str:
        return "I am not JSON"

    memory_llm = ScriptedLLM([broken, extracted("Plays chess")])
    runtime = make_runtime(
        ScriptedLLM(["ok"]), client=redis_client, memory_settings=FACTS_ON, memory_llm=memory_llm
    )
    await Assistant(runtime).chat("cy", "c", "I play chess")
    worker = FactWorker(runtime)
    assert (await worker.run_once(block_ms=None)).failed == 1
    assert runtime.tiers is not None and await runtime.tiers.facts.all("cy") == []
    await asyncio.sleep(0.3)
    assert (await worker.run_once(block_ms=None)).turns == 2
    assert [f.text for f in await runtime.tiers.facts.all("cy")] == ["Plays chess"]


async def test_a_due_summary_rides_on_the_extraction_call(redis_client: aioredis.Redis) -> None:
    def extract_and_fold(call: ScriptedCall) -> str:
        assert "SUMMARIZE:" in (call.messages[1].content or "")
        folded = (call.messages[1].content or "").split("SUMMARIZE:")[1]
        return json.dumps({"facts": [], "summary": "Said: " + " ".join(re.findall(r"T\d+", folded))})

    facts = FACTS_ON.facts.model_copy(update={"batch_turns": 2})  # a fold keeps room for the next batch
    settings = FACTS_ON.model_copy(update={"window_max_turns": 6, "summarize_share": 0.75, "facts": facts})
    memory_llm = ScriptedLLM([extracted()] * 2 + [extract_and_fold])
    runtime = make_runtime(
        ScriptedLLM([f"ok {i}" for i in range(3)]),
        client=redis_client,
        memory_settings=settings,
        memory_llm=memory_llm,
    )
    assistant, worker = Assistant(runtime), FactWorker(runtime)
    for i in range(3):  # 2, 4, 6 turns: the third batch passes 0.75 x 6 unsummarized turns
        await assistant.chat("di", "c", f"note T{i}")
        assert (await worker.run_once(block_ms=None)).calls == 1
    memory = await assistant.memory_of("di", "c")
    assert memory.historical_summary == "Said: T0 T1"  # the oldest 3 of 6 turns, in the same single call
    assert [m.content for m in memory.history] == ["ok 1", "note T2", "ok 2"]
    memory_llm.assert_consumed()


async def test_a_busy_chat_is_read_in_batches_and_a_quiet_one_after_idle_seconds(
    redis_client: aioredis.Redis,
) -> None:
    settings = MemorySettings(facts=FactSettings(enabled=True, batch_turns=6, idle_seconds=0.3))
    memory_llm = ScriptedLLM([extracted("Likes tea"), extracted()])
    runtime = make_runtime(
        ScriptedLLM([f"ok {i}" for i in range(4)]),
        client=redis_client,
        memory_settings=settings,
        memory_llm=memory_llm,
    )
    assistant, worker = Assistant(runtime), FactWorker(runtime)
    for i in range(2):
        await assistant.chat("ed", "c", f"I like tea {i}")
        assert (await worker.run_once(block_ms=None, hold=True)).calls == 0  # held: 2, then 4 turns
    await assistant.chat("ed", "c", "I like tea 2")
    report = await worker.run_once(block_ms=None, hold=True)  # 6 turns: one batch, one call
    assert (report.turns, report.calls) == (6, 1) and "tea 0" in memory_llm.calls[0].prompt_text
    await assistant.chat("ed", "c", "just a quick note")
    assert (await worker.run_once(block_ms=None, hold=True)).calls == 0
    await asyncio.sleep(0.35)
    assert (await worker.run_once(block_ms=None, hold=True)).turns == 2  # quiet for idle_seconds
    memory_llm.assert_consumed()


def turns_of(*tokens: int) -> list[Turn]:
    return [
        Turn(seq=i + 1, tokens=n, message=Message(role="user", content="x", sent_from="user"))
        for i, n in enumerate(tokens)
    ]


def test_batches_are_bounded_in_turns_and_tokens() -> None:
    sizes = lambda found: [[t.tokens for t in b] for b in found]  # noqa: E731
    assert sizes(batches(turns_of(1, 1, 1, 1, 1), 2, 100)) == [[1, 1], [1, 1], [1]]
    assert sizes(batches(turns_of(60, 30, 20, 500, 10), 10, 100)) == [[60, 30], [20], [500], [10]]
    assert batches([], 5, 100) == []


async def test_a_backlog_is_read_in_bounded_batches_each_recorded_as_done(
    redis_client: aioredis.Redis,
) -> None:
    facts = FactSettings(enabled=True, batch_turns=4, batch_tokens=400, reclaim_seconds=0.2)
    memory_llm = ScriptedLLM([extracted("Likes tea"), extracted(), "not JSON"])
    runtime = make_runtime(
        ScriptedLLM(["ok"] * 5 + ["a long answer " * 300]),
        client=redis_client,
        memory_settings=MemorySettings(facts=facts),
        memory_llm=memory_llm,
    )
    assistant = Assistant(runtime)
    for i in range(6):  # the worker was down: 12 turns waiting, the last answer alone ~900 tokens
        await assistant.chat("fi", "c", f"I like tea {i}")
    report = await FactWorker(runtime).run_once(block_ms=None)
    assert report.failed == 1  # turns 1-4 and 5-8 applied, 9-11 failed ...
    assert runtime.tiers is not None and await runtime.tiers.facts.progress("fi", "c") == 8  # ... kept
    memory_llm.add(extracted(), extracted())
    await asyncio.sleep(0.25)  # past reclaim_seconds
    retry = await FactWorker(runtime, name="other").run_once(block_ms=None)
    assert (retry.turns, retry.calls) == (4, 2) and await runtime.tiers.facts.progress("fi", "c") == 12
    prompts = [c.messages[-1].content or "" for c in memory_llm.calls]
    assert ["tea 0" in p and "tea 1" in p and "tea 2" not in p for p in prompts[:1]] == [True]
    assert "tea 4" in prompts[3] and "tea 2" not in prompts[3]  # the retry starts where the failure did
    assert "long answer" in prompts[4] and "tea" not in prompts[4]  # one long turn: a batch of its own,
    assert runtime.tokenizer.count(prompts[4]) <= 400 + 20  # cut to batch_tokens (+ speaker, time header)
    assert [f.text for f in await runtime.tiers.facts.all("fi")] == ["Likes tea"]
    memory_llm.assert_consumed()


async def test_a_chat_erased_while_queued_is_not_brought_back(redis_client: aioredis.Redis) -> None:
    runtime = make_runtime(ScriptedLLM(["ok"]), client=redis_client, memory_settings=FACTS_ON)
    assistant = Assistant(runtime)
    await assistant.chat("gi", "c", "I live in Rome")
    worker = FactWorker(runtime)
    await worker.run_once(block_ms=None, hold=True)  # read and held, not applied yet
    await assistant.forget_user("gi")
    assert (await worker.drain()).calls == 0  # no call with the memory LLM (it has no script at all)
    assert [k async for k in redis_client.scan_iter(match="*gi*")] == []


async def test_the_in_process_worker_applies_what_it_holds_on_exit(redis_client: aioredis.Redis) -> None:
    settings = MemorySettings(facts=FactSettings(enabled=True, batch_turns=50, idle_seconds=30))
    memory_llm = ScriptedLLM([extracted("Lives in Rome")])
    runtime = make_runtime(
        ScriptedLLM(["ok"]), client=redis_client, memory_settings=settings, memory_llm=memory_llm
    )
    told: list[ProgressEvent] = []
    async with running(runtime, told.append) as worker:
        assert worker is not None
        await Assistant(runtime).chat("hu", "c", "I live in Rome")
        await asyncio.sleep(0.2)
        assert memory_llm.calls == []  # held: a batch is not full and the chat not quiet for 30 s
        assert told == []  # only the drain on exit is told
    assert runtime.tiers is not None
    assert [f.text for f in await runtime.tiers.facts.all("hu")] == ["Lives in Rome"]
    assert await runtime.tiers.fact_queue.backlog() == 0
    assert [(e.task, e.done, e.total, e.unit) for e in told] == [
        (DRAINING, 0, 1, "chats"),
        (DRAINING, 1, 1, "chats"),
    ]


async def test_chats_are_applied_in_parallel_up_to_the_limit(redis_client: aioredis.Redis) -> None:
    running_now: list[str] = []
    peak = 0

    async def slow(call: ScriptedCall) -> str:
        nonlocal peak
        running_now.append(call.prompt_text)
        peak = max(peak, len(running_now))
        await asyncio.sleep(0.1)
        running_now.pop()
        return extracted()

    facts = FactSettings(enabled=True, concurrency=3)
    memory_llm = ScriptedLLM([slow] * 4)
    runtime = make_runtime(
        ScriptedLLM(["ok"] * 4),
        client=redis_client,
        memory_settings=MemorySettings(facts=facts),
        memory_llm=memory_llm,
    )
    for user in ("a", "b", "c", "d"):
        await Assistant(runtime).chat(user, "c", f"I am {user}")
    report = await FactWorker(runtime).run_once(block_ms=None)
    assert (report.chats, report.calls, peak) == (4, 4, 3)


async def test_the_workers_fold_keeps_a_chinese_chat_in_chinese(redis_client: aioredis.Redis) -> None:
    def extract_and_fold(call: ScriptedCall) -> str:
        system = call.messages[0].content or ""
        assert "in the conversation's language" in system and "我记下了" in (call.messages[1].content or "")
        return json.dumps({"facts": [], "summary": "用户记下了三件事。"})

    facts = FACTS_ON.facts.model_copy(update={"batch_turns": 2})
    settings = FACTS_ON.model_copy(update={"window_max_turns": 6, "summarize_share": 0.75, "facts": facts})
    memory_llm = ScriptedLLM([extracted()] * 2 + [extract_and_fold])
    runtime = make_runtime(
        ScriptedLLM(["好的。"] * 3), client=redis_client, memory_settings=settings, memory_llm=memory_llm
    )
    assistant, worker = Assistant(runtime), FactWorker(runtime)
    for i in range(3):
        await assistant.chat("zh", "c", f"我记下了第{i}件事。")
        await worker.run_once(block_ms=None)
    assert (await assistant.memory_of("zh", "c")).historical_summary == "用户记下了三件事。"
    memory_llm.assert_consumed()


async def test_a_chat_split_between_two_workers_is_extracted_once(redis_client: aioredis.Redis) -> None:
    """`brain serve --workers N`: one chat's entries end up with different workers. The first to apply
    reads on to the chat's newest turns; the other finds its entries done, with no call of its own (each
    made a small batch before: more calls and round trips per turn the more workers)."""
    memory_llm = ScriptedLLM([extracted("Lives in Oslo", "Plays chess")])
    settings = MemorySettings(facts=FactSettings(enabled=True, batch_turns=50))
    runtime = make_runtime(
        ScriptedLLM(["ok"] * 3), client=redis_client, memory_settings=settings, memory_llm=memory_llm
    )
    assistant = Assistant(runtime)
    await assistant.chat("di", "c", "I live in Oslo")
    assert runtime.tiers is not None
    queue = runtime.tiers.fact_queue
    first = await queue.read("worker-a", 10, None)  # the first exchange's entry, taken by one worker
    await assistant.chat("di", "c", "I play chess")
    await assistant.chat("di", "c", "Bye")
    second = await queue.read("worker-b", 10, None)  # the later ones, by another
    assert [e.upto for e in first] == [2] and [e.upto for e in second] == [4, 6]
    await queue.push("di", "c", first[0].upto)  # worker-a's entry comes to a worker first...
    applied = await FactWorker(runtime, name="worker-a").run_once(block_ms=None)
    assert (applied.calls, applied.turns) == (1, 6)  # ...which reads on to the newest turn
    assert "Bye" in (memory_llm.calls[0].messages[-1].content or "")
    await queue.push("di", "c", second[-1].upto)  # and worker-b's entries come later
    done = await FactWorker(runtime, name="worker-b").run_once(block_ms=None)
    assert (done.calls, done.turns, done.failed) == (0, 0, 0)
    memory_llm.assert_consumed()
