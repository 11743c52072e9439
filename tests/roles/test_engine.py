"""The turn engine and its modes as parts: every mode over either backend, per-call usage that never mixes
users, a bounded ledger, capabilities kept per endpoint."""

from __future__ import annotations

import asyncio
import json

import pytest

from brain import MemoryBackend, MemorySettings, Settings, local_runtime
from brain.llm.capabilities import Capabilities
from brain.llm.protocol import ChatMessage, Completion
from brain.llm.usage import CallRecord, Usage, UsageLedger, spending
from brain.testing import ScriptedLLM, tool_calls
from roles import Assistant, BlocksMode, BrainMode, TieredMode
from roles.fact_worker import FactWorker


def runtime_on_memory(llm: ScriptedLLM, mode: str, **memory: object) -> tuple[Settings, MemoryBackend]:
    settings = Settings.model_validate({"memory": {"mode": mode, **memory}})
    return settings, MemoryBackend(prefix=settings.redis.key_prefix)


@pytest.mark.parametrize(
    ("mode", "strategy", "reply"),
    [
        ("brain", BrainMode, "Hello Ann."),
        ("tiered", TieredMode, tool_calls(("send_message", {"message": "Hello Ann."}))),
        ("blocks", BlocksMode, "Hello Ann."),
    ],
)
async def test_every_mode_runs_on_the_memory_backend(mode: str, strategy: type, reply: object) -> None:
    llm = ScriptedLLM([reply])  # type: ignore[list-item]
    settings, backend = runtime_on_memory(llm, mode)
    assistant = Assistant.for_runtime(local_runtime(llm, settings=settings, backend=backend))
    assert type(assistant.mode) is strategy
    assert await assistant.chat("ann", "c1", "Hi, I am Ann.") == "Hello Ann."
    memory = await assistant.memory_of("ann", "c1")
    assert [m.content for m in memory.history] == ["Hi, I am Ann.", "Hello Ann."]
    [row] = await backend.usage.rows("ann")
    assert (row.chat_id, row.model, row.calls) == ("c1", llm.model, 1) and row.prompt_tokens > 0
    await assistant.forget_user("ann")
    assert await backend.user_leftovers("ann") == []


async def test_a_turns_usage_counts_its_summary_and_answer_and_never_another_users() -> None:
    words = " ".join(f"word{i}" for i in range(120))
    answers = ScriptedLLM([f"Answer {i}." for i in range(40)], model="answers")
    summaries = ScriptedLLM(["A short summary."] * 10, model="summaries")
    settings = Settings.model_validate({"llm": {"context_window": 2_000}})
    backend = MemoryBackend()
    assistant = Assistant(local_runtime(answers, settings=settings, backend=backend, memory_llm=summaries))
    await asyncio.gather(
        *(assistant.chat(user, "c", f"{user} says {words} {i}") for user in ("ann", "bob") for i in range(6))
    )
    spent = {user: await backend.usage.rows(user) for user in ("ann", "bob")}
    answered = {user: sum(r.calls for r in rows if r.model == answers.model) for user, rows in spent.items()}
    summarized = {
        user: sum(r.calls for r in rows if r.model == summaries.model) for user, rows in spent.items()
    }
    assert answered == {"ann": 6, "bob": 6}  # each user's calls, however the turns interleave
    assert sum(summarized.values()) == len(summaries.calls) > 0  # summaries on the reply path count too


async def test_the_fact_worker_counts_and_records_the_calls_of_each_batch() -> None:
    memory_llm = ScriptedLLM(
        [json.dumps({"facts": [{"text": "Ann likes tea", "category": "preferences"}]})], model="memory"
    )
    settings = Settings.model_validate({"memory": {"facts": {"enabled": True, "in_process_worker": False}}})
    backend = MemoryBackend()
    runtime = local_runtime(
        ScriptedLLM(["Noted."]), settings=settings, backend=backend, memory_llm=memory_llm
    )
    await Assistant(runtime).chat("ann", "c1", "I like tea.")
    report = await FactWorker(runtime).run_once()
    assert report.calls == 1 and report.failed == 0
    rows = {(r.chat_id, r.model): r.calls for r in await backend.usage.rows("ann")}
    assert rows == {("c1", "scripted"): 1, ("c1", "memory"): 1}  # the answer, the batch's extraction


def test_a_ledger_stays_bounded_and_its_totals_exact() -> None:
    ledger = UsageLedger(keep=100)
    record = CallRecord(
        kind="chat", model="m", usage=Usage(prompt_tokens=3, completion_tokens=2), latency_s=0.01
    )
    first = ledger.totals()
    with spending() as outer:
        with spending() as inner:
            for _ in range(5_000):
                ledger.record(record)
        ledger.record(record)
    assert len(ledger.records) == 100 and len(ledger) == 5_001
    assert (ledger.totals() - first).prompt_tokens == 15_003 and ledger.by_model()["m"].calls == 5_001
    assert (inner.calls, outer.calls) == (5_000, 5_001)
    ledger.record(record)  # outside every block: charged to none
    assert outer.calls == 5_001


async def test_spending_blocks_of_concurrent_tasks_stay_apart() -> None:
    llm = ScriptedLLM(["x"] * 30)

    async def work(n: int) -> int:
        with spending() as spent:
            for _ in range(n):
                await llm.complete([ChatMessage(role="user", content="hi")])
                await asyncio.sleep(0)
            return spent.calls

    assert await asyncio.gather(work(3), work(5), work(7)) == [3, 5, 7]


def test_capabilities_are_learnt_per_endpoint_and_shared_by_its_clients() -> None:
    shared = Capabilities("json_schema")
    shared.accepted("json_object")
    shared.accepted("json_schema")  # never raised again
    assert shared.structured_output == "json_object"
    other = Capabilities("json_schema")
    assert other.structured_output == "json_schema"


async def test_named_llms_of_one_endpoint_share_what_it_accepts(tmp_path: object) -> None:
    from brain.runtime import open_runtime

    settings = Settings.model_validate(
        {
            "llm": {"base_url": "http://127.0.0.1:9/v1", "model": "m1"},
            "llms": {
                "same": {"base_url": "http://127.0.0.1:9/v1", "model": "m1"},
                "other": {"base_url": "http://127.0.0.1:9/v1", "model": "m2"},
            },
        }
    )
    async with open_runtime(settings, redis=False) as runtime:
        main, same, other = runtime.llm, runtime.llms["same"], runtime.llms["other"]
        assert main.capabilities is same.capabilities  # type: ignore[attr-defined]
        assert main.capabilities is not other.capabilities  # type: ignore[attr-defined]


def test_a_completion_carries_its_own_usage() -> None:
    done = Completion(content="x", model="m", usage=Usage(prompt_tokens=1, completion_tokens=2))
    assert done.usage.total_tokens == 3


def test_memory_modes_come_from_one_table() -> None:
    from roles.modes import MODES

    assert set(MODES) == {"brain", "tiered", "blocks"}
    assert set(MemorySettings.model_fields["mode"].annotation.__args__) == set(MODES)  # type: ignore[union-attr]


async def test_a_message_beyond_the_context_window_is_refused_before_anything() -> None:
    from brain.errors import TooLargeError
    from tests.support.runtime import make_runtime

    llm = ScriptedLLM(["ok"])
    assistant = Assistant(make_runtime(llm, context_window=4_096))
    with pytest.raises(TooLargeError, match="context window of 4096"):
        await assistant.chat("u", "c", "paris " * 3_000)
    with pytest.raises(TooLargeError):
        await assistant.chat("u", "c", "巴黎" * 2_500)  # counted in tokens, not characters
    assert llm.calls == [] and (await assistant.memory_of("u", "c")).last_talk is None  # nothing kept
    assert await assistant.chat("u", "c", "paris " * 300) == "ok"  # what fits is answered
